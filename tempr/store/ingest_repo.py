"""Writes for ingest. Everything for one batch runs inside the caller's transaction.

Links and BM25 statistics are computed in SQL next to the data: semantic
links by an HNSW k-NN per new unit, temporal links by a date-range scan,
term document frequencies from the stored tsvectors.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import Connection, bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.types import Text

from tempr.store.schema import EMBEDDING_DIM

_NS = uuid.UUID("6f1e3b1c-5d0a-4c53-9a53-7e6d1f0b2a10")


def unit_uuid(bank_id: str, fact_id: str) -> str:
    """Deterministic so the same fact in the same bank always has the same id."""
    return str(uuid.uuid5(_NS, f"{bank_id}\x00{fact_id}"))


def lock_bank(conn: Connection, bank_id: str, text_config: str) -> str:
    """Create the bank on first use and lock its row: one writer per bank keeps stats exact."""
    conn.execute(
        text("INSERT INTO banks (id, text_config) VALUES (:b, CAST(:cfg AS regconfig)) ON CONFLICT (id) DO NOTHING"),
        {"b": bank_id, "cfg": text_config},
    )
    row = conn.execute(text("SELECT text_config::text FROM banks WHERE id = :b FOR UPDATE"), {"b": bank_id}).one()
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
    if chunks:
        conn.execute(
            text(
                "INSERT INTO chunks (bank_id, id, document_id, text) VALUES (:b, :id, :document_id, :text) "
                "ON CONFLICT DO NOTHING"
            ),
            [{"b": bank_id, **c} for c in chunks],
        )


_INSERT_UNIT = text(
    """
    INSERT INTO memory_units (id, bank_id, fact_id, text, context, fact_type, embedding, occurred_start,
        occurred_end, mentioned_at, proof_count, tags, metadata, document_id, chunk_id, search_vector)
    VALUES (:id, :bank_id, :fact_id, :text, :context, :fact_type, :embedding, :occurred_start,
        :occurred_end, :mentioned_at, :proof_count, :tags, :metadata, :document_id, :chunk_id,
        to_tsvector(CAST(:cfg AS regconfig), :text || ' ' || coalesce(:context, '')))
    ON CONFLICT (bank_id, fact_id) DO NOTHING
    """
).bindparams(
    bindparam("embedding", type_=Vector(EMBEDDING_DIM)),
    bindparam("tags", type_=ARRAY(Text)),
    bindparam("metadata", type_=JSONB),
)


def insert_units(conn: Connection, rows: Sequence[dict[str, Any]], text_config: str) -> list[str]:
    """Insert memory units; return the ids actually inserted (a concurrent writer may have won)."""
    if not rows:
        return []
    conn.execute(_INSERT_UNIT, [{**r, "cfg": text_config} for r in rows])
    inserted = conn.execute(
        # created_at defaults to now(), the transaction's start: it marks the rows this batch wrote.
        text(
            "UPDATE memory_units SET doc_len = (SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0) "
            "FROM unnest(search_vector)) WHERE id = ANY(CAST(:ids AS uuid[])) AND created_at = now() RETURNING id::text"
        ),
        {"ids": [r["id"] for r in rows]},
    )
    return [r[0] for r in inserted]


def link_entities(conn: Connection, bank_id: str, unit_names: dict[str, list[str]]) -> int:
    """Upsert entity names (case-insensitive per bank) and attach them to their units."""
    pairs = [(unit, name.strip()) for unit, names in unit_names.items() for name in names if name.strip()]
    if not pairs:
        return 0
    names = sorted({n for _, n in pairs}, key=str.lower)
    conn.execute(
        text(
            "INSERT INTO entities (bank_id, canonical_name) SELECT :b, unnest(CAST(:names AS text[])) "
            "ON CONFLICT (bank_id, lower(canonical_name)) DO NOTHING"
        ),
        {"b": bank_id, "names": names},
    )
    result = conn.execute(
        text("""
        INSERT INTO unit_entities (unit_id, entity_id)
        SELECT p.unit_id, e.id
        FROM unnest(CAST(:units AS uuid[]), CAST(:names AS text[])) AS p(unit_id, name)
        JOIN entities e ON e.bank_id = :b AND lower(e.canonical_name) = lower(p.name)
        ON CONFLICT DO NOTHING
        """),
        {"b": bank_id, "units": [u for u, _ in pairs], "names": [n for _, n in pairs]},
    )
    return result.rowcount or 0


def add_semantic_links(conn: Connection, bank_id: str, unit_ids: Sequence[str], *, threshold: float, top_k: int) -> int:
    """Each new unit links to its k nearest neighbours in the bank with cosine >= threshold."""
    if not unit_ids or top_k <= 0:
        return 0
    conn.execute(text("SET LOCAL hnsw.ef_search = 100"))
    result = conn.execute(
        text("""
        INSERT INTO memory_links (from_unit_id, to_unit_id, link_type, weight)
        SELECT n.id, nb.id, 'semantic', LEAST(1.0, 1.0 - nb.dist)
        FROM memory_units n
        CROSS JOIN LATERAL (
            SELECT m.id, m.embedding <=> n.embedding AS dist
            FROM memory_units m
            WHERE m.bank_id = :b AND m.id <> n.id
            ORDER BY m.embedding <=> n.embedding
            LIMIT :k
        ) nb
        WHERE n.id = ANY(CAST(:ids AS uuid[])) AND nb.dist <= 1.0 - :threshold
        ON CONFLICT DO NOTHING
        """),
        {"b": bank_id, "ids": list(unit_ids), "k": top_k, "threshold": threshold},
    )
    return result.rowcount or 0


def add_temporal_links(
    conn: Connection, bank_id: str, unit_ids: Sequence[str], *, window_hours: float, top_k: int
) -> int:
    """Link each new dated unit to its nearest-in-time neighbours within the window.

    weight = 1 - |dt| / window, so facts of the same moment link at 1.0.
    """
    if not unit_ids or top_k <= 0:
        return 0
    result = conn.execute(
        text("""
        INSERT INTO memory_links (from_unit_id, to_unit_id, link_type, weight)
        SELECT n.id, nb.id, 'temporal', GREATEST(0.0, 1.0 - nb.dh / :window)
        FROM memory_units n
        CROSS JOIN LATERAL (
            SELECT m.id, abs(extract(epoch FROM m.event_date - n.event_date)) / 3600.0 AS dh
            FROM memory_units m
            WHERE m.bank_id = :b AND m.id <> n.id
              AND m.event_date BETWEEN n.event_date - make_interval(secs => :window * 3600)
                                   AND n.event_date + make_interval(secs => :window * 3600)
            ORDER BY abs(extract(epoch FROM m.event_date - n.event_date)), m.id
            LIMIT :k
        ) nb
        WHERE n.id = ANY(CAST(:ids AS uuid[])) AND n.event_date IS NOT NULL
        ON CONFLICT DO NOTHING
        """),
        {"b": bank_id, "ids": list(unit_ids), "k": top_k, "window": window_hours},
    )
    return result.rowcount or 0


def add_causal_links(conn: Connection, pairs: Sequence[tuple[str, str]]) -> int:
    """(effect unit, cause unit) pairs from ``caused_by``; weight 1.0."""
    if not pairs:
        return 0
    result = conn.execute(
        text("""
        INSERT INTO memory_links (from_unit_id, to_unit_id, link_type, weight)
        SELECT e, c, 'causal', 1.0 FROM unnest(CAST(:effects AS uuid[]), CAST(:causes AS uuid[])) AS p(e, c)
        WHERE e <> c
        ON CONFLICT DO NOTHING
        """),
        {"effects": [e for e, _ in pairs], "causes": [c for _, c in pairs]},
    )
    return result.rowcount or 0


def update_bank_stats(conn: Connection, bank_id: str, unit_ids: Sequence[str]) -> None:
    """BM25 statistics (N, total length, per-term document frequency) and the bank version."""
    ids = list(unit_ids)
    if ids:
        conn.execute(
            text("""
            INSERT INTO bm25_terms (bank_id, term, df)
            SELECT :b, u.lexeme, count(*)
            FROM memory_units m, unnest(m.search_vector) AS u
            WHERE m.id = ANY(CAST(:ids AS uuid[]))
            GROUP BY u.lexeme
            ON CONFLICT (bank_id, term) DO UPDATE SET df = bm25_terms.df + excluded.df
            """),
            {"b": bank_id, "ids": ids},
        )
    conn.execute(
        text("""
        UPDATE banks SET version = nextval('bank_version_seq'),
            unit_count = unit_count + (SELECT count(*) FROM memory_units WHERE id = ANY(CAST(:ids AS uuid[]))),
            total_len = total_len + (SELECT coalesce(sum(doc_len), 0) FROM memory_units WHERE id = ANY(CAST(:ids AS uuid[])))
        WHERE id = :b
        """),
        {"b": bank_id, "ids": ids},
    )


def delete_bank(conn: Connection, bank_id: str) -> bool:
    return bool(conn.execute(text("DELETE FROM banks WHERE id = :b"), {"b": bank_id}).rowcount)


def bank_version(conn: Connection, bank_id: str) -> int | None:
    row = conn.execute(text("SELECT version FROM banks WHERE id = :b"), {"b": bank_id}).first()
    return int(row[0]) if row else None
