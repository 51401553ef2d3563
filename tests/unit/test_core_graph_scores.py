"""Graph scoring (seed: "Graph Scoring Detail") and per-hop decay."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core.graph_scores import (
    combine_hops,
    entity_score,
    graph_score,
    hop_decay,
    multi_hop_depth,
)

weights = st.floats(min_value=-5, max_value=5, allow_nan=False)


@pytest.mark.parametrize(("shared", "expected"), [(0, 0.0), (1, 0.46), (2, 0.76), (3, 0.91), (4, 0.96)])
def test_entity_seed_examples(shared: int, expected: float) -> None:
    assert round(entity_score(shared), 2) == expected


@given(st.integers(0, 500), st.integers(0, 500))
def test_entity_saturates_monotonically_below_one(a: int, b: int) -> None:
    lo, hi = sorted((a, b))
    assert 0.0 <= entity_score(lo) <= entity_score(hi) <= 1.0
    assert entity_score(lo) == pytest.approx(math.tanh(0.5 * lo))


def test_entity_rejects_negative() -> None:
    with pytest.raises(ValueError):
        entity_score(-1)


def test_graph_score_is_an_additive_sum() -> None:
    assert graph_score(0.46, 0.8, 1.0) == pytest.approx(2.26)
    assert graph_score(0.0, 0.0, 1.0) == 1.0  # causal-only evidence is not zeroed
    assert graph_score(5.0, -1.0, 0.5) == 1.5  # each channel clamped to [0, 1]
    assert graph_score(math.nan, 0.7, 0.0) == pytest.approx(0.7)


@given(weights, weights, weights)
def test_graph_score_in_zero_to_three(e: float, s: float, c: float) -> None:
    total = graph_score(e, s, c)
    assert 0.0 <= total <= 3.0
    assert total == pytest.approx(sum(min(1.0, max(0.0, x)) for x in (e, s, c)))


def test_hop_decay_examples() -> None:
    assert hop_decay(1, 0.5) == 1.0
    assert hop_decay(2, 0.5) == 0.5
    assert hop_decay(3, 0.5) == 0.25
    assert hop_decay(3, 1.0) == 1.0
    for bad_hop, bad_decay in [(0, 0.5), (1, 1.5), (1, -0.1)]:
        with pytest.raises(ValueError):
            hop_decay(bad_hop, bad_decay)


@given(st.integers(1, 10), st.floats(0.0, 1.0))
def test_hop_decay_never_grows_with_distance(hop: int, decay: float) -> None:
    assert hop_decay(hop + 1, decay) <= hop_decay(hop, decay) <= 1.0


def test_combine_hops_keeps_best_decayed_score() -> None:
    per_hop = [{"a": 0.4, "b": 2.0}, {"a": 1.0, "c": 3.0}, {"b": 3.0, "d": 0.4}]
    combined = combine_hops(per_hop, 0.5)
    assert combined == {"b": 2.0, "c": 1.5, "a": 0.5, "d": 0.1}
    assert list(combined) == ["b", "c", "a", "d"]  # ordered best first


def test_combine_hops_orders_ties_by_id() -> None:
    assert list(combine_hops([{"z": 1.0, "a": 1.0}], 0.5)) == ["a", "z"]


@given(
    st.lists(st.dictionaries(st.sampled_from("abcdef"), st.floats(0.0, 3.0), max_size=6), max_size=4),
    st.floats(0.0, 1.0),
)
def test_combine_hops_is_max_over_hops(per_hop: list[dict[str, float]], decay: float) -> None:
    combined = combine_hops(per_hop, decay)
    expected: dict[str, float] = {}
    for hop, scores in enumerate(per_hop, start=1):
        for node, score in scores.items():
            expected[node] = max(expected.get(node, -1.0), score * decay ** (hop - 1))
    assert combined == pytest.approx(expected)
    values = list(combined.values())
    assert values == sorted(values, reverse=True)


@pytest.mark.parametrize(("level", "depth"), [("low", 1), ("mid", 2), ("high", 3)])
def test_multi_hop_depth(level: str, depth: int) -> None:
    assert multi_hop_depth(level) == depth


def test_multi_hop_depth_rejects_unknown_level() -> None:
    with pytest.raises(ValueError, match="medium"):
        multi_hop_depth("medium")
