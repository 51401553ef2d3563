"""Links written by ingest: candidates among the bank's memories, then the link rows themselves.

Semantic and temporal links to facts the bank already holds come from one query per link type
(an HNSW k-NN or a date-range scan per staged fact) or, for a small bank, from its vectors read
once and compared in memory (``tempr.ingest.links.nearest_among``). Links among a batch are
computed in memory by ``tempr.ingest.links``; this module only reads candidates and writes rows,
inside the caller's transaction.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, text

from tempr.store.bank_index import bank_clause, bank_search, build_memory
from tempr.store.binary_rows import link_copy_chunks
from tempr.store.recall_filters import set_ann_scan
from tempr.store.recall_repo import vectors_from_send
from tempr.store.schema import ANN_INDEX_MIN_UNITS, EMBEDDING_DIM

Candidates = dict[str, list[tuple[float, str, float]]]


@contextmanager
def sorting_off(conn: Connection) -> Iterator[None]:
    """No sort nodes for the statements in the block: an index that delivers the order is the only plan.
    (Blocks nest: the setting before the block is restored after it.)"""
    before = conn.execute(
        text("SELECT current_setting('enable_sort'), set_config('enable_sort', 'off', true)")
    ).scalar()
    try:
        yield
    finally:
        conn.execute(text("SELECT set_config('enable_sort', :v, true)"), {"v": before})


# The two link queries run once per staged fact, so their plans must not depend on statistics:
# a bank that grew since the last ANALYZE (or inside a publish's own transaction, which
# autovacuum never sees) looks like one row to the planner, which then read every memory of
# the bank for each staged fact (2,000 facts into a 6,000-memory bank: 4.6 s instead of 0.55 s;
# quadratic beyond). Each query is written so that the plan wanted is the only one without a
# sort, and sorting is switched off while it runs; no ANALYZE (whose lock a long publish would
# hold against every other import).


LINK_EXACT_MAX_UNITS = ANN_INDEX_MIN_UNITS
"""Up to this size a bank's links are found exactly: its vectors read once per batch (about 10 us a
memory: 4,750 in 45-60 ms) and compared in one matrix product (``tempr.ingest.links.nearest_among``).
The HNSW walk costs about 0.3 ms a new fact whatever the size, so a small batch into a large bank
is cheaper through the index. (A k-NN query per fact, the exact path before, cost about 0.2 us per
memory per fact: 2,000 facts into a 6,000-memory bank took 5.8 s.) The same number decides which
banks get an index of their own (``bank_index``); until theirs is ready they are searched exactly."""


LINK_EF_SEARCH = 64
"""The HNSW walk's breadth for the link k-NN (k = 10). Measured for 2,000 new facts against a
300,000-fact bank: ef 100 took 4.4-4.5 s, 64 took 2.7-3.0 s and found 98.4 % of the same links
(40: 2.4-2.6 s, 95.8 %). Links are approximate either way; ingest runs this once per fact."""


def exact_link_search(conn: Connection, bank_id: str) -> bool:
    """Whether new facts are linked to the bank's memories by an exact search (``bank_vector_pages`` and
    one matrix product per page) rather than an HNSW index (``existing_semantic_candidates``): for a
    small bank, and for one that no HNSW index holds yet (its own is being built)."""
    state = bank_search(conn, bank_id)
    return state.exact or (not state.own_index and state.size <= LINK_EXACT_MAX_UNITS)


def bank_vector_pages(conn: Connection, bank_id: str, page: int = 128) -> Iterator[tuple[list[str], Any]]:
    """Every memory of a (small) bank, ``page`` at a time: ids and their vectors as a float32 matrix.

    Streamed (a server-side cursor), so an import holds one page beside its chunk, never the bank;
    read as ``vector_send``'s bytes (``recall_repo.vectors_from_send``).
    """
    sql = text("SELECT id::text, vector_send(embedding) FROM memory_units WHERE bank_id = :b")
    result = conn.execute(sql, {"b": bank_id}, execution_options={"stream_results": True, "max_row_buffer": page})
    for rows in result.partitions(page):
        yield [r[0] for r in rows], vectors_from_send([r[1] for r in rows])


def existing_semantic_candidates(conn: Connection, bank_id: str, *, threshold: float, top_k: int) -> Candidates:
    """For each staged unit, its k nearest units already in a large bank (cosine >= threshold), in one
    query through the bank's own HNSW index when it has one (``bank_index``), else (a bank written
    before migration 0014) the shared index with the iterative scan so that other banks' vectors in
    it do not starve the walk. A bank searched exactly is not asked here (``exact_link_search``):
    its vectors are read once and compared in memory.

    Run before the batch is inserted, so the bank holds only earlier facts; links among the
    batch itself are computed in memory (``tempr.ingest.links``).
    """
    set_ann_scan(conn, max(top_k, LINK_EF_SEARCH))
    index = bank_clause(bank_id) if bank_search(conn, bank_id).own_index else "m.ann_indexed"
    with sorting_off(conn):
        rows = conn.execute(
            text(f"""
            SELECT n.id::text, nb.id::text, nb.dist
            FROM ingest_batch n
            CROSS JOIN LATERAL (
                SELECT m.id, m.embedding <=> n.embedding AS dist
                FROM memory_units m
                WHERE m.bank_id = :b AND {index}
                ORDER BY m.embedding <=> n.embedding
                LIMIT :k
            ) nb
            WHERE nb.dist <= 1.0 - :threshold
            """),
            {"b": bank_id, "k": top_k, "threshold": threshold},
        ).all()
    out: Candidates = {}
    for unit, other, dist in rows:
        out.setdefault(unit, []).append((float(dist), other, min(1.0, 1.0 - float(dist))))
    return out


BULK_PAGE = 2_000
"""Memories linked per statement of ``bulk_semantic_links``."""


def bulk_semantic_links(
    conn: Connection, bank_id: str, *, threshold: float, top_k: int, progress: Callable[[int], None] | None = None
) -> int:
    """Each memory of the bank gets its ``top_k`` nearest other memories of the bank (cosine >=
    threshold) as semantic links: for a bank whose memories this transaction wrote without any HNSW
    index (a bulk publish, ``bank_index.publishes_in_bulk``). Returns the links written.

    The bank's vectors are copied into a table of this transaction's own and given an HNSW index in
    one build (no other bank's writes wait for it), then walked once per memory with
    ``LINK_EF_SEARCH``, ``BULK_PAGE`` memories a statement in id order; the table is dropped before
    the commit. Each memory links among every memory of the import, where a publish block
    by block links a memory among those written before it and in its block; the count per memory
    (at most ``top_k``) is the same."""
    if top_k <= 0:
        return 0
    table = "bulk_vectors_" + hashlib.sha256(bank_id.encode()).hexdigest()[:24]
    # Created inside this transaction, no other session sees it, and it goes with a rollback.
    index_vectors(conn, table, "SELECT id, embedding FROM memory_units WHERE bank_id = :b", {"b": bank_id})
    next_page = text(f"SELECT id::text FROM {table} WHERE id > CAST(:after AS uuid) ORDER BY id LIMIT :n")
    after, written = "00000000-0000-0000-0000-000000000000", 0
    with sorting_off(conn):
        while ids := [r[0] for r in conn.execute(next_page, {"after": after, "n": BULK_PAGE})]:
            written += copy_new_links(conn, "semantic", nearest_in(conn, table, ids, threshold=threshold, top_k=top_k))
            if progress:
                progress(len(ids))
            after = ids[-1]
    conn.execute(text(f"DROP TABLE {table}"))
    return written


def index_vectors(conn: Connection, table: str, select: str, params: dict[str, Any]) -> int:
    """Create ``table`` (id, embedding) from ``select``, give it an HNSW index in one build, and return
    its rows: the vectors a bulk link pass walks (``bulk_semantic_links``, ``prelink_repo``).

    UNLOGGED, not TEMP: a temporary table lives in the session's few local buffers (8 MB by default,
    fixed once the session has used one) and its index is built by one process; at 100,000 vectors
    that took 48 s to build and 338 s to walk, against 26 s and 124 s through shared buffers. The
    memory for the build is set for the caller's transaction only."""
    conn.execute(text(f"CREATE UNLOGGED TABLE {table} (id uuid PRIMARY KEY, embedding vector({EMBEDDING_DIM}))"))
    size = conn.execute(text(f"INSERT INTO {table} {select}"), params).rowcount or 0
    conn.execute(text(f"SET LOCAL maintenance_work_mem = '{build_memory(size)}'"))
    conn.execute(text(f"CREATE INDEX ON {table} USING hnsw (embedding vector_cosine_ops)"))
    return size


