"""Reads for recall: every SQL statement the four strategies and the response need.

Each function takes a Connection and plain values and returns plain values
(``Hit``s, ids, dicts). Bank, fact-type and tag filters are part of each
query's WHERE clause, never applied after a LIMIT. The ANN queries set their
HNSW knobs with transaction-local settings, so call them inside the
connection's ordinary (non-autocommit) transaction.

The graph walk lives in ``recall_graph``, BM25 in ``keyword_repo`` and the filter
fragments in ``recall_filters``; all are re-exported here, the one import for callers.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import Connection, CursorResult, TextClause, bindparam, text

from tempr.core.timeutil import as_utc
from tempr.core.types import Hit, TimeWindow
from tempr.store.bank_index import bank_clause, bank_search
from tempr.store.binary_rows import binary_rows, float32_vector
from tempr.store.keyword_repo import bm25_top, keyword_search
from tempr.store.recall_filters import (
    EXACT_SEARCH_MAX_UNITS,
    Filters,
    set_ann_scan,
    tag_clause,
    valid_uuids,
    where_clause,
)
from tempr.store.recall_graph import graph_search
from tempr.store.schema import EMBEDDING_DIM

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Filters",
    "bank_version",
    "bm25_top",
    "chunk_vectors",
    "entity_unit_ids",
    "fetch_chunks",
    "fetch_units",
    "find_event_date",
    "graph_search",
    "keyword_search",
    "semantic_search",
    "tag_clause",
    "temporal_candidates",
]

# find_event_date reads a few ANN rows and re-sorts them exactly, as relaxed_order may misplace the first.
_EVENT_PROBE = 10


def _with_vector(sql: str, *, focus: bool = False) -> TextClause:
    """A statement whose ``:q`` is the query embedding (and ``:f`` the focus query's, with
    ``focus``), bound as pgvector values."""
    names = ("q", "f") if focus else ("q",)
    return text(sql).bindparams(*(bindparam(n, type_=Vector(EMBEDDING_DIM)) for n in names))


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def vector_from_send(raw: bytes) -> np.ndarray:
    """``vector_send``'s bytes as float32: a 2-byte dimension, 2 unused bytes, big-endian floats.

    The binary form is read wherever many vectors are: parsing pgvector's text form costs about
    50 us a vector."""
    import numpy as np  # here: the CLI's fleet path imports this module and no numpy

    return np.frombuffer(raw, dtype=">f4", offset=4).astype(np.float32)


def vectors_from_send(raws: Sequence[bytes]) -> np.ndarray:
    """Many ``vector_send`` values of one dimension as one float32 matrix, decoded in one call."""
    import numpy as np

    rows = np.frombuffer(b"".join(raws), dtype=">f4").reshape(len(raws), -1)
    return rows[:, 1:].astype(np.float32)  # each row's first 4 bytes: the header


def _vector(embedding: Sequence[float]) -> list[float]:
    return [float(x) for x in embedding]


def _nearest(
    conn: Connection,
    embedding: Sequence[float],
    filters: Filters,
    limit: int,
    *,
    out: str = "1 - s.dist",
    columns: str = "",
    where: str = "",
    types: bool = True,
    tail: str = "",
    params: dict[str, Any] | None = None,
) -> CursorResult[*tuple[Any, ...]]:
    """The one vector-search statement: the `limit` memories nearest the query that pass the
    filters (and ``where``), returned as ``id, <out>`` in exact distance order (ties by id).

    A bank with its own HNSW index (``bank_index``) is searched through it, its id written into
    the statement so the planner can match the index's predicate. A bank that no HNSW index
    holds (a small one, or a large one whose own index is still being built), and any bank of at
    most ``EXACT_SEARCH_MAX_UNITS`` memories, is searched exactly: its memories through the bank
    indexes, every distance computed (``+ 0`` keeps the planner off the HNSW index). A larger
    bank written before migration 0014, whose memories are all in the shared partial HNSW index
    (``ann_indexed``, migration 0008), lets the planner choose: the HNSW index with an
    iterative scan (a loose filter) or the bank/type/tag indexes plus an exact sort (a selective
    filter). The outer ORDER BY puts relaxed_order's rows back in exact order.
    ``columns`` adds inner columns the outer ``out`` may read as ``s.<name>``."""
    clause, bound = where_clause(filters, types=types)
    state = bank_search(conn, filters.bank_id)
    exact = state.exact or (not state.own_index and state.size <= EXACT_SEARCH_MAX_UNITS)
    if not exact:
        set_ann_scan(conn, limit)
    order = "(m.embedding <=> CAST(:q AS vector)) + 0" if exact else "m.embedding <=> CAST(:q AS vector)"
    extra = f", {columns}" if columns else ""
    index = f" AND {bank_clause(filters.bank_id)}" if state.own_index else " AND m.ann_indexed"
    cond = (f" AND {where}" if where else "") + ("" if exact else index)  # the index's predicate
    return conn.execute(
        _with_vector(f"""
        SELECT s.id::text, {out} FROM (
            SELECT m.id, m.embedding <=> CAST(:q AS vector) AS dist{extra} FROM memory_units m
            WHERE {clause}{cond}
            ORDER BY {order} LIMIT :limit
        ) s ORDER BY s.dist, s.id{tail}"""),
        {**bound, **(params or {}), "q": _vector(embedding), "limit": limit},
    )


def bank_size(conn: Connection, bank_id: str) -> int:
    """The bank's memory count (0 for an unknown bank), kept current by ingest."""
    row = conn.execute(text("SELECT unit_count FROM banks WHERE id = :b"), {"b": bank_id}).first()
    return int(row[0]) if row else 0


