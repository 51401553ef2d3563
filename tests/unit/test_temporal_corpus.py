"""The table-driven corpus: every case asserts the exact windows (or none) and anchors."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, time

import pytest

from tempr.core.types import EventAnchor, TimeWindow
from tempr.temporal import analyse

try:
    from .temporal_corpus import A, Case, W, all_cases
except ImportError:
    from temporal_corpus import A, Case, W, all_cases

CASES = all_cases()
LANGUAGES = ("es", "fr", "de", "it", "pt", "ru", "zh", "ja", "ko")


def _day(value: str) -> datetime:
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def _expected_window(w: W) -> TimeWindow:
    start = _day(w.start)
    end = datetime.combine(_day(w.end).date(), time.max, tzinfo=UTC)
    return TimeWindow(start, end, w.granularity, w.open_side, _day(w.anchor) if w.anchor else None)


def _strip(w: TimeWindow) -> TimeWindow:
    return TimeWindow(w.start, w.end, w.granularity, w.open_side, w.anchor)


def _describe(case: Case) -> str:
    return f"{case.category}: {case.query!r} @ {case.ref.date()}"


@pytest.mark.parametrize("case", CASES, ids=[f"{c.category}:{c.query}" for c in CASES])
def test_corpus_case(case: Case) -> None:
    result = analyse(case.query, case.ref, hemisphere=case.hemisphere, languages=case.languages)
    windows = [_expected_window(e) for e in case.expect if isinstance(e, W)]
    anchors = [(e.side, e.event) for e in case.expect if isinstance(e, A)]
    assert [_strip(w) for w in result.windows] == windows, _describe(case)
    assert [(a.side, a.event) for a in result.anchors] == anchors, _describe(case)


def test_corpus_size_and_coverage() -> None:
    counts = Counter(c.category for c in CASES)
    assert len(CASES) >= 250
    assert counts["no-window"] >= 60
    for lang in LANGUAGES:
        assert counts[f"multilingual-{lang}"] >= 10, lang
    for category in ("calendar", "relative", "holiday", "range", "anchor"):
        assert counts[category] >= 10, category


def test_corpus_queries_are_unique_per_reference() -> None:
    keys = Counter((c.query, c.ref, c.hemisphere, c.languages) for c in CASES)
    assert [k for k, n in keys.items() if n > 1] == []


def test_windows_are_utc_and_ordered() -> None:
    for case in CASES:
        for w in analyse(case.query, case.ref, hemisphere=case.hemisphere).windows:
            assert w.start.tzinfo is UTC and w.end.tzinfo is UTC
            assert w.start <= w.end
            assert w.source


def test_anchor_results_are_event_anchors() -> None:
    result = analyse("What happened before Alice joined Google?", datetime(2024, 6, 15))
    assert result.anchors == (EventAnchor("before", "Alice joined Google", "before Alice joined Google"),)
    assert result.windows == ()
    assert result.has_time_reference
