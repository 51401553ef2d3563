"""Recall budget resolution (seed: "How Budget Maps to Pipeline Parameters")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core.budget import (
    LEVELS,
    multi_hop_depth,
    packing_pool_size,
    recall_budget,
)

tokens = st.integers(min_value=0, max_value=10_000_000)


@pytest.mark.parametrize(("level", "expected"), [("low", 100), ("mid", 300), ("high", 1000)])
def test_fixed_defaults_match_the_seed(level: str, expected: int) -> None:
    assert recall_budget(level, 4096) == expected


def test_fixed_ignores_max_tokens_and_uses_configured_values() -> None:
    assert recall_budget("mid", 10, fixed=(7, 8, 9)) == 8
    assert recall_budget("mid", 10**6, fixed=(7, 8, 9)) == 8


@pytest.mark.parametrize(
    ("level", "max_tokens", "expected"),
    [
        ("low", 4096, 102),  # 102.4
        ("mid", 4096, 307),  # 307.2
        ("high", 4096, 1024),
        ("low", 100, 20),  # 2.5 -> floor 20
        ("high", 100_000, 2000),  # 25000 -> ceiling 2000
        ("mid", 0, 20),
    ],
)
def test_adaptive_examples(level: str, max_tokens: int, expected: int) -> None:
    assert recall_budget(level, max_tokens, function="adaptive") == expected


def test_adaptive_uses_custom_bounds() -> None:
    assert recall_budget("low", 0, function="adaptive", minimum=5, maximum=50) == 5
    assert recall_budget("high", 10**6, function="adaptive", minimum=5, maximum=50) == 50


@given(max_tokens=tokens)
def test_adaptive_within_bounds(max_tokens: int) -> None:
    for level in LEVELS:
        assert 20 <= recall_budget(level, max_tokens, function="adaptive") <= 2000


@given(max_tokens=tokens, function=st.sampled_from(["fixed", "adaptive"]))
def test_monotonic_in_level(max_tokens: int, function: str) -> None:
    budgets = [recall_budget(level, max_tokens, function=function) for level in LEVELS]
    assert budgets == sorted(budgets)


@given(a=tokens, b=tokens)
def test_adaptive_monotonic_in_max_tokens(a: int, b: int) -> None:
    lo, hi = sorted((a, b))
    for level in LEVELS:
        assert recall_budget(level, lo, function="adaptive") <= recall_budget(level, hi, function="adaptive")


@given(max_tokens=st.integers(min_value=800, max_value=80_000))
def test_adaptive_inside_bounds_is_the_rounded_ratio(max_tokens: int) -> None:
    # 0.075 * max_tokens is in [60, 6000] here; where it is inside [20, 2000] it is unclamped.
    value = recall_budget("mid", max_tokens, function="adaptive")
    exact = max_tokens * 0.075
    if 20 <= exact <= 2000:
        assert abs(value - exact) <= 0.5


@pytest.mark.parametrize(
    "kwargs",
    [
        {"level": "medium", "max_tokens": 10},
        {"level": "low", "max_tokens": -1},
        {"level": "low", "max_tokens": 10, "function": "linear"},
        {"level": "low", "max_tokens": 10, "fixed": (1, 2)},
        {"level": "low", "max_tokens": 10, "function": "adaptive", "minimum": 9, "maximum": 8},
    ],
)
def test_bad_arguments_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        recall_budget(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("level", "depth"), [("low", 1), ("mid", 2), ("high", 3)])
def test_multi_hop_depth(level: str, depth: int) -> None:
    assert multi_hop_depth(level) == depth


def test_multi_hop_depth_rejects_unknown_level() -> None:
    with pytest.raises(ValueError, match="medium"):
        multi_hop_depth("medium")


def test_packing_pool_is_twice_the_budget() -> None:
    assert packing_pool_size(300) == 600
    assert packing_pool_size(0) == 0