# --- semantic -----------------------------------------------------------------------------------


def semantic_search(conn: Connection, embedding: Sequence[float], filters: Filters, limit: int) -> list[Hit]:
    """The `limit` memories nearest the query by cosine similarity, best first."""
    if limit <= 0:
        return []
    return [Hit(r[0], float(r[1])) for r in _nearest(conn, embedding, filters, limit)]


# --- temporal -----------------------------------------------------------------------------------

# A memory's time span is [event_date, coalesce(occurred_end, event_date)], where event_date is
# coalesce(occurred_start, occurred_end, mentioned_at): so a mention date counts only when
# no occurrence date is known. The span overlaps [ws, we] exactly when it starts inside the
# window (a range scan of (bank_id, event_date)) or starts before it and ends at or after ws
# (a range scan of (bank_id, occurred_start, occurred_end)).
_OVERLAP = """((m.event_date >= :ws AND m.event_date <= :we)
           OR (m.occurred_start < :ws AND m.occurred_end >= :ws))"""


def temporal_candidates(
    conn: Connection, embedding: Sequence[float], window: TimeWindow, filters: Filters, limit: int
) -> list[tuple[str, datetime, float]]:
    """Memories whose dates overlap the window, the `limit` most similar to the query first.

    Selection is by relevance, not recency, so the best in-window memory is never crowded
    out by newer ones. Each row carries (id, the midpoint of the span's overlap with the
    window, cosine similarity).
    """
    if limit <= 0:
        return []
    rows = _nearest(
        conn,
        embedding,
        filters,
        limit,
        out="s.lo + (s.hi - s.lo) / 2, 1 - s.dist",
        columns="GREATEST(m.event_date, :ws) AS lo, LEAST(COALESCE(m.occurred_end, m.event_date), :we) AS hi",
        where=_OVERLAP,
        params={"ws": as_utc(window.start), "we": as_utc(window.end)},
    )
    return [(r[0], r[1], float(r[2])) for r in rows]


def find_event_date(
    conn: Connection, embedding: Sequence[float], filters: Filters, *, min_similarity: float = 0.45
) -> tuple[str, datetime] | None:
    """Resolve "before/after <event>": the dated memory most similar to the event text.

    Only bank and tag filters apply: the anchor is a date to measure from, so it may be a
    fact of a type the caller excluded from its results, but never one it may not see.
    """
    row = _nearest(
        conn,
        embedding,
        filters,
        _EVENT_PROBE,
        out="s.event_date, 1 - s.dist",
        columns="m.event_date",
        where="m.event_date IS NOT NULL",
        types=False,
        tail=" LIMIT 1",
    ).first()
    if row is None or float(row[2]) < min_similarity:
        return None
    return row[0], row[1]


