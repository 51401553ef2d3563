"""In-memory batch links agree with the brute-force rule the store applied per fact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tempr.ingest.links import merge_top_k, nearest_among, semantic_candidates, temporal_candidates, unit_rows


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), k=st.integers(1, 6), threshold=st.floats(-0.5, 0.9), seed=st.integers(0, 10_000))
def test_semantic_matches_brute_force(n: int, k: int, threshold: float, seed: int) -> None:
    vecs = _unit(np.random.default_rng(seed).normal(size=(n, 8)).astype(np.float32))
    ids = [f"u{i:03d}" for i in range(n)]
    got = semantic_candidates(ids, vecs, threshold=threshold, top_k=k, block=7)
    for i, me in enumerate(ids):
        sims = sorted(((float(vecs[i] @ vecs[j]), ids[j]) for j in range(n) if j != i), reverse=True)[:k]
        want = {o for c, o in sims if c >= threshold}
        assert {o for _, o, _ in got[me]} == want
        assert all(w <= 1.0 and w >= threshold - 1e-6 for _, _, w in got[me])


@settings(max_examples=40, deadline=None)
@given(
    hours=st.lists(st.one_of(st.none(), st.integers(0, 96)), min_size=1, max_size=30),
    k=st.integers(1, 5),
    window=st.sampled_from([1.0, 6.0, 24.0]),
)
def test_temporal_matches_brute_force(hours: list[int | None], k: int, window: float) -> None:
    base = datetime(2024, 1, 1, tzinfo=UTC)
    dates = [None if h is None else base + timedelta(hours=h) for h in hours]
    ids = [f"u{i:03d}" for i in range(len(hours))]
    got = temporal_candidates(ids, dates, window_hours=window, top_k=k)
    for i, me in enumerate(ids):
        if dates[i] is None:
            assert got[me] == []
            continue
        near = sorted(
            (abs((dates[j] - dates[i]).total_seconds()) / 3600, ids[j])
            for j in range(len(ids))
            if j != i and dates[j] is not None and abs((dates[j] - dates[i]).total_seconds()) <= window * 3600
        )[:k]
        assert [(dh, o) for dh, o, _ in got[me]] == near
        assert all(0.0 <= w <= 1.0 for _, _, w in got[me])


def test_merge_keeps_nearest_of_batch_and_bank() -> None:
    batch = {"a": [(0.1, "b", 0.9), (0.5, "c", 0.5)], "b": []}
    bank = {"a": [(0.2, "old1", 0.8), (0.05, "old2", 0.95)], "b": [(0.3, "old1", 0.7)]}
    assert merge_top_k(batch, bank, 2) == [("a", "old2", 0.95), ("a", "b", 0.9), ("b", "old1", 0.7)]


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 20),
    m=st.integers(0, 30),
    k=st.integers(1, 6),
    threshold=st.floats(-0.5, 0.9),
    seed=st.integers(0, 10_000),
)
def test_nearest_among_a_bank_matches_brute_force_and_never_links_a_unit_to_itself(
    n: int, m: int, k: int, threshold: float, seed: int
) -> None:
    """The bank's rows are not unit length here (``unit_rows`` scales them, as pgvector's cosine does),
    and the new units' ids may already be in the bank (a re-ingested fact): never its own neighbour."""
    rng = np.random.default_rng(seed)
    bank = rng.normal(size=(m, 8)).astype(np.float32) * rng.uniform(0.5, 3.0, size=(m, 1)).astype(np.float32)
    bank_ids = [f"b{j:03d}" for j in range(m)]
    new = rng.normal(size=(n, 8)).astype(np.float32)
    ids = [bank_ids[i] if i < m and i % 2 else f"n{i:03d}" for i in range(n)]
    got = nearest_among(ids, unit_rows(new), bank_ids, unit_rows(bank), threshold=threshold, top_k=k, block=5)
    unit_bank, unit_new = _unit(bank.astype(np.float64)), _unit(new.astype(np.float64))
    for i, me in enumerate(ids):
        sims = sorted(
            ((float(unit_new[i] @ unit_bank[j]), bank_ids[j]) for j in range(m) if bank_ids[j] != me), reverse=True
        )
        want = {o for c, o in sims[:k] if c >= threshold}
        edges = [threshold, sims[min(k, len(sims)) - 1][0]] if sims else []
        borderline = {o for c, o in sims if any(abs(c - e) < 1e-5 for e in edges)}
        mine = {o for _, o, _ in got[me]}
        assert me not in mine
        assert mine - borderline <= want and want - borderline <= mine  # float32 against float64: ties only


def test_merge_counts_a_neighbour_found_twice_once() -> None:
    """A fact of the batch that another writer put in the bank first is a candidate from the batch and
    from the bank: it takes one of the k places (the nearer of its two entries), and the next neighbour
    the other."""
    batch = {"n": [(0.1, "old", 0.9), (0.3, "b", 0.7)]}
    existing = {"n": [(0.1000001, "old", 0.8999999), (0.2, "c", 0.8)]}
    assert merge_top_k(batch, existing, 2) == [("n", "old", 0.9), ("n", "c", 0.8)]
