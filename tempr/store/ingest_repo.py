"""Writes for ingest. Everything for one batch runs inside the caller's transaction.

A batch is COPYed into a temporary table first; units, their tsvectors and lengths, and their
BM25 postings are then inserted by one statement. BM25 term frequencies come from the stored
tsvectors, once per batch. The links a batch adds (candidates among the bank's memories, then
the rows) are ``tempr.store.links_repo``'s.
"""

from __future__ import annotations

import functools
import hashlib
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, text

from config.errors import ValidationError
from tempr.providers.embedder import spaces
from tempr.store.bank_index import adopt, bank_search

_NS = uuid.UUID("6f1e3b1c-5d0a-4c53-9a53-7e6d1f0b2a10")


def unit_uuid(bank_id: str, fact_id: str) -> str:
    """Deterministic so the same fact in the same bank always has the same id, and led by the bank.

    A version-5 UUID of (bank, fact id) whose first four bytes are replaced by the first four of
    the bank id's SHA-256 (version and variant bits untouched). Every table keyed or indexed by a
    memory's id (``memory_units``, ``memory_links`` both ways, ``unit_entities``) then keeps a bank's
    rows together: a batch's new rows land in one stretch of each index instead of on a random page
    of every bank's. Beside the 100k bench bank, a 1,210-fact ingest wrote its link rows in 0.025
    against 0.086 s (BENCHMARKS.md, "Ids led by their bank"). Nothing derives an id of a stored memory
    again (causes are looked up by fact id), so memories written before keep theirs."""
    raw = bytearray(uuid.uuid5(_NS, f"{bank_id}\x00{fact_id}").bytes)
    raw[:4] = _bank_prefix(bank_id)
    return str(uuid.UUID(bytes=bytes(raw)))


@functools.lru_cache(maxsize=1024)
def _bank_prefix(bank_id: str) -> bytes:
    return hashlib.sha256(bank_id.encode()).digest()[:4]


def lock_bank(conn: Connection, bank_id: str, text_config: str, space: str) -> str:
    """Create the bank on first use and lock its row: one writer per bank keeps stats exact.

    A new bank records ``space``, the vector space of the rows about to be written; an existing
    one must already be in it (``ValidationError`` otherwise: the caller embedded with the wrong
    model, e.g. when the bank was created by another process between its check and this lock).
    """
    conn.execute(
        text(
            "INSERT INTO banks (id, text_config, embedder) VALUES (:b, CAST(:cfg AS regconfig), :e) "
            "ON CONFLICT (id) DO NOTHING"
        ),
        {"b": bank_id, "cfg": text_config, "e": space},
    )
    row = conn.execute(
        text("SELECT text_config::text, embedder FROM banks WHERE id = :b FOR UPDATE"), {"b": bank_id}
    ).one()
    held = row[1] or spaces.LEGACY
    if held != space:
        raise ValidationError(
            f"bank {bank_id!r} holds vectors of {held}; these facts were embedded as {space}: "
            "vectors of two embedders are never mixed in one bank",
            field="embedder",
        )
    adopt(conn, bank_id)  # an index built ahead of this write (a large import's)
    return str(row[0])


def existing_fact_ids(conn: Connection, bank_id: str, fact_ids: Sequence[str]) -> set[str]:
    rows = conn.execute(
        text("SELECT fact_id FROM memory_units WHERE bank_id = :b AND fact_id = ANY(:ids)"),
        {"b": bank_id, "ids": list(fact_ids)},
    )
    return {r[0] for r in rows}


def insert_documents(conn: Connection, bank_id: str, document_ids: Iterable[str]) -> None:
    ids = sorted(set(document_ids))
    if ids:
        conn.execute(
            text("INSERT INTO documents (bank_id, id) SELECT :b, unnest(CAST(:ids AS text[])) ON CONFLICT DO NOTHING"),
            {"b": bank_id, "ids": ids},
        )


