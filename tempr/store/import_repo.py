"""Staged imports: chunks written by any process, published into the bank in one transaction.

Nothing reads ``staged_units`` except the publish step, so staged facts are invisible to
recall until ``publish`` moves them into ``memory_units`` in the same transaction that marks
the import published: the bank holds all of the file or none of it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Connection, text

from tempr.store import prelink_repo
from tempr.store.ingest_repo import _BATCH_COLUMNS

STAGED_COLUMNS = (
    ("import_id", "text"),
    ("chunk", "int4"),
    ("line", "int4"),
    *_BATCH_COLUMNS,
    ("chunk_text", "text"),
    ("entity_names", "text[]"),
    ("caused_by", "text[]"),
)
_STAGED = ", ".join(c for c, _ in STAGED_COLUMNS)


def create_import(conn: Connection, import_id: str, bank_id: str, *, total: int, chunks_total: int, space: str) -> None:
    """Register an import whose chunks are all embedded in ``space`` (the bank's, or a new bank's)."""
    conn.execute(
        text("INSERT INTO import_jobs (id, bank_id, total, chunks_total, embedder) VALUES (:i, :b, :t, :c, :e)"),
        {"i": import_id, "b": bank_id, "t": total, "c": chunks_total, "e": space},
    )


def get_import(conn: Connection, import_id: str, *, lock: bool = False) -> dict[str, Any] | None:
    """The import's row with ``done`` (facts staged) and ``chunks_done``."""
    row = conn.execute(
        text(
            "SELECT j.id, j.bank_id, j.status, j.total, j.chunks_total, j.error, j.report, j.embedder, "
            "extract(epoch FROM j.created_at) AS created_at, extract(epoch FROM j.updated_at) AS updated_at, "
            "(SELECT coalesce(sum(facts), 0) FROM import_chunks c WHERE c.import_id = j.id) AS done, "
            "(SELECT count(*) FROM import_chunks c WHERE c.import_id = j.id) AS chunks_done "
            "FROM import_jobs j WHERE j.id = :i" + (" FOR UPDATE OF j" if lock else "")
        ),
        {"i": import_id},
    ).first()
    if row is None:
        return None
    out = dict(row._mapping)
    for key in ("done", "chunks_done", "total", "chunks_total"):
        out[key] = int(out[key])
    for key in ("created_at", "updated_at"):
        out[key] = float(out[key])
    return out


