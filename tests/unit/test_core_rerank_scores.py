"""Reranker score normalisation and the RRF fallback (seed: "Stage 2: Cross-Encoder Reranking")."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core.rerank_scores import normalise_scores, rrf_fallback_scores, sigmoid

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


def test_sigmoid_examples() -> None:
    assert sigmoid(0.0) == 0.5
    assert sigmoid(2.0) == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert sigmoid(-2.0) == pytest.approx(1 / (1 + math.exp(2.0)))
    assert sigmoid(1000.0) == 1.0
    assert sigmoid(-1000.0) == 0.0  # no OverflowError
    assert sigmoid(math.inf) == 1.0
    assert sigmoid(-math.inf) == 0.0
    assert sigmoid(math.nan) == 0.0


@given(finite)
def test_sigmoid_in_unit_interval_and_symmetric(x: float) -> None:
    y = sigmoid(x)
    assert 0.0 <= y <= 1.0
    assert y + sigmoid(-x) == pytest.approx(1.0)


@given(finite, finite)
def test_sigmoid_monotonic(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert sigmoid(lo) <= sigmoid(hi)


def test_uncalibrated_sigmoids_every_score_even_when_all_in_unit_interval() -> None:
    # The reference would pass this batch through; we sigmoid per model.
    assert normalise_scores([0.0, 0.5, 1.0], calibrated=False) == [
        0.5,
        sigmoid(0.5),
        sigmoid(1.0),
    ]


def test_calibrated_passes_through_and_clamps() -> None:
    assert normalise_scores([0.0, 0.37, 1.0], calibrated=True) == [0.0, 0.37, 1.0]
    assert normalise_scores([-0.2, 1.3, math.nan], calibrated=True) == [0.0, 1.0, 0.0]


@given(st.lists(finite, max_size=20), st.booleans())
def test_normalised_scores_in_unit_interval_and_order_preserving(raw: list[float], calibrated: bool) -> None:
    out = normalise_scores(raw, calibrated=calibrated)
    assert len(out) == len(raw)
    assert all(0.0 <= y <= 1.0 for y in out)
    for i in range(len(raw) - 1):
        if raw[i] <= raw[i + 1]:
            assert out[i] <= out[i + 1]


@given(st.lists(finite, min_size=1, max_size=10), finite, st.booleans())
def test_a_score_does_not_depend_on_its_batch(batch: list[float], x: float, calibrated: bool) -> None:
    alone = normalise_scores([x], calibrated=calibrated)[0]
    assert normalise_scores([*batch, x], calibrated=calibrated)[-1] == alone


def test_fallback_examples() -> None:
    assert rrf_fallback_scores(0) == []
    assert rrf_fallback_scores(1) == [1.0]
    assert rrf_fallback_scores(2) == [1.0, 0.1]
    assert rrf_fallback_scores(4) == pytest.approx([1.0, 0.7, 0.4, 0.1])


@given(st.integers(2, 2000))
def test_fallback_spans_exactly_point_one_to_one_linearly(n: int) -> None:
    scores = rrf_fallback_scores(n)
    assert len(scores) == n
    assert scores[0] == 1.0
    assert scores[-1] == 0.1
    step = 0.9 / (n - 1)
    for i, s in enumerate(scores):
        assert s == pytest.approx(1 - 0.9 * i / (n - 1))
    for a, b in itertools.pairwise(scores):
        assert a > b
        assert a - b == pytest.approx(step)


def test_fallback_rejects_negative() -> None:
    with pytest.raises(ValueError):
        rrf_fallback_scores(-1)