def insert_chunks(conn: Connection, bank_id: str, chunks: Sequence[dict[str, Any]]) -> None:
    """New chunks, without a vector yet (``tempr.ingest.backfill`` embeds them once the facts are visible).

    One statement over three arrays: for one LoCoMo import's 1,125 chunks 15-18 ms, against 20 ms
    for an INSERT a row (``executemany``)."""
    if chunks:
        conn.execute(
            text(
                "INSERT INTO chunks (bank_id, id, document_id, text) "
                "SELECT :b, * FROM unnest(CAST(:ids AS text[]), CAST(:docs AS text[]), CAST(:texts AS text[])) "
                "ON CONFLICT DO NOTHING"
            ),
            {
                "b": bank_id,
                "ids": [c["id"] for c in chunks],
                "docs": [c["document_id"] for c in chunks],
                "texts": [c["text"] for c in chunks],
            },
        )


def banks_with_unembedded_chunks(conn: Connection) -> list[str]:
    rows = conn.execute(text("SELECT DISTINCT bank_id FROM chunks WHERE embedding IS NULL ORDER BY bank_id"))
    return [r[0] for r in rows]


def unembedded_chunks(
    conn: Connection, bank_id: str, *, after: str, limit: int, part: int = 0, parts: int = 1
) -> list[tuple[str, str]]:
    """(id, text) of up to ``limit`` chunks without a vector, in id order after ``after`` (keyset).

    ``part`` of ``parts``: only the chunks whose id hashes to it, so that several workers can each
    embed a disjoint share of one bank's chunks.
    """
    rows = conn.execute(
        text(
            "SELECT id, text FROM chunks WHERE bank_id = :b AND embedding IS NULL AND id > :after "
            "AND (:parts = 1 OR mod(abs(hashtext(id)::bigint), :parts) = :part) "
            "ORDER BY id LIMIT :n"
        ),
        {"b": bank_id, "after": after, "n": limit, "part": part, "parts": parts},
    )
    return [(r[0], r[1]) for r in rows]


def set_chunk_vectors(conn: Connection, bank_id: str, vectors: Sequence[tuple[str, Any]]) -> int:
    """Store vectors for chunks that still lack one (another part may have written it first).

    The bank moves to a new version first when any of them still lacks one: recall reads chunk
    vectors, so a cached answer (Redis) or row (``unit_cache``) from before is not served after.
    The bank's row is locked before the chunks', in the order an ingest takes them (``lock_bank``),
    so the two never deadlock; a write in progress on the bank makes this wait for it.
    """
    if not vectors:
        return 0
    ids = [i for i, _ in vectors]
    _new_version_if_missing(conn, bank_id, "chunks", "embedding", "text", ids)
    result = conn.execute(
        text("""
        UPDATE chunks c SET embedding = CAST(v.vec AS vector)
        FROM unnest(CAST(:ids AS text[]), CAST(:vecs AS text[])) AS v(id, vec)
        WHERE c.bank_id = :b AND c.id = v.id AND c.embedding IS NULL
        """),
        {"b": bank_id, "ids": ids, "vecs": [_vector_text(v) for _, v in vectors]},
    )
    return result.rowcount or 0


def banks_with_untokened_units(conn: Connection) -> list[str]:
    rows = conn.execute(text("SELECT DISTINCT bank_id FROM memory_units WHERE tokens IS NULL ORDER BY bank_id"))
    return [r[0] for r in rows]


def untokened_units(conn: Connection, bank_id: str, *, after: str, limit: int) -> list[tuple[str, str]]:
    """(id, text) of up to ``limit`` memories stored without token vectors, in id order after
    ``after`` (keyset; ``""`` for the first page)."""
    rows = conn.execute(
        text(
            "SELECT id::text, text FROM memory_units WHERE bank_id = :b AND tokens IS NULL "
            "AND (:after = '' OR id > CAST(NULLIF(:after, '') AS uuid)) ORDER BY id LIMIT :n"
        ),
        {"b": bank_id, "after": after, "n": limit},
    )
    return [(r[0], r[1]) for r in rows]