def stage_chunk(conn: Connection, import_id: str, chunk: int, rows: Sequence[dict[str, Any]], facts: int) -> bool:
    """Replace the chunk's staged rows (a retry rewrites them) and record it done.

    Returns False, writing nothing, when the import is no longer open (published, failed,
    or cleaned up as abandoned): a late retry must not resurrect it. The job row is only share-locked
    here, so other chunks of the import stage at the same time; ``heartbeat`` follows the commit.
    """
    from psycopg.types.json import Jsonb

    status = conn.execute(
        text("SELECT status FROM import_jobs WHERE id = :i FOR SHARE"), {"i": import_id}
    ).scalar_one_or_none()
    if status != "staging":
        return False
    conn.execute(text("DELETE FROM staged_units WHERE import_id = :i AND chunk = :c"), {"i": import_id, "c": chunk})
    cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    with cur.copy(f"COPY staged_units ({_STAGED}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([t for _, t in STAGED_COLUMNS])
        for r in rows:
            values = {**r, "import_id": import_id, "chunk": chunk, "id": uuid.UUID(str(r["id"]))}
            values["metadata"] = Jsonb(r["metadata"])
            copy.write_row([values[c] for c, _ in STAGED_COLUMNS])
    conn.execute(
        text(
            "INSERT INTO import_chunks (import_id, chunk, facts) VALUES (:i, :c, :n) "
            "ON CONFLICT (import_id, chunk) DO UPDATE SET facts = excluded.facts"
        ),
        {"i": import_id, "c": chunk, "n": facts},
    )
    return True


def heartbeat(conn: Connection, import_id: str) -> None:
    """Record progress (``clean_abandoned`` fails an import idle too long), in a transaction of its
    own after a chunk's. Inside it, two chunks staged at once each held the job row ``FOR SHARE`` and
    each then waited for the other to update it: a deadlock, broken by PostgreSQL after a second and
    retried by Celery, 18 times in six runs of `tempr bench ingest` through two ingest processes
    (BENCHMARKS.md, "Chunks of one import staged at once")."""
    conn.execute(
        text("UPDATE import_jobs SET updated_at = now() WHERE id = :i AND status = 'staging'"), {"i": import_id}
    )


def staged_blocks(conn: Connection, import_id: str, block: int) -> Iterator[list[dict[str, Any]]]:
    """Staged rows in file order, ``block`` at a time (keyset pagination: memory stays bounded)."""
    from tempr.store.recall_repo import vector_from_send

    after = (-1, -1)
    # The vectors as ``vector_send`` bytes: read as pgvector's text, 1,210 staged rows took 200-240 ms,
    # most of a publish's reads (35-43 ms this way).
    cols = ", ".join(
        "vector_send(embedding) AS embedding" if c == "embedding" else c for c, _ in STAGED_COLUMNS if c != "import_id"
    )
    while True:
        result = conn.execute(
            text(
                f"SELECT {cols} FROM staged_units WHERE import_id = :i AND (chunk, line) > (:c, :l) "
                "ORDER BY chunk, line LIMIT :n"
            ),
            {"i": import_id, "c": after[0], "l": after[1], "n": block},
        )
        out = []
        for row in result:  # row by row: a row's bytes are dropped once decoded, never a block of both
            r = dict(row._mapping)
            r["id"] = str(r["id"])
            r["embedding"] = vector_from_send(r["embedding"])
            out.append(r)
        if not out:
            return
        yield out
        after = (out[-1]["chunk"], out[-1]["line"])


def add_staged_causal_links(conn: Connection, import_id: str) -> int:
    """Causal links of the whole import at once, after every unit it names exists."""
    result = conn.execute(
        text("""
        INSERT INTO memory_links (from_unit_id, to_unit_id, link_type, weight)
        SELECT s.id, c.id, 'causal', 1.0
        FROM staged_units s
        CROSS JOIN LATERAL unnest(s.caused_by) AS cause(fact_id)
        JOIN memory_units c ON c.bank_id = s.bank_id AND c.fact_id = cause.fact_id
        JOIN memory_units e ON e.id = s.id
        WHERE s.import_id = :i AND s.id <> c.id
        ON CONFLICT DO NOTHING
        """),
        {"i": import_id},
    )
    return result.rowcount or 0


def finish_import(
    conn: Connection, import_id: str, *, status: str, report: dict[str, Any] | None = None, error: str | None = None
) -> None:
    """Mark the import published or failed and drop its staged rows (in the caller's transaction)."""
    import json

    conn.execute(text("DELETE FROM staged_units WHERE import_id = :i"), {"i": import_id})
    conn.execute(
        text(
            "UPDATE import_jobs SET status = :s, report = CAST(:r AS jsonb), error = :e, updated_at = now() "
            "WHERE id = :i"
        ),
        {"i": import_id, "s": status, "r": json.dumps(report) if report is not None else None, "e": error},
    )


def clean_abandoned(conn: Connection, *, idle_s: float) -> list[str]:
    """Fail imports nobody touched for ``idle_s`` seconds and drop their staged rows; return their ids."""
    ids = [
        r[0]
        for r in conn.execute(
            text(
                "SELECT id FROM import_jobs WHERE status IN ('staging', 'publishing') "
                "AND updated_at < now() - make_interval(secs => :s) FOR UPDATE SKIP LOCKED"
            ),
            {"s": idle_s},
        )
    ]
    for import_id in ids:
        finish_import(conn, import_id, status="failed", error="abandoned: no progress for too long")
        prelink_repo.drop(conn, import_id)
    return ids


def touch(conn: Connection, import_id: str, status: str) -> None:
    conn.execute(
        text("UPDATE import_jobs SET status = :s, updated_at = now() WHERE id = :i"), {"i": import_id, "s": status}
    )
