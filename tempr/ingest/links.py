"""Semantic and temporal links among the facts of one batch, computed in memory (no I/O).

The batch's vectors and dates are already in memory, so the links among its own facts
cost one matrix product and one sort instead of an index query per fact. Links to facts
the bank held before the batch come from the store (``ingest_repo.existing_*_candidates``);
``merge_top_k`` keeps each new fact's best ``top_k`` of both, the same rule the store
applied when it linked every fact with its own query.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from datetime import datetime

import numpy as np

Candidate = tuple[float, str, float]
"""(sort key: smaller is nearer, neighbour unit id, link weight)."""


def semantic_candidates(
    ids: Sequence[str], vectors: np.ndarray, *, threshold: float, top_k: int, block: int = 1024
) -> dict[str, list[Candidate]]:
    """Each unit's ``top_k`` most similar other units of the batch with cosine >= threshold (exact)."""
    mat = np.asarray(vectors, dtype=np.float32)
    return nearest_among(ids, mat, ids, mat, threshold=threshold, top_k=top_k, block=block)


def nearest_among(
    ids: Sequence[str],
    vectors: np.ndarray,
    other_ids: Sequence[str],
    others: np.ndarray,
    *,
    threshold: float,
    top_k: int,
    block: int = 1024,
) -> dict[str, list[Candidate]]:
    """Each unit's ``top_k`` most similar of ``others`` with cosine >= threshold (exact), never itself.

    Both matrices hold rows of unit length (``unit_rows``), so a dot product is the cosine. For a
    bank small enough to be searched exactly, its vectors are read page by page and compared here,
    instead of a k-NN query per new fact: a publish's later blocks searched the earlier ones that way
    at about 0.2 us per memory per fact (BENCHMARKS.md, "A publish's links by matrix products")."""
    out: dict[str, list[Candidate]] = {u: [] for u in ids}
    k = min(top_k, len(other_ids))
    if not len(ids) or k <= 0:
        return out
    where = {u: j for j, u in enumerate(other_ids)}
    for start in range(0, len(ids), block):
        sims = vectors[start : start + block] @ others.T
        for r, me in enumerate(ids[start : start + block]):
            if me in where:
                sims[r, where[me]] = -np.inf  # never link a unit to itself
        best = np.argpartition(sims, sims.shape[1] - k, axis=1)[:, -k:]
        for r, cols in enumerate(best):
            me = ids[start + r]
            for c in cols:
                cos = float(sims[r, c])
                if cos >= threshold:
                    out[me].append((1.0 - cos, other_ids[c], min(1.0, cos)))
    return out


def unit_rows(vectors: np.ndarray, *, copy: bool = True) -> np.ndarray:
    """Rows scaled to unit length (cosine as a dot product), as pgvector's ``<=>`` computes it;
    ``copy=False`` scales a float32 matrix in place."""
    mat = np.array(vectors, dtype=np.float32, copy=copy)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    mat /= np.where(norms > 0, norms, 1.0)
    return mat


def temporal_candidates(
    ids: Sequence[str], dates: Sequence[datetime | None], *, window_hours: float, top_k: int
) -> dict[str, list[Candidate]]:
    """Each dated unit's ``top_k`` nearest-in-time other dated units within the window (ties by id)."""
    out: dict[str, list[Candidate]] = {u: [] for u in ids}
    if top_k <= 0 or window_hours <= 0:
        return out
    dated = sorted((d.timestamp(), u) for u, d in zip(ids, dates, strict=True) if d is not None)
    times = [t for t, _ in dated]
    window = window_hours * 3600.0
    for t, me in dated:
        lo, hi = bisect_left(times, t - window), bisect_right(times, t + window)
        near = heapq.nsmallest(
            top_k, ((abs(times[j] - t) / 3600.0, dated[j][1]) for j in range(lo, hi) if dated[j][1] != me)
        )
        out[me] = [(dh, other, max(0.0, 1.0 - dh / window_hours)) for dh, other in near]
    return out


def merge_top_k(
    batch: dict[str, list[Candidate]], existing: dict[str, list[Candidate]], top_k: int
) -> list[tuple[str, str, float]]:
    """(from, to, weight) for each unit's ``top_k`` nearest distinct neighbours over both candidate lists.

    A neighbour can be in both (a fact of the batch that another writer put in the bank before this
    write): it counts once, so no pair is listed twice (``links_repo.copy_new_links`` relies on it)."""
    links: list[tuple[str, str, float]] = []
    for unit, mine in batch.items():
        nearest: dict[str, Candidate] = {}
        for c in mine + existing.get(unit, []):
            if c[1] not in nearest or c[0] < nearest[c[1]][0]:
                nearest[c[1]] = c
        best = heapq.nsmallest(top_k, nearest.values(), key=lambda c: (c[0], c[1]))
        links.extend((unit, other, weight) for _, other, weight in best)
    return links


def keep_top_k(
    found: dict[str, list[Candidate]], more: dict[str, list[Candidate]], top_k: int
) -> dict[str, list[Candidate]]:
    """Each unit's best ``top_k`` over two candidate lists (a bank searched page by page)."""
    out = dict(found)
    for unit, mine in more.items():
        out[unit] = heapq.nsmallest(top_k, out.get(unit, []) + mine, key=lambda c: (c[0], c[1]))
    return out