def nearest_in(
    conn: Connection, table: str, ids: Sequence[str], *, threshold: float, top_k: int
) -> list[tuple[str, str, float]]:
    """(memory, neighbour, weight): each of ``ids``' ``top_k`` nearest other rows of ``table`` (id,
    embedding, with an HNSW index) with cosine >= threshold, walked with ``LINK_EF_SEARCH``."""
    set_ann_scan(conn, max(top_k + 1, LINK_EF_SEARCH))
    nearest = text(f"""
        SELECT n.id::text, nb.id::text, nb.dist
        FROM {table} n
        CROSS JOIN LATERAL (
            SELECT m.id, m.embedding <=> n.embedding AS dist FROM {table} m
            ORDER BY m.embedding <=> n.embedding
            LIMIT :k
        ) nb
        WHERE n.id = ANY(CAST(:ids AS uuid[])) AND nb.id <> n.id AND nb.dist <= 1.0 - :threshold""")
    with sorting_off(conn):
        rows = conn.execute(nearest, {"ids": list(ids), "k": top_k + 1, "threshold": threshold}).all()
    near: dict[str, list[tuple[float, str]]] = {}
    for unit, other, dist in rows:
        near.setdefault(unit, []).append((float(dist), other))
    return [
        (unit, other, min(1.0, 1.0 - dist))
        for unit, cands in near.items()
        for dist, other in heapq.nsmallest(top_k, cands)
    ]


