"""Window helpers for the recall pipeline: the open window of a resolved event
anchor, and how many time buckets to spread a window's selection over.

Conventions (the same as :func:`tempr.temporal.analyse`): timezone-aware UTC,
both ends inclusive, ``end`` = start of the next unit minus 1 µs.
"""

from __future__ import annotations

from datetime import datetime

from tempr.core.timeutil import as_utc
from tempr.core.types import TimeWindow
from tempr.temporal._calendar import US, add_years, end_of_day
from tempr.temporal._combine import HORIZON_YEARS

_BUCKETS = {
    "day": 4,
    "weekend": 4,
    "week": 7,
    "month": 5,
    "quarter": 6,
    "season": 6,
    "half": 6,
    "year": 12,
    "decade": 10,
    "century": 10,
}
_OPEN_BUCKETS = 8


def window_from_anchor(
    side: str,
    anchor_date: datetime,
    reference: datetime,
    *,
    anchor_end: datetime | None = None,
    horizon_years: int = HORIZON_YEARS,
) -> TimeWindow:
    """The open window for a resolved event anchor.

    ``side`` is the :class:`~tempr.core.types.EventAnchor` side ("before" or
    "after"; "since"/"until" are accepted as synonyms). ``anchor_date`` is when
    the event happened (its start); ``anchor_end`` optionally when it ended
    (events that last: "after the conference").

    * before: ``[anchor - horizon_years, anchor - 1 µs]``, anchor = ``anchor_date``.
    * after:  ``[anchor_end (or anchor) + 1 µs, end of the reference day]``; if the
      event lies after the reference day the window reaches ``horizon_years``
      past it instead.
    """
    side = {"since": "after", "until": "before", "till": "before"}.get(side, side)
    if side not in ("before", "after"):
        raise ValueError(f"side must be 'before' or 'after', not {side!r}")
    anchor = as_utc(anchor_date)
    if side == "before":
        return TimeWindow(
            add_years(anchor, -horizon_years),
            anchor - US,
            "span",
            open_side="before",
            anchor=anchor,
            source="event anchor",
        )
    start = as_utc(anchor_end or anchor_date) + US
    ref_end = end_of_day(as_utc(reference).date())
    end = ref_end if ref_end > start else add_years(start, horizon_years)
    return TimeWindow(start, end, "span", open_side="after", anchor=start, source="event anchor")


def bucket_count(window: TimeWindow) -> int:
    """How many equal time buckets to spread a window's selection over, from its
    granularity: a year -> 12 (about a month each), a quarter/season/half -> 6, a
    month -> 5 (about a week each), a week -> 7 (days), a day or weekend -> 4,
    a decade/century -> 10; ranges by length (days up to a week, then weeks,
    months, years; 4..12); open windows -> 8.

    Use it as ``spread_across_buckets(pool, window, buckets=bucket_count(window), ...)``.
    """
    if window.open_side is not None:
        return _OPEN_BUCKETS
    if window.granularity in _BUCKETS:
        return _BUCKETS[window.granularity]
    days = window.days
    for unit in (1, 7, 30.44, 365.25):
        if days / unit <= 12:
            return max(4, min(12, round(days / unit)))
    return 12