def set_unit_tokens(conn: Connection, bank_id: str, tokens: Sequence[tuple[str, bytes]]) -> int:
    """Store token vectors for memories that still lack them (``b""``: the text has none to keep).

    The bank moves to a new version first, as ``set_chunk_vectors`` does and for the same reasons
    (a cached answer or row from before is not served after; the bank's row is locked first)."""
    if not tokens:
        return 0
    ids = [i for i, _ in tokens]
    _new_version_if_missing(conn, bank_id, "memory_units", "tokens", "uuid", ids)
    result = conn.execute(
        text("""
        UPDATE memory_units m SET tokens = v.tok
        FROM unnest(CAST(:ids AS uuid[]), CAST(:toks AS bytea[])) AS v(id, tok)
        WHERE m.bank_id = :b AND m.id = v.id AND m.tokens IS NULL
        """),
        {"b": bank_id, "ids": ids, "toks": [t for _, t in tokens]},
    )
    return result.rowcount or 0


def _new_version_if_missing(
    conn: Connection, bank_id: str, table: str, column: str, id_type: str, ids: list[str]
) -> None:
    """Move the bank to a new version when any of ``ids`` in ``table`` still has ``column`` NULL (a
    backfill is about to fill it in). Table, column and type are this module's constants, never input."""
    conn.execute(
        text(f"""
        UPDATE banks SET version = nextval('bank_version_seq') WHERE id = :b
        AND EXISTS (SELECT 1 FROM {table} WHERE bank_id = :b AND id = ANY(CAST(:ids AS {id_type}[])) AND {column} IS NULL)
        """),
        {"b": bank_id, "ids": ids},
    )


def _vector_text(vector: Any) -> str | None:
    """pgvector's text form ('[0.1,0.2]'): one parameter type for an executemany whatever the driver."""
    if vector is None:
        return None
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


_BATCH_COLUMNS = (
    ("id", "uuid"),
    ("bank_id", "text"),
    ("fact_id", "text"),
    ("text", "text"),
    ("context", "text"),
    ("fact_type", "text"),
    ("embedding", "vector"),
    ("occurred_start", "timestamptz"),
    ("occurred_end", "timestamptz"),
    ("mentioned_at", "timestamptz"),
    ("proof_count", "int4"),
    ("tags", "text[]"),
    ("metadata", "jsonb"),
    ("document_id", "text"),
    ("chunk_id", "text"),
    ("tokens", "bytea"),
)
_COLS = ", ".join(c for c, _ in _BATCH_COLUMNS)


