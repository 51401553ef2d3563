"""Token packing: skip-and-continue with a one-item floor (seed: "Stage 4: Token Truncation")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core.packing import PackResult, pack

sizes = st.lists(st.integers(0, 60), max_size=12)
budgets = st.integers(0, 200)


def items_of(token_counts: list[int]) -> list[tuple[int, int]]:
    """(position, tokens) pairs, so equal sizes stay distinguishable."""
    return list(enumerate(token_counts))


def run(token_counts: list[int], budget: int) -> PackResult[tuple[int, int]]:
    return pack(items_of(token_counts), max_tokens=budget, count_tokens=lambda item: item[1])


def test_skips_a_long_item_and_continues() -> None:
    result = run([40, 100, 30, 50], 100)
    assert [i for i, _ in result.kept] == [0, 2]
    assert [(item[0], t) for item, t in result.skipped] == [(1, 100), (3, 50)]
    assert result.tokens_used == 70
    assert not result.floor_used
    assert result.truncated
    assert [d.outcome for d in result.decisions] == ["kept", "skipped", "kept", "skipped"]
    assert [d.remaining_before for d in result.decisions] == [100, 60, 60, 30]


def test_floor_returns_top_item_whole_when_nothing_fits() -> None:
    result = run([500, 300], 100)
    assert result.kept == [(0, 500)]
    assert result.tokens_used == 500
    assert result.floor_used
    assert [d.outcome for d in result.decisions] == ["floor", "skipped"]
    assert result.skipped == [((1, 300), 300)]


def test_floor_applies_even_at_zero_budget() -> None:
    result = run([5], 0)
    assert result.kept == [(0, 5)]
    assert result.floor_used


def test_zero_token_items_fit_a_zero_budget_without_floor() -> None:
    result = run([0, 3, 0], 0)
    assert [i for i, _ in result.kept] == [0, 2]
    assert not result.floor_used


def test_empty_input() -> None:
    result = run([], 100)
    assert result.kept == [] and result.skipped == [] and result.tokens_used == 0
    assert not result.floor_used and not result.truncated


def test_everything_fits_exactly() -> None:
    result = run([10, 20, 30], 60)
    assert len(result.kept) == 3 and not result.truncated and result.tokens_used == 60


def test_each_item_is_counted_once() -> None:
    calls: list[str] = []

    def count(item: str) -> int:
        calls.append(item)
        return len(item)

    pack(["aaaa", "bb", "cccccc"], max_tokens=5, count_tokens=count)
    assert calls == ["aaaa", "bb", "cccccc"]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        pack(["a"], max_tokens=-1, count_tokens=len)
    with pytest.raises(ValueError):
        pack(["a"], max_tokens=5, count_tokens=lambda _: -1)


@given(sizes, budgets)
def test_budget_respected_unless_floor(token_counts: list[int], budget: int) -> None:
    result = run(token_counts, budget)
    assert result.tokens_used == sum(t for _, t in result.kept)
    if result.floor_used:
        assert result.kept == items_of(token_counts)[:1]
        assert all(t > budget for t in token_counts)
    else:
        assert result.tokens_used <= budget


@given(sizes, budgets)
def test_floor_fires_exactly_when_nothing_fits(token_counts: list[int], budget: int) -> None:
    result = run(token_counts, budget)
    nothing_fits = bool(token_counts) and all(t > budget for t in token_counts)
    assert result.floor_used == nothing_fits
    if token_counts:
        assert result.kept  # a query that matched something never gets an empty list


@given(sizes, budgets)
def test_kept_and_skipped_partition_the_input_in_order(token_counts: list[int], budget: int) -> None:
    result = run(token_counts, budget)
    kept_idx = [i for i, _ in result.kept]
    skipped_idx = [item[0] for item, _ in result.skipped]
    assert kept_idx == sorted(kept_idx)
    assert skipped_idx == sorted(skipped_idx)
    assert sorted(kept_idx + skipped_idx) == list(range(len(token_counts)))
    assert [d.index for d in result.decisions] == list(range(len(token_counts)))
    assert all(t == item[1] for item, t in result.skipped)


@given(sizes, budgets)
def test_no_skipped_item_fits_in_what_is_left(token_counts: list[int], budget: int) -> None:
    result = run(token_counts, budget)
    if not result.floor_used:
        left = budget - result.tokens_used
        assert all(t > left for _, t in result.skipped)


@given(sizes, budgets)
def test_each_skip_happened_because_it_did_not_fit_then(token_counts: list[int], budget: int) -> None:
    result = run(token_counts, budget)
    used = 0
    for d in result.decisions:
        assert d.remaining_before == budget - used
        if d.outcome == "kept":
            assert d.tokens <= budget - used
            used += d.tokens
        elif d.outcome == "skipped":
            assert d.tokens > budget - used


@given(sizes, budgets, budgets)
def test_growing_the_budget_never_uses_fewer_tokens(token_counts: list[int], a: int, b: int) -> None:
    # The kept *count* is not monotonic ([3, 4, 1, 1, 1]: budget 6 keeps 4 items, 7 keeps 2),
    # but the tokens used are, and the best kept item is never ranked lower.
    small, large = sorted((a, b))
    r_small, r_large = run(token_counts, small), run(token_counts, large)
    if not r_small.floor_used and not r_large.floor_used:
        assert r_small.tokens_used <= r_large.tokens_used
    if token_counts and not r_small.floor_used:
        assert r_large.kept[0][0] <= r_small.kept[0][0]


def test_kept_count_is_not_monotonic_in_budget() -> None:
    assert len(run([3, 4, 1, 1, 1], 6).kept) == 4
    assert len(run([3, 4, 1, 1, 1], 7).kept) == 2
