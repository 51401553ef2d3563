"""Window helpers for the recall pipeline: open windows from resolved event
anchors, temporal proximity, and time buckets for spreading a selection across
a window.

Conventions (the same as :func:`tempr.temporal.analyse`): timezone-aware UTC,
both ends inclusive, ``end`` = start of the next unit minus 1 µs.
"""

from __future__ import annotations

from datetime import datetime

from tempr.core.types import TimeWindow
from tempr.temporal._calendar import US, add_years, as_utc, end_of_day
from tempr.temporal._combine import HORIZON_YEARS

NEUTRAL = 0.5  # proximity of an undated memory, or of any memory when the query has no window

_BUCKETS = {"day": 4, "weekend": 4, "week": 7, "month": 5, "quarter": 6, "season": 6, "half": 6, "year": 12,
            "decade": 10, "century": 10}
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
        return TimeWindow(add_years(anchor, -horizon_years), anchor - US, "span", open_side="before", anchor=anchor,
                          source="event anchor")
    start = as_utc(anchor_end or anchor_date) + US
    ref_end = end_of_day(as_utc(reference).date())
    end = ref_end if ref_end > start else add_years(start, horizon_years)
    return TimeWindow(start, end, "span", open_side="after", anchor=start, source="event anchor")


def proximity(window: TimeWindow, when: datetime | None) -> float:
    """How close ``when`` is to what the window is about, in [0, 1].

    Closed windows: ``1 - min(|when - centre| / (length / 2), 1)`` (1 at the centre,
    0 at the edges and outside). Open windows ("before/after/since X"): measured
    from the anchor across the window's length, so the memories just before or
    just after the event score highest; 0 outside the window. ``None`` -> 0.5.
    """
    if when is None:
        return NEUTRAL
    when = as_utc(when)
    if window.open_side is not None and window.anchor is not None:
        if not window.start <= when <= window.end:
            return 0.0
        length = (window.end - window.start).total_seconds()
        if length <= 0:
            return 1.0
        return 1.0 - min(abs((when - window.anchor).total_seconds()) / length, 1.0)
    half = (window.end - window.start).total_seconds() / 2
    if half <= 0:
        return 1.0 if when == window.start else 0.0
    return 1.0 - min(abs((when - window.centre).total_seconds()) / half, 1.0)


def bucket_count(window: TimeWindow) -> int:
    """How many equal time buckets to spread a selection over, from the granularity:
    a year -> 12 (about months), a week -> 7 (days), a month -> 5 (about weeks), a
    day -> 4; ranges by length (days up to a week, then weeks, months, years; 4..12);
    open windows -> 8."""
    if window.open_side is not None:
        return _OPEN_BUCKETS
    if window.granularity in _BUCKETS:
        return _BUCKETS[window.granularity]
    days = window.days
    for unit in (1, 7, 30.44, 365.25):
        if days / unit <= 12:
            return max(4, min(12, round(days / unit)))
    return 12


def bucket_index(window: TimeWindow, when: datetime | None, buckets: int | None = None) -> int:
    """The bucket (0-based) ``when`` falls in; undated memories and dates outside the
    window are clamped to the first/last bucket."""
    n = buckets or bucket_count(window)
    if when is None:
        return 0
    span = (window.end - window.start).total_seconds()
    if span <= 0:
        return 0
    index = int((as_utc(when) - window.start).total_seconds() / span * n)
    return max(0, min(n - 1, index))


def bucket_bounds(window: TimeWindow, buckets: int | None = None) -> list[tuple[datetime, datetime]]:
    """The buckets as ``[start, end)`` pairs (the last one closed at ``window.end``)."""
    n = buckets or bucket_count(window)
    step = (window.end - window.start) / n
    edges = [window.start + step * i for i in range(n)] + [window.end]
    return list(zip(edges[:-1], edges[1:], strict=True))