def stage_batch(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """COPY the batch (binary) into a temporary table that lives until the transaction ends.

    One COPY replaces a round trip per fact; inserting from the table then lets the server
    compute the tsvector and its length in the same statement.
    """
    from psycopg.types.json import Jsonb

    conn.execute(text("DROP TABLE IF EXISTS ingest_batch"))
    conn.execute(text(f"CREATE TEMP TABLE ingest_batch ({_batch_ddl()}) ON COMMIT DROP"))
    cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    with cur.copy(f"COPY ingest_batch ({_COLS}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([t for _, t in _BATCH_COLUMNS])
        for r in rows:
            copy.write_row(
                [
                    uuid.UUID(str(r["id"])) if c == "id" else Jsonb(r[c]) if c == "metadata" else r[c]
                    for c, _ in _BATCH_COLUMNS
                ]
            )


def _batch_ddl() -> str:
    return ", ".join(f"{c} {t}" for c, t in _BATCH_COLUMNS) + ", event_date timestamptz"


def insert_units(conn: Connection, bank_id: str, text_config: str, *, ann_indexed: bool) -> list[str]:
    """Insert the staged batch, its BM25 postings and statistics; return the ids actually inserted
    (a concurrent writer may have won).

    ``ann_indexed``: whether the rows enter the shared HNSW index (``enter_ann_index``). One
    statement does it all, so a memory, its postings and the bank's statistics (N, total length;
    per term df, largest tf, shortest memory; and the bank's version, bumped even when nothing was
    new) become visible together. Each tsvector is split into its lexemes once (``lex``): that one
    split gives the memory's length, its postings and the terms' statistics, where three statements
    split it three times and looked the new rows up again by id (1,210 LoCoMo facts beside a 100k
    bank: 0.20 against 0.23 s with the statistics, BENCHMARKS.md "Temporal links no longer written,
    and BM25's statistics in the units' INSERT").
    ``max_tf`` and ``min_len`` bound what a term can add to any score (``tempr.core.bm25_bounds``);
    memories are never removed one by one, so the bounds only ever widen and stay valid. A batch that
    names one fact twice (allowed when both copies are equal: ``facts.check_batch``) is inserted once.
    """
    d_cols = ", ".join(f"d.{c}" for c, _ in _BATCH_COLUMNS)
    rows = conn.execute(
        text(f"""
        WITH docs AS (
            SELECT DISTINCT ON (b.id) b.*,
                   to_tsvector(CAST(:cfg AS regconfig), b.text || ' ' || coalesce(b.context, '')) AS sv
            FROM ingest_batch b ORDER BY b.id
        ), lex AS (
            SELECT d.id, u.lexeme, GREATEST(cardinality(u.positions), 1) AS tf FROM docs d, unnest(d.sv) AS u
        ), lens AS (
            SELECT id, sum(tf)::int AS doc_len FROM lex GROUP BY id
        ), inserted AS (
            INSERT INTO memory_units ({_COLS}, search_vector, doc_len, ann_indexed)
            SELECT {d_cols}, d.sv, coalesce(l.doc_len, 0), :ann
            FROM docs d LEFT JOIN lens l ON l.id = d.id
            ON CONFLICT (bank_id, fact_id) DO NOTHING
            RETURNING id, doc_len
        ), new_lex AS (
            SELECT i.id, i.doc_len, x.lexeme, x.tf FROM inserted i JOIN lex x ON x.id = i.id
        ), postings AS (
            INSERT INTO bm25_postings (bank_id, term, unit_id, tf, doc_len)
            SELECT :b, lexeme, id, tf, doc_len FROM new_lex
        ), terms AS (
            INSERT INTO bm25_terms (bank_id, term, df, max_tf, min_len)
            SELECT :b, lexeme, count(*), max(tf), min(doc_len) FROM new_lex GROUP BY lexeme
            ON CONFLICT (bank_id, term) DO UPDATE SET df = bm25_terms.df + excluded.df,
                max_tf = GREATEST(bm25_terms.max_tf, excluded.max_tf),
                min_len = LEAST(bm25_terms.min_len, excluded.min_len)
        ), bank AS (
            UPDATE banks SET version = nextval('bank_version_seq'),
                unit_count = unit_count + (SELECT count(*) FROM inserted),
                total_len = total_len + (SELECT coalesce(sum(doc_len), 0) FROM inserted)
            WHERE id = :b
        )
        SELECT id::text FROM inserted
        """),
        {"b": bank_id, "cfg": text_config, "ann": ann_indexed},
    )
    return [r[0] for r in rows]


def enter_ann_index(conn: Connection, bank_id: str) -> bool:
    """Whether new rows go into the shared HNSW index (call under ``lock_bank``): only for a bank
    whose memories are all there already (written before migration 0014) and that has no index of
    its own yet, so that ``AND m.ann_indexed`` still sees the whole bank.

    Every other bank stays out of it: a small one is searched exactly, and a large one gets an index
    of its own (``bank_index``), searched exactly until it is ready. Putting a bank in the shared
    index as it crossed 5,000 memories cost that write an HNSW insert per memory it held (1.6-7.8 s
    at 5,100 memories beside the 100k bench bank), for entries its own index made dead weight
    seconds later (BENCHMARKS.md, "No bank enters the shared index").
    """
    state = bank_search(conn, bank_id)
    return state.shared_index and not state.own_index


def bank_has_units(conn: Connection, bank_id: str) -> bool:
    return bool(
        conn.execute(text("SELECT EXISTS (SELECT 1 FROM memory_units WHERE bank_id = :b)"), {"b": bank_id}).scalar()
    )


def delete_bank(conn: Connection, bank_id: str) -> bool:
    return bool(conn.execute(text("DELETE FROM banks WHERE id = :b"), {"b": bank_id}).rowcount)


def bank_version(conn: Connection, bank_id: str) -> int | None:
    row = conn.execute(text("SELECT version FROM banks WHERE id = :b"), {"b": bank_id}).first()
    return int(row[0]) if row else None