# --- units, chunks, entities, bank ----------------------------------------------------------

_UNIT_COLUMNS = (
    "id",
    "fact_id",
    "text",
    "type",
    "context",
    "occurred_start",
    "occurred_end",
    "mentioned_at",
    "event_date",
    "document_id",
    "chunk_id",
    "tags",
    "metadata",
    "proof_count",
)


# Each unit's entity names, in the order callers rely on (case-insensitive, then exact), and its
# source chunk, each looked up by index per unit (a LATERAL subquery; ``OFFSET 0`` keeps the chunk's
# from being flattened into a join). Joined as tables, they were hashed whole: every entity and every
# chunk of every bank read for 300 candidates, 10.1 against 5.9 ms of server time beside a 10,000-fact
# bank, and growing with the tables, not with the candidates (BENCHMARKS.md, "The rank stage's rows").
_ENTITY_NAMES = """ LEFT JOIN LATERAL (
        SELECT array_agg(e.canonical_name ORDER BY lower(e.canonical_name), e.canonical_name) AS names
        FROM unit_entities ue JOIN entities e ON e.id = ue.entity_id
        WHERE ue.unit_id = m.id
    ) n ON true"""
_CHUNK = """ LEFT JOIN LATERAL (
        SELECT c.text, c.embedding FROM chunks c WHERE c.bank_id = m.bank_id AND c.id = m.chunk_id OFFSET 0
    ) c ON true"""
# The source chunk's text on the first row of each chunk only: a chunk is shared by many facts
# and may be long, so it crosses the wire once; fetch_units hands the one string to them all.
_FIRST_CHUNK_TEXT = "CASE WHEN row_number() OVER (PARTITION BY m.chunk_id) = 1 THEN c.text END"


def fetch_units(
    conn: Connection,
    ids: Sequence[str],
    *,
    with_entities: bool = True,
    embedding: Sequence[float] | None = None,
    with_chunks: bool = False,
    vectors: bool = False,
    focus: Sequence[float] | None = None,
    tokens: bool = False,
) -> dict[str, dict[str, Any]]:
    """id -> the memory's fields (``type`` is fact_type; dates are aware datetimes or None).

    Unknown ids are simply absent from the result. With ``with_entities`` each unit also has
    "entities": its entities' canonical names, sorted case-insensitively. With ``embedding``,
    "cosine": its exact cosine similarity to that vector (the learned ranker's feature; the
    semantic strategy only scores the memories it returned). With ``with_chunks``,
    "chunk_text": the text of its source chunk in its bank, None without one; with both,
    "chunk_cosine" too: that vector's cosine to the chunk's own vector (None without one). With
    ``vectors``, "vector": the stored vector as a float32 array, for ``tempr.store.unit_cache``
    (chunks' vectors: ``chunk_vectors``, once per chunk). With ``embedding`` and ``focus`` (the
    name-masked query's vector, ``tempr.core.query_focus``), "focus_cosine" too, and with chunks
    "focus_chunk_cosine". With ``tokens``, "tokens": its packed content-token vectors
    (``tempr.core.token_match``; None when it has none). One statement (one round trip) whatever
    the options.
    """
    wanted = valid_uuids(ids)
    if not wanted:
        return {}
    extra: list[str] = []
    params: dict[str, Any] = {"ids": wanted}
    join = ""
    if with_entities:
        join = _ENTITY_NAMES
        extra.append("n.names")
    focus = focus if embedding is not None else None
    if embedding is not None:
        extra.append("1 - (m.embedding <=> CAST(:q AS vector))")
        params["q"] = float32_vector(embedding)
    if focus is not None:
        extra.append("1 - (m.embedding <=> CAST(:f AS vector))")
        params["f"] = float32_vector(focus)
    if with_chunks:
        extra.append(_FIRST_CHUNK_TEXT)
        join += _CHUNK
        if embedding is not None:
            extra.append("1 - (c.embedding <=> CAST(:q AS vector))")
        if focus is not None:
            extra.append("1 - (c.embedding <=> CAST(:f AS vector))")
    if vectors:  # pgvector's binary form: its text form costs ~50 us a vector to parse
        extra.append("vector_send(m.embedding)")
    if tokens:
        extra.append("m.tokens")
    sql = f"""
        SELECT m.id::text, m.fact_id, m.text, m.fact_type, m.context, m.occurred_start, m.occurred_end,
               m.mentioned_at, m.event_date, m.document_id, m.chunk_id, m.tags, m.metadata, m.proof_count
               {"".join(f", {e}" for e in extra)}
        FROM memory_units m{join} WHERE m.id = ANY(CAST(:ids AS uuid[]))"""
    rows = binary_rows(conn, sql, params)
    width = len(_UNIT_COLUMNS)
    units: dict[str, dict[str, Any]] = {}
    chunk_texts: dict[str, str] = {}
    for r in rows:
        unit = dict(zip(_UNIT_COLUMNS, r[:width], strict=True))
        unit["tags"] = list(unit["tags"] or [])
        unit["metadata"] = dict(unit["metadata"] or {})
        more = iter(r[width:])
        if with_entities:
            unit["entities"] = list(next(more) or [])
        if embedding is not None:
            unit["cosine"] = float(next(more))
        if focus is not None:
            unit["focus_cosine"] = float(next(more))
        if with_chunks:
            chunk_text = next(more)
            if chunk_text is not None:
                chunk_texts[unit["chunk_id"]] = chunk_text
            if embedding is not None:
                unit["chunk_cosine"] = _optional_float(next(more))
            if focus is not None:
                unit["focus_chunk_cosine"] = _optional_float(next(more))
        if vectors:
            unit["vector"] = vector_from_send(next(more))
        if tokens:
            raw = next(more)
            unit["tokens"] = bytes(raw) if raw else None
        units[unit["id"]] = unit
    if with_chunks:
        for unit in units.values():
            unit["chunk_text"] = chunk_texts.get(unit["chunk_id"]) if unit["chunk_id"] else None
    return units


