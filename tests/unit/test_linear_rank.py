"""The linear member beside the learned ranker's trees (``tempr.core.linear_rank``) and its fit
(``bench.ranker_train.fit_linear``); its section of a model file is tested with the ranker
(``test_learned_ranker.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core.linear_rank import LinearModel, blend

finite = st.floats(min_value=-50, max_value=50, allow_nan=False)


@given(st.lists(st.tuples(finite, finite), min_size=2, max_size=40), st.floats(min_value=0.05, max_value=5))
def test_the_blend_is_the_sum_of_z_scores_on_the_trees_scale(pairs: list[tuple[float, float]], weight: float) -> None:
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    got = blend(a, b, weight)
    if a.std() == 0:
        return
    zb = (b - b.mean()) / b.std() if b.std() > 0 else np.zeros_like(b)
    expected = a.mean() + a.std() * ((a - a.mean()) / a.std() + weight * zb)
    assert np.allclose(got, expected, atol=1e-9 * (1 + np.abs(expected).max()))


def test_weight_zero_or_no_candidates_leave_the_trees_alone() -> None:
    a = np.array([0.3, -1.0, 2.0])
    assert blend(a, np.array([5.0, 1.0, 0.0]), 0.0).tolist() == a.tolist()
    assert blend([], [], 1.0).size == 0
    with pytest.raises(ValueError, match="length"):
        blend([1.0, 2.0], [1.0], 1.0)


def test_equal_tree_scores_are_ranked_by_the_linear_member() -> None:
    got = blend([1.0, 1.0, 1.0], [0.2, 0.9, 0.5], 0.5)
    assert list(np.argsort(-got)) == [1, 2, 0]


def _model() -> LinearModel:
    return LinearModel(
        features=("cos_fact", "tok_fact"),
        mean=(0.5, 0.2),
        scale=(0.25, 0.1),
        coef=(2.0, -1.0),
        missing_coef=(0.0, 0.7),
        intercept=-0.3,
    )


def test_decision_by_hand_with_a_missing_value_as_zero_and_its_flag() -> None:
    m = _model()
    rows = np.array([[0.75, 0.3], [0.5, math.nan]])
    expected = [
        2.0 * (0.75 - 0.5) / 0.25 - 1.0 * (0.3 - 0.2) / 0.1 - 0.3,
        2.0 * 0.0 - 1.0 * (0.0 - 0.2) / 0.1 + 0.7 - 0.3,
    ]
    assert m.decision(rows) == pytest.approx(expected)


def test_json_round_trip_and_refusals() -> None:
    m = _model()
    assert LinearModel.from_json(m.to_json()) == m
    with pytest.raises(ValueError, match="columns"):
        LinearModel.from_json(m.to_json().replace('"coef": [2.0, -1.0]', '"coef": [2.0]'))
    with pytest.raises(ValueError, match="positive"):
        LinearModel.from_json(m.to_json().replace('"scale": [0.25, 0.1]', '"scale": [0.25, 0.0]'))


def test_the_fitted_linear_member_scores_raw_rows_as_its_regression_scores_standardised_ones() -> None:
    """The flags' standardisation is folded into their weights: scoring a raw row (NaN and all)
    gives the regression's own decision on the standardised row."""
    from dataclasses import replace

    from sklearn.linear_model import LogisticRegression
    from test_ranker_cv import _samples

    from bench.ranker_train import LINEAR_C, USED_FEATURES, fit_linear, matrix, sample_rows

    samples = _samples()
    samples = [replace(s, candidates=[replace(c, cos_chunk=0.3) for c in s.candidates]) for s in samples[::2]] + [
        s for s in samples[1::2]
    ]  # half the rows without a chunk cosine: a column with missing values
    model = fit_linear(samples, USED_FEATURES)
    assert model.features == USED_FEATURES
    rows = np.asarray([r for s in samples for r in sample_rows(s, USED_FEATURES)], dtype=np.float64)
    assert np.isnan(rows).any()

    from bench.ranker_train import with_tokenless_copies, with_unnamed_copies

    m = matrix(with_tokenless_copies(with_unnamed_copies(samples)), USED_FEATURES)
    raw = np.asarray(m.rows, dtype=np.float64)
    x = np.hstack([np.where(np.isnan(raw), 0.0, raw), np.isnan(raw).astype(float)])
    mean, sd = x.mean(axis=0), x.std(axis=0)
    scale = np.where(sd > 0, sd, 1.0)
    reference = LogisticRegression(C=LINEAR_C, max_iter=2000, class_weight="balanced").fit((x - mean) / scale, m.labels)
    xr = np.hstack([np.where(np.isnan(rows), 0.0, rows), np.isnan(rows).astype(float)])
    assert model.decision(rows) == pytest.approx(reference.decision_function((xr - mean) / scale), abs=1e-6)
    assert model.decision(rows)[:10].argmax() == [c.cos_fact for c in samples[0].candidates].index(0.9)


def test_the_linear_member_gives_the_window_no_negative_weight() -> None:
    """Trained where the window misleads (every distractor inside it, the evidence outside), the
    linear member still cannot rank a memory lower for being inside it (``MONOTONE``)."""
    from test_ranker_cv import misleading_window_samples

    from bench.ranker_train import MONOTONE, USED_FEATURES, fit_linear

    samples = misleading_window_samples()
    model = fit_linear(samples, USED_FEATURES)
    for name in MONOTONE:
        assert model.coef[USED_FEATURES.index(name)] >= 0.0, name
