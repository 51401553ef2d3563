"""Property tests: the analyser's arithmetic holds for any reference date, and it never
raises or returns malformed windows on arbitrary text."""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tempr.temporal import analyse, window_from_anchor

US = timedelta(microseconds=1)
MONTHS = [calendar.month_name[i] for i in range(1, 13)]
refs = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2060, 12, 31)).map(
    lambda d: d.replace(tzinfo=UTC)
)
years = st.integers(min_value=1900, max_value=2100)


def _only(query: str, ref: datetime):
    result = analyse(query, ref)
    assert len(result.windows) == 1, (query, result)
    return result.windows[0]


def _midnight(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), refs)
def test_never_raises_and_windows_are_well_formed(text: str, ref: datetime) -> None:
    result = analyse(text, ref)
    for w in result.windows:
        assert w.start.tzinfo is UTC and w.end.tzinfo is UTC
        assert w.start <= w.end
    for a in result.anchors:
        assert a.side in ("before", "after") and a.event.strip()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            "alice bob the report meeting project launch team google berlin notes budget a of in and what did say".split()
        ),
        max_size=12,
    ),
    refs,
)
def test_plain_words_have_no_time(words: list[str], ref: datetime) -> None:
    assert not analyse(" ".join(words), ref).has_time_reference


@settings(max_examples=100, deadline=None)
@given(years, refs)
def test_in_year(y: int, ref: datetime) -> None:
    w = _only(f"What happened in {y}?", ref)
    assert (w.start, w.end + US, w.granularity) == (
        datetime(y, 1, 1, tzinfo=UTC),
        datetime(y + 1, 1, 1, tzinfo=UTC),
        "year",
    )


@settings(max_examples=100, deadline=None)
@given(years, st.integers(min_value=1, max_value=12), refs)
def test_month_name_and_year(y: int, m: int, ref: datetime) -> None:
    w = _only(f"notes from {MONTHS[m - 1]} {y}", ref)
    assert w.start == datetime(y, m, 1, tzinfo=UTC)
    assert (w.end + US).day == 1 and w.granularity == "month"


@settings(max_examples=100, deadline=None)
@given(years, st.integers(min_value=1, max_value=4), refs)
def test_quarter(y: int, q: int, ref: datetime) -> None:
    w = _only(f"Q{q} {y}", ref)
    assert w.start == datetime(y, 3 * q - 2, 1, tzinfo=UTC)
    assert w.granularity == "quarter"


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=400), refs)
def test_days_ago(n: int, ref: datetime) -> None:
    w = _only(f"{n} days ago", ref)
    assert w.start == _midnight(ref.date() - timedelta(days=n))
    assert w.end == _midnight(ref.date() - timedelta(days=n - 1)) - US


@settings(max_examples=100, deadline=None)
@given(refs)
def test_last_week_precedes_this_week_and_both_are_mondays(ref: datetime) -> None:
    last, this = _only("last week", ref), _only("this week", ref)
    assert last.end + US == this.start
    assert last.start.weekday() == this.start.weekday() == 0
    assert this.start.date() <= ref.date() <= this.end.date()


@settings(max_examples=100, deadline=None)
@given(refs)
def test_the_current_unit_contains_the_reference(ref: datetime) -> None:
    for phrase in ("this month", "this year", "this quarter", "today"):
        w = _only(phrase, ref)
        assert w.start <= ref <= w.end, phrase


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["spring", "summer", "autumn", "winter"]), st.sampled_from(["north", "south"]), refs)
def test_last_season_is_over_and_three_months_long(season: str, hemisphere: str, ref: datetime) -> None:
    (w,) = analyse(f"last {season}", ref, hemisphere=hemisphere).windows
    assert w.end < ref
    assert w.end - w.start > timedelta(days=88) and w.end - w.start < timedelta(days=93)
    assert w.granularity == "season"


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=12), refs)
def test_month_without_year_is_the_most_recent_one(m: int, ref: datetime) -> None:
    w = _only(f"What happened in {MONTHS[m - 1]}?", ref)
    assert w.start <= ref
    assert w.start > ref - timedelta(days=366)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(min_value=0, max_value=100_000),
    st.sampled_from(["people", "users", "items", "rows", "times", "tests", "files", "points", "ms"]),
    refs,
)
def test_counts_are_not_dates(n: int, noun: str, ref: datetime) -> None:
    assert not analyse(f"We have {n} {noun}", ref).has_time_reference


@settings(max_examples=100, deadline=None)
@given(
    st.from_regex(r"[a-z]{1,5}[0-9]{1,6}[a-z0-9]{0,4}", fullmatch=True).filter(
        lambda s: not (len(s) == 2 and s[0] in "qh")
    ),
    refs,
)
def test_identifiers_are_not_dates(token: str, ref: datetime) -> None:
    assert not analyse(f"deploy {token} now", ref).has_time_reference


@settings(max_examples=100, deadline=None)
@given(refs, refs)
def test_window_from_anchor_sides(anchor: datetime, ref: datetime) -> None:
    before = window_from_anchor("before", anchor, ref)
    after = window_from_anchor("after", anchor, ref)
    assert before.start < before.end < anchor == before.anchor
    assert anchor < after.start <= after.end
    assert after.anchor == after.start
