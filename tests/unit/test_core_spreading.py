"""Temporal bucket spreading (seed: "Temporal Search", coverage across the window)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core.spreading import bucket_index, spread_across_buckets
from tempr.core.types import TimeWindow

START = datetime(2023, 1, 1, tzinfo=UTC)
WINDOW = TimeWindow(START, START + timedelta(days=80), "span")  # 8 buckets of 10 days


def at(day: float) -> datetime:
    return START + timedelta(days=day)


def test_bucket_index_examples() -> None:
    span = 80 * 86400.0
    assert bucket_index(at(0), START, span, 8) == 0
    assert bucket_index(at(9.99), START, span, 8) == 0
    assert bucket_index(at(10), START, span, 8) == 1
    assert bucket_index(at(79.9), START, span, 8) == 7
    assert bucket_index(at(80), START, span, 8) == 7  # the end belongs to the last bucket
    assert bucket_index(at(-30), START, span, 8) == 0  # clamped, not dropped
    assert bucket_index(at(500), START, span, 8) == 7
    assert bucket_index(at(5), START, 0.0, 8) == 0
    assert bucket_index(datetime(2023, 1, 11), START, span, 8) == 1  # naive is UTC


def test_dense_stretch_does_not_crowd_out_the_rest_of_the_window() -> None:
    dense = [(f"dense{i}", at(1 + i * 0.1), 0.9 - i * 0.01) for i in range(10)]
    sparse = [("late", at(75), 0.3), ("mid", at(41), 0.2)]
    picked = spread_across_buckets(dense + sparse, WINDOW, buckets=8, limit=3)
    assert picked == ["dense0", "late", "mid"]


def test_rounds_are_ordered_by_relevance() -> None:
    cands = [("a1", at(1), 0.5), ("a2", at(2), 0.4), ("b1", at(11), 0.9), ("b2", at(12), 0.1)]
    assert spread_across_buckets(cands, WINDOW, buckets=8, limit=10) == ["b1", "a1", "a2", "b2"]


def test_outside_candidates_are_clamped_into_edge_buckets() -> None:
    cands = [("early", at(-5), 0.1), ("first", at(1), 0.9), ("late", at(200), 0.5)]
    # "early" shares bucket 0 with the stronger "first", so it waits for round two.
    assert spread_across_buckets(cands, WINDOW, buckets=8, limit=3) == ["first", "late", "early"]


def test_open_window_slices_the_candidates_own_span() -> None:
    anchor = datetime(2024, 1, 1, tzinfo=UTC)
    before = TimeWindow(datetime(1900, 1, 1, tzinfo=UTC), anchor, "span", "before", anchor)
    cands = [
        ("old", datetime(2020, 1, 1, tzinfo=UTC), 0.2),
        ("new1", datetime(2023, 12, 1, tzinfo=UTC), 0.9),
        ("new2", datetime(2023, 12, 2, tzinfo=UTC), 0.8),
    ]
    # Sliced over 1900..2024 all three would share the last bucket: new1, new2, old.
    assert spread_across_buckets(cands, before, buckets=4, limit=2) == ["new1", "old"]


def test_duplicate_ids_keep_their_best_relevance() -> None:
    cands = [("x", at(1), 0.1), ("y", at(2), 0.5), ("x", at(3), 0.9)]
    assert spread_across_buckets(cands, WINDOW, buckets=1, limit=5) == ["x", "y"]


def test_limits_and_bad_buckets() -> None:
    cands = [("a", at(1), 0.5)]
    assert spread_across_buckets(cands, WINDOW, buckets=8, limit=0) == []
    assert spread_across_buckets([], WINDOW, buckets=8, limit=5) == []
    with pytest.raises(ValueError):
        spread_across_buckets(cands, WINDOW, buckets=0, limit=5)


@st.composite
def bucketed(draw: st.DrawFn) -> tuple[int, list[tuple[str, datetime, float]], dict[str, int]]:
    """Candidates placed at bucket centres, so each one's bucket is known independently."""
    buckets = draw(st.integers(1, 10))
    n = draw(st.integers(0, 30))
    cands, where = [], {}
    width = 80 / buckets
    for i in range(n):
        b = draw(st.integers(0, buckets - 1))
        relevance = draw(st.floats(0.0, 1.0))
        cands.append((f"m{i}", at(width * (b + 0.5)), relevance))
        where[f"m{i}"] = b
    return buckets, cands, where


@given(bucketed(), st.integers(0, 40))
def test_count_is_min_of_limit_and_candidates_without_duplicates(
    data: tuple[int, list[tuple[str, datetime, float]], dict[str, int]], limit: int
) -> None:
    buckets, cands, _ = data
    picked = spread_across_buckets(cands, WINDOW, buckets=buckets, limit=limit)
    assert len(picked) == min(limit, len(cands))
    assert len(set(picked)) == len(picked)
    assert set(picked) <= {c[0] for c in cands}


@given(bucketed(), st.integers(0, 40))
def test_every_populated_bucket_contributes_before_any_contributes_twice(
    data: tuple[int, list[tuple[str, datetime, float]], dict[str, int]], limit: int
) -> None:
    buckets, cands, where = data
    population = Counter(where.values())
    taken: Counter[int] = Counter()
    for mid in spread_across_buckets(cands, WINDOW, buckets=buckets, limit=limit):
        b = where[mid]
        taken[b] += 1
        # Taking the n-th item of bucket b needs n-1 items from every bucket that has them.
        for other, size in population.items():
            assert taken[other] >= min(size, taken[b] - 1)


@given(bucketed())
def test_within_a_bucket_stronger_memories_come_first(
    data: tuple[int, list[tuple[str, datetime, float]], dict[str, int]],
) -> None:
    buckets, cands, where = data
    relevance = {c[0]: c[2] for c in cands}
    picked = spread_across_buckets(cands, WINDOW, buckets=buckets, limit=len(cands))
    for b in set(where.values()):
        in_bucket = [relevance[m] for m in picked if where[m] == b]
        assert in_bucket == sorted(in_bucket, reverse=True)


@given(bucketed())
def test_first_round_is_the_best_of_each_bucket_by_relevance(
    data: tuple[int, list[tuple[str, datetime, float]], dict[str, int]],
) -> None:
    buckets, cands, where = data
    populated = len(set(where.values()))
    relevance = {c[0]: c[2] for c in cands}
    first_round = spread_across_buckets(cands, WINDOW, buckets=buckets, limit=populated)
    assert {where[m] for m in first_round} == set(where.values())
    for m in first_round:
        assert relevance[m] == max(relevance[o] for o in where if where[o] == where[m])
    scores = [relevance[m] for m in first_round]
    assert scores == sorted(scores, reverse=True)
