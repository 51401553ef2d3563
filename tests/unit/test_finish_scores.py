"""tempr.recall.finish: the boost-free shortcut scores and orders exactly as the full path does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core.types import FusedCandidate
from tempr.recall.finish import _ranked, _score

NOW = datetime(2024, 6, 1, tzinfo=UTC)


def _plan(*, trace: bool) -> Any:
    return SimpleNamespace(request=SimpleNamespace(trace=trace), now=NOW, windows=[])


rows = st.lists(
    st.tuples(
        st.floats(min_value=0.0, max_value=1.0),  # the reranker's score
        st.none() | st.integers(min_value=0, max_value=3000),  # days before NOW (None: undated)
        st.integers(min_value=0, max_value=50),  # proof count
        st.booleans(),  # still in the bank
    ),
    max_size=40,
)


@given(rows)
def test_with_every_boost_off_the_shortcut_is_the_full_computation(data: list[tuple[float, Any, int, bool]]) -> None:
    candidates = [FusedCandidate(f"m{i}", 0.0, {}, {}) for i in range(len(data))]
    ce = {f"m{i}": score for i, (score, _, _, _) in enumerate(data)}
    units = {
        f"m{i}": {"event_date": None if days is None else NOW - timedelta(days=days), "proof_count": proof}
        for i, (_, days, proof, kept) in enumerate(data)
        if kept
    }
    full = _score(_plan(trace=True), candidates, ce, units, (0.0, 0.0, 0.0))  # a trace takes the full path
    assert [{k: s[k] for k in ("id", "final", "order")} for s in full] == _ranked(candidates, ce, units)
    assert _score(_plan(trace=False), candidates, ce, units, (0.0, 0.0, 0.0)) == _ranked(candidates, ce, units)


def test_the_shortcut_refuses_what_combined_score_refuses() -> None:
    candidates = [FusedCandidate("m0", 0.0, {}, {})]
    with pytest.raises(ValueError, match="ce must be in"):
        _ranked(candidates, {"m0": 1.5}, {"m0": {"event_date": None, "proof_count": 1}})


@given(
    st.datetimes(
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5, minutes=-30))])
    ),
    st.integers(min_value=-14, max_value=14),
)
def test_dates_print_as_isoformat_even_when_an_equal_instant_was_printed_first(when: datetime, hours: int) -> None:
    from tempr.recall.finish import _iso

    elsewhere = when.astimezone(timezone(timedelta(hours=hours)))  # the same instant, another offset
    assert elsewhere == when
    assert _iso(when) == when.isoformat() and _iso(elsewhere) == elsewhere.isoformat()
    assert _iso(when) == when.isoformat()  # memoised, still its own offset
    assert _iso(None) is None
