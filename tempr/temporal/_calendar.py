"""Calendar arithmetic: unit windows in UTC and "which year did they mean" resolution.

Every window is ``[start, end]`` with ``start`` the first microsecond of the
first day and ``end`` the last microsecond of the last day (the start of the
next unit minus 1 µs), timezone-aware UTC.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from tempr.core.types import TimeWindow

US = timedelta(microseconds=1)
DAY = timedelta(days=1)
MIN_YEAR, MAX_YEAR = 1800, 2199

# Seasons as (start month, length in months); a season "of year Y" starts in Y,
# so northern winter 2023 is Dec 2023 - Feb 2024.
_SEASON_START = {
    "north": {"spring": 3, "summer": 6, "autumn": 9, "winter": 12},
    "south": {"spring": 9, "summer": 12, "autumn": 3, "winter": 6},
}

Resolver = Callable[[int], TimeWindow | None]


def midnight(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


def days(first: date, last: date, granularity: str = "span") -> TimeWindow:
    """The whole days ``first``..``last`` (both inclusive)."""
    return TimeWindow(start=midnight(first), end=midnight(last + DAY) - US, granularity=granularity)


def day(d: date) -> TimeWindow:
    return days(d, d, "day")


def end_of_day(d: date) -> datetime:
    return midnight(d + DAY) - US


def week(d: date) -> TimeWindow:
    """The ISO week (Monday to Sunday) containing ``d``."""
    monday = d - timedelta(days=d.weekday())
    return days(monday, monday + timedelta(days=6), "week")


def weekend_of_week(d: date) -> TimeWindow:
    """Saturday and Sunday of the ISO week containing ``d``."""
    saturday = d - timedelta(days=d.weekday()) + timedelta(days=5)
    return days(saturday, saturday + DAY, "weekend")


def add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def shift_months(d: date, delta: int) -> date:
    y, m = add_months(d.year, d.month, delta)
    return date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


def shift_years(d: date, delta: int) -> date:
    y = d.year + delta
    return date(y, d.month, min(d.day, calendar.monthrange(y, d.month)[1]))


def months(year: int, month: int, count: int, granularity: str) -> TimeWindow:
    """``count`` calendar months starting with ``year``-``month``."""
    ey, em = add_months(year, month, count)
    return TimeWindow(
        start=datetime(year, month, 1, tzinfo=UTC),
        end=datetime(ey, em, 1, tzinfo=UTC) - US,
        granularity=granularity,
    )


def month(year: int, m: int) -> TimeWindow:
    return months(year, m, 1, "month")


def quarter(year: int, q: int) -> TimeWindow:
    return months(year, 3 * (q - 1) + 1, 3, "quarter")


def half(year: int, h: int) -> TimeWindow:
    return months(year, 6 * (h - 1) + 1, 6, "half")


def year(y: int) -> TimeWindow:
    return months(y, 1, 12, "year")


def decade(first_year: int) -> TimeWindow:
    return months(first_year, 1, 120, "decade")


def century(first_year: int) -> TimeWindow:
    return months(first_year, 1, 1200, "century")


def season(y: int, name: str, hemisphere: str = "north") -> TimeWindow:
    start = _SEASON_START["south" if hemisphere == "south" else "north"][name]
    return months(y, start, 3, "season")


def season_of(d: date, hemisphere: str) -> tuple[str, int]:
    """The season containing ``d`` and the year that season is named by."""
    for name, start in _SEASON_START["south" if hemisphere == "south" else "north"].items():
        for y in (d.year, d.year - 1):
            w = months(y, start, 3, "season")
            if w.start.date() <= d <= w.end.date():
                return name, y
    raise AssertionError("seasons cover the year")  # pragma: no cover


def safe_date(y: int, m: int, d: int) -> date | None:
    if not (1 <= m <= 12 and MIN_YEAR <= y <= MAX_YEAR):
        return None
    if not 1 <= d <= calendar.monthrange(y, m)[1]:
        return None
    return date(y, m, d)


def add_years(dt: datetime, n: int) -> datetime:
    """``dt`` moved by ``n`` calendar years (29 Feb -> 28 Feb), kept within datetime's range."""
    y = min(max(dt.year + n, 1), 9999)
    return dt.replace(year=y, day=min(dt.day, calendar.monthrange(y, dt.month)[1]))


def pick(resolve: Resolver, ref: datetime, mode: str) -> TimeWindow | None:
    """Choose the year for a year-less expression ("May", "Christmas", "Q3", "spring").

    ``past``: the most recent one starting on or before ``ref`` (the default);
    ``future``: the one containing ``ref`` or the next one; ``last``: the most
    recent one that ended before ``ref``; ``next``: the first one starting after
    ``ref``; ``this``: the one containing ``ref``, else the one of ``ref``'s year.
    """
    candidates = [w for y in range(ref.year - 2, ref.year + 3) if (w := resolve(y)) is not None]
    if mode == "past":
        found = [w for w in candidates if w.start <= ref]
        return found[-1] if found else None
    if mode == "last":
        found = [w for w in candidates if w.end < ref]
        return found[-1] if found else None
    if mode == "next":
        found = [w for w in candidates if w.start > ref]
        return found[0] if found else None
    if mode == "future":
        found = [w for w in candidates if w.end >= ref]
        return found[0] if found else None
    containing = [w for w in candidates if w.start <= ref <= w.end]
    return containing[0] if containing else resolve(ref.year)


def with_granularity(w: TimeWindow, granularity: str) -> TimeWindow:
    return TimeWindow(start=w.start, end=w.end, granularity=granularity)


def thirds(w: TimeWindow, part: str) -> TimeWindow:
    """early / mid / late part of a window, aligned to its natural sub-unit."""
    index = {"early": 0, "mid": 1, "late": 2}[part]
    if w.granularity == "year":
        return months(w.start.year, 1 + 4 * index, 4, "span")
    if w.granularity in ("decade", "century"):
        size = 10 if w.granularity == "decade" else 100
        bounds = [(0, 3), (4, 6), (7, 9)] if size == 10 else [(0, 32), (33, 65), (66, 99)]
        lo, hi = bounds[index]
        y0 = w.start.year
        return months(y0 + lo, 1, 12 * (hi - lo + 1), "span")
    if w.granularity == "month":
        last = w.end.date().day
        lo, hi = [(1, 10), (11, 20), (21, last)][index]
        return days(w.start.date().replace(day=lo), w.start.date().replace(day=hi))
    first, final = w.start.date(), w.end.date()
    total = (final - first).days + 1
    begin = first + timedelta(days=total * index // 3)
    end = first + timedelta(days=total * (index + 1) // 3 - 1)
    return days(begin, max(begin, end))


def halves(w: TimeWindow, which: int) -> TimeWindow:
    """First (1) or second (2) half of a window."""
    if w.granularity == "year":
        return half(w.start.year, which)
    first, last = w.start.date(), w.end.date()
    total = (last - first).days + 1
    mid = first + timedelta(days=(total + 1) // 2)
    return days(first, mid - DAY) if which == 1 else days(mid, last)