def existing_temporal_candidates(conn: Connection, bank_id: str, *, window_hours: float, top_k: int) -> Candidates:
    """For each dated staged unit, its k nearest-in-time units already in the bank within the window.

    Read as the k latest at or before its date and the k earliest after it (with ties), each
    straight off the (bank_id, event_date) index; the k nearest of those are kept here, ties
    by id, exactly as one ``ORDER BY |distance|, id LIMIT k`` would.
    """
    conn.execute(text("UPDATE ingest_batch SET event_date = COALESCE(occurred_start, occurred_end, mentioned_at)"))
    side = """
            SELECT m.id, m.event_date FROM memory_units m
            WHERE m.bank_id = :b AND m.event_date {cmp} n.event_date
              AND m.event_date BETWEEN n.event_date - make_interval(secs => :window * 3600)
                                   AND n.event_date + make_interval(secs => :window * 3600)
            ORDER BY m.event_date {direction} FETCH FIRST :k ROWS WITH TIES"""
    with sorting_off(conn):
        rows = conn.execute(
            text(f"""
            SELECT n.id::text, nb.id::text, abs(extract(epoch FROM nb.event_date - n.event_date)) / 3600.0
            FROM ingest_batch n
            CROSS JOIN LATERAL (
                ({side.format(cmp="<=", direction="DESC")})
                UNION ALL
                ({side.format(cmp=">", direction="ASC")})
            ) nb
            WHERE n.event_date IS NOT NULL
            """),
            {"b": bank_id, "k": top_k, "window": window_hours},
        ).all()
    near: dict[str, list[tuple[float, str]]] = {}
    for unit, other, dh in rows:
        near.setdefault(unit, []).append((float(dh), other))
    return {
        unit: [(dh, other, max(0.0, 1.0 - dh / window_hours)) for dh, other in heapq.nsmallest(top_k, found)]
        for unit, found in near.items()
    }


def insert_links(conn: Connection, link_type: str, links: Sequence[tuple[str, str, float]]) -> int:
    """(from, to, weight) links of one type, in one statement."""
    if not links:
        return 0
    result = conn.execute(
        text("""
        INSERT INTO memory_links (from_unit_id, to_unit_id, link_type, weight)
        SELECT f, t, :type, w
        FROM unnest(CAST(:f AS uuid[]), CAST(:t AS uuid[]), CAST(:w AS float8[])) AS p(f, t, w)
        ON CONFLICT DO NOTHING
        """),
        {
            "type": link_type,
            "f": [a for a, _, _ in links],
            "t": [b for _, b, _ in links],
            "w": [w for _, _, w in links],
        },
    )
    return result.rowcount or 0


def copy_new_links(conn: Connection, link_type: str, links: Sequence[tuple[str, str, float]]) -> int:
    """(from, to, weight) links of one type *from memories this transaction inserted*, by binary COPY.

    No such link can exist yet (a memory is inserted by one writer only: ``insert_units``' conflict
    rule), so the conflict check of ``insert_links`` is not needed; the pairs must be distinct
    (``tempr.ingest.links.merge_top_k`` lists each once). About 30 % faster than the ``unnest``
    INSERT: 15,365 links in 200-224 ms against 284-320 ms.
    """
    if not links:
        return 0
    cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    with cur.copy("COPY memory_links (from_unit_id, to_unit_id, link_type, weight) FROM STDIN (FORMAT BINARY)") as copy:
        for piece in link_copy_chunks(links, link_type):
            copy.write(piece)
    return len(links)


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


def add_causal_links(conn: Connection, bank_id: str, pairs: Sequence[tuple[str, str]]) -> int:
    """(effect unit id, cause *fact id*) pairs from ``caused_by``; weight 1.0.

    The cause is looked up by its fact id in the bank (as a staged import's causes are:
    ``import_repo.add_staged_causal_links``), not derived from it: a memory written before ids took
    their bank's prefix (``ingest_repo.unit_uuid``) keeps the id it was given then."""
    if not pairs:
        return 0
    result = conn.execute(
        text("""
        INSERT INTO memory_links (from_unit_id, to_unit_id, link_type, weight)
        SELECT p.e, m.id, 'causal', 1.0
        FROM unnest(CAST(:effects AS uuid[]), CAST(:causes AS text[])) AS p(e, cause)
        JOIN memory_units m ON m.bank_id = :b AND m.fact_id = p.cause
        WHERE p.e <> m.id
        ON CONFLICT DO NOTHING
        """),
        {"b": bank_id, "effects": [e for e, _ in pairs], "causes": [c for _, c in pairs]},
    )
    return result.rowcount or 0
