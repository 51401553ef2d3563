"""A read-through cache of the rows the learned ranker reads, in the process that reranks.

Why: the rerank step of a miss spent most of its time re-reading the same memory rows
(fields, entity names, source chunk text, both cosines) from PostgreSQL, ~16 ms of ~22 ms
at 300 candidates, although a bank's popular memories are asked for again and again.

Why it is safe: a memory row never changes after its insert, and every write to a bank (an
ingest, an import, a publish) moves ``banks.version`` to a new value of a global sequence, so
a key of (bank, version, memory) can never name stale data: a write makes every key of the
bank unreachable (the LRU drops them in time). The one field written later is a chunk's
vector (``ingest_repo.set_chunk_vectors``, after the chunk's memories): a row whose chunk has
text but no vector yet is not kept, so the next recall reads it again.

The cosines are computed here, in float64 from unit-length float32 copies of the stored
vectors, clamped to [-1, 1] as pgvector does: ``fetch_units(embedding=...)``'s values to ~1e-6.
A row costs about 4 KB (two 384-d vectors, its fields and chunk text), so the default 10,000
rows hold ~40 MB per reranking process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import Connection, Engine

from tempr.store import recall_repo


@dataclass(frozen=True)
class _Entry:
    unit: dict[str, Any]  # fetch_units' row without the cosines
    fact: np.ndarray  # the memory's vector, unit length (float32: half the memory, ~1e-7 off)
    chunk: np.ndarray | None  # its chunk's vector, likewise (None: no chunk or no vector)


class UnitCache:
    """At most ``capacity`` rows, least recently used out first; thread-safe (a thread pool
    reranks several recalls at once). ``capacity`` 0 keeps nothing: every call reads the rows.
    ``observe(from_cache, from_postgres)`` is told each call's row counts (the fleet's metrics)."""

    def __init__(self, capacity: int, observe: Callable[[int, int], None] | None = None) -> None:
        self.capacity = max(0, capacity)
        self._observe = observe
        self._rows: OrderedDict[tuple[str, int, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._rows)

    def units(
        self, engine: Engine, bank_id: str, version: int, ids: Sequence[str], embedding: Sequence[float]
    ) -> dict[str, dict[str, Any]]:
        """``fetch_units(conn, ids, with_entities=True, embedding=embedding, with_chunks=True)``,
        reading from PostgreSQL only the rows not kept from an earlier call (no connection at
        all when every row is kept: a pool checkout costs a ping)."""
        found: dict[str, _Entry] = {}
        with self._lock:
            for i in ids:
                entry = self._rows.get((bank_id, version, i))
                if entry is not None:
                    self._rows.move_to_end((bank_id, version, i))
                    found[i] = entry
            missing = [i for i in dict.fromkeys(ids) if i not in found]
            self.hits += len(found)
            self.misses += len(missing)
        if self._observe is not None:
            self._observe(len(found), len(missing))
        if missing:
            with engine.connect() as conn:
                fresh = _read(conn, missing)
            found.update(fresh)
            self._keep(bank_id, version, fresh)
        return _with_cosines(found, ids, embedding)

    def _keep(self, bank_id: str, version: int, fresh: dict[str, _Entry]) -> None:
        if not self.capacity:
            return
        with self._lock:
            for i, entry in fresh.items():
                if entry.unit["chunk_text"] is not None and entry.chunk is None:
                    continue  # its chunk's vector is still to come: read it again next time
                self._rows[(bank_id, version, i)] = entry
            while len(self._rows) > self.capacity:
                self._rows.popitem(last=False)


def _read(conn: Connection, ids: Sequence[str]) -> dict[str, _Entry]:
    rows = recall_repo.fetch_units(conn, ids, with_entities=True, with_chunks=True, vectors=True)
    out = {}
    for i, unit in rows.items():
        fact, chunk = unit.pop("vector"), unit.pop("chunk_vector")
        out[i] = _Entry(unit, _unit_length(fact), None if chunk is None else _unit_length(chunk))
    return out


def _unit_length(vector: Any, dtype: Any = np.float32) -> np.ndarray:
    if hasattr(vector, "to_numpy"):  # pgvector's Vector (the binary protocol's value)
        vector = vector.to_numpy()
    v = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return (v / norm if norm else v).astype(dtype)


def _with_cosines(
    entries: dict[str, _Entry], ids: Sequence[str], embedding: Sequence[float]
) -> dict[str, dict[str, Any]]:
    """Each row as fetch_units returns it (a copy: callers may change theirs), with both cosines."""
    kept = [i for i in dict.fromkeys(ids) if i in entries]
    if not kept:
        return {}
    q = _unit_length(embedding, np.float64)
    facts = _cosines([entries[i].fact for i in kept], q)
    chunked = [(i, c) for i in kept if (c := entries[i].chunk) is not None]
    chunks = dict(zip((i for i, _ in chunked), _cosines([c for _, c in chunked], q), strict=True))
    out = {}
    for i, cos in zip(kept, facts, strict=True):
        e = entries[i]
        unit = {**e.unit, "tags": list(e.unit["tags"]), "metadata": dict(e.unit["metadata"])}
        unit["entities"] = list(e.unit["entities"])
        unit["cosine"] = cos
        unit["chunk_cosine"] = chunks.get(i)
        out[i] = unit
    return out


def _cosines(vectors: list[np.ndarray], q: np.ndarray) -> list[float]:
    """One matrix product for all rows (numpy per row costs ~10 us a call: 3 ms at 300 rows)."""
    if not vectors:
        return []
    return np.clip(np.stack(vectors).astype(np.float64) @ q, -1.0, 1.0).tolist()
