"""Combined-scoring boosts (seed: "Stage 3: Combined Scoring (Boosts)")."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core.boosts import (
    as_utc,
    boost,
    combined_score,
    proof_signal,
    recency_signal,
    temporal_proximity_signal,
)
from tempr.core.types import TimeWindow

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
unit = st.floats(min_value=0.0, max_value=1.0)
moments = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2060, 1, 1), timezones=st.just(UTC))


def test_boost_is_centred_on_one() -> None:
    assert boost(0.5, 0.2) == 1.0
    assert boost(1.0, 0.2) == pytest.approx(1.1)
    assert boost(0.0, 0.2) == pytest.approx(0.9)
    assert boost(1.0, 0.1) == pytest.approx(1.05)


# --- recency ----------------------------------------------------------------------


def test_recency_seed_examples() -> None:
    assert recency_signal(NOW, NOW) == 1.0
    assert recency_signal(NOW - timedelta(days=182.5), NOW) == pytest.approx(0.5)
    assert recency_signal(NOW - timedelta(days=400), NOW) == 0.1
    assert recency_signal(NOW - timedelta(days=3650), NOW) == 0.1
    assert recency_signal(None, NOW) == 0.5
    assert recency_signal(NOW + timedelta(days=30), NOW) == 1.0


def test_recency_is_linear_inside_the_year() -> None:
    assert recency_signal(NOW - timedelta(days=73), NOW) == pytest.approx(0.8)


def test_naive_datetimes_are_utc() -> None:
    naive_now = datetime(2025, 6, 1, 12, 0)
    assert recency_signal(datetime(2025, 6, 1, 12, 0), NOW) == 1.0
    assert recency_signal(NOW - timedelta(days=73), naive_now) == pytest.approx(0.8)
    plus_two = timezone(timedelta(hours=2))
    assert as_utc(datetime(2025, 6, 1, 14, 0, tzinfo=plus_two)) == NOW
    assert as_utc(naive_now) == NOW


@given(moments, moments)
def test_recency_bounds_and_monotonic(a: datetime, b: datetime) -> None:
    older, newer = sorted((a, b))
    ro, rn = recency_signal(older, NOW), recency_signal(newer, NOW)
    assert 0.1 <= ro <= rn <= 1.0


# --- temporal proximity -------------------------------------------------------------

YEAR_2023 = TimeWindow(datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC), "year")


def test_proximity_neutral_without_window_or_date() -> None:
    assert temporal_proximity_signal(NOW, None) == 0.5
    assert temporal_proximity_signal(None, YEAR_2023) == 0.5


def test_proximity_centre_edge_and_beyond() -> None:
    assert temporal_proximity_signal(YEAR_2023.centre, YEAR_2023) == 1.0
    assert temporal_proximity_signal(YEAR_2023.start, YEAR_2023) == 0.0
    assert temporal_proximity_signal(YEAR_2023.end, YEAR_2023) == 0.0
    assert temporal_proximity_signal(datetime(2030, 1, 1, tzinfo=UTC), YEAR_2023) == 0.0
    quarter = YEAR_2023.start + (YEAR_2023.end - YEAR_2023.start) / 4
    assert temporal_proximity_signal(quarter, YEAR_2023) == pytest.approx(0.5)


def test_proximity_open_window_measures_from_anchor() -> None:
    anchor = datetime(2024, 3, 1, tzinfo=UTC)
    before = TimeWindow(anchor - timedelta(days=100), anchor, "span", "before", anchor)
    assert temporal_proximity_signal(anchor, before) == 1.0
    assert temporal_proximity_signal(anchor - timedelta(days=25), before) == pytest.approx(0.5)
    assert temporal_proximity_signal(anchor - timedelta(days=50), before) == 0.0
    assert temporal_proximity_signal(anchor - timedelta(days=90), before) == 0.0


def test_proximity_single_day_window_uses_half_day_half_width() -> None:
    day = TimeWindow(datetime(2024, 5, 5, tzinfo=UTC), datetime(2024, 5, 5, tzinfo=UTC), "day")
    assert temporal_proximity_signal(datetime(2024, 5, 5, tzinfo=UTC), day) == 1.0
    assert temporal_proximity_signal(datetime(2024, 5, 5, 6, tzinfo=UTC), day) == pytest.approx(0.5)


@given(moments, moments, st.integers(1, 4000))
def test_proximity_in_unit_interval_and_decreasing_with_distance(a: datetime, b: datetime, days: int) -> None:
    start = datetime(2020, 1, 1, tzinfo=UTC)
    window = TimeWindow(start, start + timedelta(days=days))
    da, db = abs(a - window.centre), abs(b - window.centre)
    pa, pb = temporal_proximity_signal(a, window), temporal_proximity_signal(b, window)
    assert 0.0 <= pa <= 1.0
    if da <= db:
        assert pa >= pb


# --- proof ----------------------------------------------------------------------------


@pytest.mark.parametrize(("count", "expected"), [(1, 0.5), (3, 0.61), (10, 0.73), (150, 1.0)])
def test_proof_seed_table(count: int, expected: float) -> None:
    assert round(proof_signal(count), 2) == expected


def test_proof_below_one_is_neutral() -> None:
    assert proof_signal(0) == 0.5
    assert proof_signal(-3) == 0.5


@given(st.integers(1, 10**9), st.integers(1, 10**9))
def test_proof_monotonic_and_bounded(a: int, b: int) -> None:
    lo, hi = sorted((a, b))
    assert 0.5 <= proof_signal(lo) <= proof_signal(hi) <= 1.0
    assert proof_signal(lo) == min(1.0, 0.5 + math.log(lo) / 10)


# --- combined -------------------------------------------------------------------------


def test_combined_extremes_match_seed() -> None:
    best, _ = combined_score(1.0, recency=1.0, temporal=1.0, proof=1.0)
    worst, _ = combined_score(1.0, recency=0.0, temporal=0.0, proof=0.0)
    assert round(best - 1, 2) == 0.27
    assert round(1 - worst, 2) == 0.23


def test_combined_neutral_is_identity_and_components_reported() -> None:
    final, parts = combined_score(0.42, recency=0.5, temporal=0.5, proof=0.5)
    assert final == pytest.approx(0.42)
    assert parts["cross_encoder_score_normalized"] == 0.42
    assert parts["recency_boost"] == parts["temporal_boost"] == parts["proof_boost"] == 1.0
    assert parts["combined_score"] == final


def test_combined_product_example() -> None:
    final, parts = combined_score(0.8, recency=1.0, temporal=0.0, proof=proof_signal(10))
    assert final == pytest.approx(0.8 * 1.1 * 0.9 * (1 + 0.1 * (proof_signal(10) - 0.5)))
    assert parts["proof_boost"] == pytest.approx(1.023, abs=1e-3)


def test_custom_alphas() -> None:
    final, _ = combined_score(1.0, recency=1.0, temporal=0.5, proof=0.5, alphas=(1.0, 0.0, 0.0))
    assert final == pytest.approx(1.5)


@given(unit, unit, unit, unit)
def test_combined_within_seed_range(ce: float, r: float, t: float, p: float) -> None:
    final, _ = combined_score(ce, recency=r, temporal=t, proof=p)
    assert 0.9 * 0.9 * 0.95 * ce - 1e-12 <= final <= 1.1 * 1.1 * 1.05 * ce + 1e-12


@given(unit, unit, unit, unit, unit)
def test_combined_monotonic_in_each_signal(ce: float, r: float, t: float, p: float, r2: float) -> None:
    lo, hi = sorted((r, r2))
    assert (
        combined_score(ce, recency=lo, temporal=t, proof=p)[0] <= combined_score(ce, recency=hi, temporal=t, proof=p)[0]
    )


@pytest.mark.parametrize("bad", [-0.01, 1.01, math.nan])
def test_combined_rejects_out_of_range_inputs(bad: float) -> None:
    with pytest.raises(ValueError):
        combined_score(bad, recency=0.5, temporal=0.5, proof=0.5)
    with pytest.raises(ValueError):
        combined_score(0.5, recency=0.5, temporal=bad, proof=0.5)


def test_open_window_gives_nothing_to_the_wrong_side_of_the_anchor() -> None:
    from datetime import UTC, datetime

    from tempr.core.boosts import temporal_proximity_signal
    from tempr.core.types import TimeWindow

    anchor = datetime(2022, 9, 12, tzinfo=UTC)
    before = TimeWindow(datetime(2012, 9, 12, tzinfo=UTC), anchor, "span", open_side="before", anchor=anchor)
    assert temporal_proximity_signal(datetime(2022, 6, 1, tzinfo=UTC), before) > 0.9
    assert temporal_proximity_signal(datetime(2023, 1, 1, tzinfo=UTC), before) == 0.0
