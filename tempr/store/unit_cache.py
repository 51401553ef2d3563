"""A read-through cache of the rows the learned ranker reads, in the process that reranks.

Why: the rerank step of a miss spent most of its time re-reading the same memory rows
(fields, entity names, source chunk text, both cosines) from PostgreSQL, ~16 ms of ~22 ms
at 300 candidates, although a bank's popular memories are asked for again and again.

Why it is safe: a memory row never changes after its insert, and every write to a bank (an
ingest, an import, a publish) moves ``banks.version`` to a new value of a global sequence, so
a key of (bank, version, memory) can never name stale data: a write makes every key of the
bank unreachable (the LRU drops them in time). Chunk vectors are kept apart, once per chunk,
under the same kind of key: the one field written after its memories is a chunk's vector, and
``ingest_repo.set_chunk_vectors`` moves the version too, so "this chunk has no vector" is kept
as well (with ``TEMPR_CHUNK_VECTORS=false`` no chunk ever has one).

The cosines are computed here, in float64 from unit-length float32 copies of the stored
vectors, clamped to [-1, 1] as pgvector does: ``fetch_units(embedding=...)``'s values to ~1e-6.
A row costs about 3-4 KB (its vector, its fields and chunk text) plus its packed token vectors
(about 0.4 KB a content word, ~4 KB for a LoCoMo fact) and a chunk vector 1.5 KB, so the default
10,000 of each hold ~100 MB at most per reranking process. Vectors cross the wire in
pgvector's binary form (``vector_send``): its text form costs ~50 us a vector to parse.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from sqlalchemy import Connection, Engine

from tempr.store import recall_repo

T = TypeVar("T")


@dataclass(frozen=True)
class _Entry:
    unit: dict[str, Any]  # fetch_units' row without the cosines
    fact: np.ndarray  # the memory's vector, unit length (float32: half the memory, ~1e-7 off)


class UnitCache:
    """At most ``capacity`` rows and as many chunk vectors, least recently used out first;
    thread-safe (a thread pool reranks several recalls at once). ``capacity`` 0 keeps nothing:
    every call reads the rows. ``observe(from_cache, from_postgres)`` is told each call's row
    counts (the fleet's metrics)."""

    def __init__(self, capacity: int, observe: Callable[[int, int], None] | None = None) -> None:
        self.capacity = max(0, capacity)
        self._observe = observe
        self._rows: OrderedDict[tuple[str, int, str], _Entry] = OrderedDict()
        self._chunks: OrderedDict[tuple[str, int, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._rows)

    def units(
        self,
        engine: Engine,
        bank_id: str,
        version: int,
        ids: Sequence[str],
        embedding: Sequence[float],
        focus: Sequence[float] | None = None,
    ) -> dict[str, dict[str, Any]]:
        """``fetch_units(conn, ids, with_entities=True, embedding=embedding, with_chunks=True, focus=focus,
        tokens=True)``,
        reading from PostgreSQL only the rows and chunk vectors not kept from an earlier call (no
        connection at all when every one is kept: a pool checkout costs a ping)."""
        wanted = list(dict.fromkeys(ids))
        rows = self._lookup(self._rows, bank_id, version, wanted)
        missing = [i for i in wanted if i not in rows]
        with self._lock:
            self.hits += len(rows)
            self.misses += len(missing)
        if self._observe is not None:
            self._observe(len(rows), len(missing))
        chunks: dict[str, np.ndarray] = {}
        with ExitStack() as stack:
            if missing:
                conn = stack.enter_context(engine.connect())
                fresh = _read(conn, missing)
                rows.update(fresh)
                self._keep(self._rows, bank_id, version, fresh)
            named = [cid for e in rows.values() if (cid := _chunk_of(e)) is not None]
            chunks = self._lookup(self._chunks, bank_id, version, named)
            unknown = [cid for cid in dict.fromkeys(named) if cid not in chunks]
            if unknown:
                if not missing:
                    conn = stack.enter_context(engine.connect())
                got = recall_repo.chunk_vectors(conn, bank_id, unknown)
                read = dict(zip(got, _unit_rows(list(got.values())), strict=True)) if got else {}
                read.update({cid: _NO_VECTOR for cid in unknown if cid not in read})
                chunks.update(read)
                self._keep(self._chunks, bank_id, version, read)
        vectors = {c: v for c, v in chunks.items() if v is not _NO_VECTOR}
        return _with_cosines(rows, vectors, wanted, embedding, focus)

    def _lookup(
        self, lru: OrderedDict[tuple[str, int, str], T], bank_id: str, version: int, keys: list[str]
    ) -> dict[str, T]:
        found: dict[str, T] = {}
        with self._lock:
            for k in keys:
                value = lru.get((bank_id, version, k))
                if value is not None:
                    lru.move_to_end((bank_id, version, k))
                    found[k] = value
        return found

    def _keep(self, lru: OrderedDict[tuple[str, int, str], T], bank_id: str, version: int, fresh: dict[str, T]) -> None:
        if not self.capacity:
            return
        with self._lock:
            for k, value in fresh.items():
                lru[(bank_id, version, k)] = value
            while len(lru) > self.capacity:
                lru.popitem(last=False)


_NO_VECTOR = np.empty(0, dtype=np.float32)
"""Kept for a chunk stored without a vector: a vector written later moves the bank's version."""


def _chunk_of(entry: _Entry) -> str | None:
    """The entry's chunk id if the bank holds that chunk (fetch_units found its text)."""
    unit = entry.unit
    return unit["chunk_id"] if unit["chunk_text"] is not None else None


def _read(conn: Connection, ids: Sequence[str]) -> dict[str, _Entry]:
    rows = recall_repo.fetch_units(conn, ids, with_entities=True, with_chunks=True, vectors=True, tokens=True)
    if not rows:
        return {}
    facts = _unit_rows([u.pop("vector") for u in rows.values()])
    return {i: _Entry(u, facts[j]) for j, (i, u) in enumerate(rows.items())}


def _unit_rows(vectors: list[Any]) -> np.ndarray:
    """The vectors as rows of unit length, float32, normalised in one pass (zero rows kept)."""
    m = np.stack(vectors).astype(np.float64)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return (m / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _unit_length(vector: Any) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


_COSINE_KEYS = (("cosine", "chunk_cosine"), ("focus_cosine", "focus_chunk_cosine"))
"""The row keys of each query's cosines: the query's own, then the focus query's (``fetch_units``')."""


def _with_cosines(
    rows: dict[str, _Entry],
    chunks: dict[str, np.ndarray],
    ids: list[str],
    embedding: Sequence[float],
    focus: Sequence[float] | None = None,
) -> dict[str, dict[str, Any]]:
    """Each row as fetch_units returns it (a copy: callers may change theirs), with the query's two
    cosines and, with ``focus``, the focus query's two; each set of vectors in one matrix product."""
    kept = [i for i in ids if i in rows]
    if not kept:
        return {}
    queries = np.stack([_unit_length(q) for q in (embedding, focus) if q is not None])
    facts = _cosines([rows[i].fact for i in kept], queries)
    chunk_ids = list(chunks)
    by_chunk = dict(zip(chunk_ids, _cosines([chunks[c] for c in chunk_ids], queries), strict=True))
    out = {}
    for i, cos in zip(kept, facts, strict=True):
        e = rows[i].unit
        unit = {**e, "tags": list(e["tags"]), "metadata": dict(e["metadata"]), "entities": list(e["entities"])}
        chunk = by_chunk.get(e["chunk_id"]) if e["chunk_text"] is not None else None
        for j, (fact_key, chunk_key) in enumerate(_COSINE_KEYS[: len(queries)]):
            unit[fact_key] = cos[j]
            unit[chunk_key] = None if chunk is None else chunk[j]
        out[i] = unit
    return out


def _cosines(vectors: list[np.ndarray], queries: np.ndarray) -> list[list[float]]:
    """Per vector, its cosine to each query row: one matrix product for all rows (numpy per row
    costs ~10 us a call: 3 ms at 300 rows)."""
    if not vectors:
        return []
    return np.clip(np.stack(vectors).astype(np.float64) @ queries.T, -1.0, 1.0).tolist()