def chunk_vectors(conn: Connection, bank_id: str, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
    """chunk id -> its vector (float32) for the bank's chunks that have one, by the primary key (the
    row cache reads each chunk's vector once, not with every memory of the chunk)."""
    ids = list(dict.fromkeys(c for c in chunk_ids if c))
    if not ids:
        return {}
    rows = binary_rows(  # bytes, not hex text (binary_rows)
        conn,
        "SELECT id, vector_send(embedding) FROM chunks "
        "WHERE bank_id = :b AND id = ANY(CAST(:ids AS text[])) AND embedding IS NOT NULL",
        {"b": bank_id, "ids": ids},
    )
    return {r[0]: vector_from_send(r[1]) for r in rows}


def fetch_chunks(conn: Connection, bank_id: str, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """chunk id -> {"id", "text", "document_id"} for the chunks the bank holds."""
    ids = list(dict.fromkeys(c for c in chunk_ids if c))
    if not ids:
        return {}
    rows = conn.execute(
        text("SELECT id, text, document_id FROM chunks WHERE bank_id = :b AND id = ANY(CAST(:ids AS text[]))"),
        {"b": bank_id, "ids": ids},
    )
    return {r[0]: {"id": r[0], "text": r[1], "document_id": r[2]} for r in rows}


def bank_version(conn: Connection, bank_id: str) -> int | None:
    """The bank's version (changes on every write; cache keys use it), None for an unknown bank."""
    row = conn.execute(text("SELECT version FROM banks WHERE id = :b"), {"b": bank_id}).first()
    return int(row[0]) if row else None


def entity_unit_ids(conn: Connection, bank_id: str, names: Sequence[str]) -> list[str]:
    """Ids of the bank's memories linked to any of the named entities (names case-insensitive)."""
    lowered = sorted({n.strip().lower() for n in names if n and n.strip()})
    if not lowered:
        return []
    rows = conn.execute(
        text("""
        SELECT DISTINCT ue.unit_id::text FROM entities e JOIN unit_entities ue ON ue.entity_id = e.id
        WHERE e.bank_id = :b AND lower(e.canonical_name) = ANY(CAST(:names AS text[]))
        ORDER BY 1"""),
        {"b": bank_id, "names": lowered},
    )
    return [r[0] for r in rows]
