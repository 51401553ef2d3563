"""The public API of tempr.temporal: arguments, conventions, window_from_anchor, bucket_count,
purity and the dateparser fallback's reach."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone

import pytest

from tempr.core.types import TemporalAnalysis, TimeWindow
from tempr.temporal import (
    HORIZON_YEARS,
    RECENT_DAYS,
    SUPPORTED_LANGUAGES,
    _fallback,
    analyse,
    bucket_count,
    warm_up,
    window_from_anchor,
)

try:
    from .temporal_corpus import all_cases
except ImportError:
    from temporal_corpus import all_cases

REF = datetime(2024, 6, 15, 12, tzinfo=UTC)
US = timedelta(microseconds=1)


def test_supported_languages() -> None:
    assert SUPPORTED_LANGUAGES == ("en", "es", "fr", "de", "it", "pt", "ru", "zh", "ja", "ko")


def test_empty_and_blank_queries() -> None:
    assert analyse("", REF) == TemporalAnalysis()
    assert analyse("   ", REF) == TemporalAnalysis()


def test_naive_reference_is_utc() -> None:
    assert analyse("yesterday", datetime(2024, 6, 15, 12)) == analyse("yesterday", REF)


def test_aware_reference_is_converted_to_utc() -> None:
    late_evening_in_new_york = datetime(2024, 6, 15, 23, 30, tzinfo=timezone(timedelta(hours=-5)))
    (w,) = analyse("today", late_evening_in_new_york).windows
    assert w.start == datetime(2024, 6, 16, tzinfo=UTC)


def test_end_is_the_last_microsecond_of_the_unit() -> None:
    (w,) = analyse("in 2023", REF).windows
    assert w.end + US == datetime(2024, 1, 1, tzinfo=UTC)
    assert w.start.tzinfo is UTC and w.end.tzinfo is UTC


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="hemisphere"):
        analyse("last summer", REF, hemisphere="east")
    with pytest.raises(ValueError, match="unsupported language"):
        analyse("last summer", REF, languages=["xx"])


def test_language_codes_are_normalised() -> None:
    assert analyse("hace 3 días", REF, languages="es-ES").windows  # type: ignore[arg-type]
    assert analyse("hace 3 días", REF, languages=["ES"]).windows


def test_languages_restrict_the_rule_sets() -> None:
    assert analyse("hace 3 días", REF, languages=["en"]) == TemporalAnalysis()
    assert analyse("yesterday", REF, languages=["de"]) == TemporalAnalysis()
    assert analyse("in 2023", REF, languages=["de"]).windows  # years and numeric dates are language-neutral


def test_recently_is_the_last_30_days() -> None:
    (w,) = analyse("what happened recently", REF).windows
    assert RECENT_DAYS == 30
    assert w.start == datetime(2024, 5, 16, tzinfo=UTC)
    assert w.end == datetime(2024, 6, 16, tzinfo=UTC) - US


def test_multiple_windows_in_order() -> None:
    result = analyse("what changed in 2022 and in 2023", REF)
    assert [w.start.year for w in result.windows] == [2022, 2023]


def test_windows_survive_the_json_round_trip() -> None:
    for w in analyse("since January", REF).windows + analyse("Q3 2023", REF).windows:
        assert TimeWindow.from_dict(w.to_dict()) == w


# --- window_from_anchor ---------------------------------------------------------------------------


def test_before_anchor() -> None:
    joined = datetime(2021, 3, 1, 9, 30, tzinfo=UTC)
    w = window_from_anchor("before", joined, REF)
    assert (w.open_side, w.anchor, w.end) == ("before", joined, joined - US)
    assert w.start == joined.replace(year=2021 - HORIZON_YEARS)
    assert w.centre == joined


def test_after_anchor_runs_to_the_end_of_the_reference_day() -> None:
    joined = datetime(2021, 3, 1, 9, 30, tzinfo=UTC)
    w = window_from_anchor("after", joined, REF)
    assert (w.open_side, w.start, w.anchor) == ("after", joined + US, joined + US)
    assert w.end == datetime(2024, 6, 16, tzinfo=UTC) - US


def test_after_anchor_uses_the_event_end_when_given() -> None:
    start, end = datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 5, 3, tzinfo=UTC)
    assert window_from_anchor("after", start, REF, anchor_end=end).start == end + US


def test_anchor_synonyms_naive_dates_and_future_events() -> None:
    assert window_from_anchor("since", datetime(2020, 1, 1), REF).open_side == "after"
    assert window_from_anchor("until", datetime(2020, 1, 1), REF).open_side == "before"
    future = window_from_anchor("after", datetime(2030, 1, 1), REF)
    assert future.start < future.end
    assert future.start.tzinfo is UTC
    with pytest.raises(ValueError):
        window_from_anchor("around", REF, REF)


def test_leap_day_anchor() -> None:
    w = window_from_anchor("before", datetime(2024, 2, 29, tzinfo=UTC), REF)
    assert w.start == datetime(2014, 2, 28, tzinfo=UTC)


# --- bucket_count ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "buckets"),
    [
        ("in 2023", 12),
        ("last week", 7),
        ("last month", 5),
        ("Q3 2023", 6),
        ("last summer", 6),
        ("yesterday", 4),
        ("the 90s", 10),
        ("since January", 8),
        ("in the last 10 days", 11),
        ("between March and June 2023", 4),
        ("from 2010 to 2015", 6),
        ("the past 3 weeks", 4),
    ],
)
def test_bucket_count_follows_granularity(query: str, buckets: int) -> None:
    (w,) = analyse(query, REF).windows
    assert bucket_count(w) == buckets


def test_bucket_count_is_bounded() -> None:
    start = datetime(1900, 1, 1, tzinfo=UTC)
    for days in (0, 1, 5, 40, 400, 4000, 40000):
        n = bucket_count(TimeWindow(start, start + timedelta(days=days)))
        assert 4 <= n <= 12


# --- purity and the fallback -----------------------------------------------------------------------


def test_import_is_pure_and_light() -> None:
    code = (
        "import sys, tempr.temporal\n"
        "bad = [m for m in ('celery', 'sqlalchemy', 'psycopg', 'redis', 'config', 'dateparser') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_dateparser_is_reached_only_for_foreign_weekdays(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = _fallback._search

    def spy(text: str, lang: str, ref: datetime, future: bool) -> list[tuple[str, datetime]]:
        calls.append(text)
        return real(text, lang, ref, future)

    monkeypatch.setattr(_fallback, "_search", spy)
    for case in all_cases():
        analyse(case.query, case.ref, hemisphere=case.hemisphere, languages=case.languages)
    assert sorted(calls) == sorted(
        [
            "¿Qué hice el lunes pasado?",
            "Qu'ai-je fait lundi dernier ?",
            "Was habe ich letzten Montag gemacht?",
            "月曜日に何をしましたか",
        ]
    )


def test_warm_up_returns_seconds() -> None:
    assert warm_up(["en", "es"]) >= 0.0
