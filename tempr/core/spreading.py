"""Temporal spreading: pick in-window memories that cover the whole window.

The temporal strategy first selects candidates inside the query's window by
*semantic relevance* (never recency, so the best in-window memory is not dropped
because others are newer). Ranking them by relevance alone would then cluster on
the densest stretch: "what happened in 2023?" would answer with one busy week.
So the window is cut into ``buckets`` equal time slices and the selection goes in
rounds: each round takes the best remaining candidate of every populated bucket,
ordered among themselves by relevance. Every populated bucket thus contributes
once before any contributes twice, and the strongest memories still lead.

For open-ended windows ("before Alice joined Google") the window's far end is
arbitrary, so the slices divide the span between the earliest and latest candidate
instead. Candidates dated outside the range are clamped into the first or last
bucket rather than dropped: the SQL selected them for overlapping the window.
The returned id order is the temporal strategy's ranking for RRF.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from tempr.core.timeutil import as_utc
from tempr.core.types import TimeWindow

SpreadCandidate = tuple[str, datetime, float]
"""(memory id, the memory's date, semantic relevance to the query)."""


def bucket_index(date: datetime, start: datetime, span_seconds: float, buckets: int) -> int:
    """The slice of ``[start, start + span]`` holding ``date``, clamped to the ends.

    A zero-length span puts everything in bucket 0.
    """
    if span_seconds <= 0:
        return 0
    offset = (as_utc(date) - as_utc(start)).total_seconds()
    raw = math.floor(offset / span_seconds * buckets)
    return max(0, min(buckets - 1, raw))


def _range(window: TimeWindow, dates: Sequence[datetime]) -> tuple[datetime, float]:
    """The start and length (seconds) of the stretch to slice."""
    if window.open_side is not None and dates:
        earliest = min(dates, key=as_utc)
        latest = max(dates, key=as_utc)
        return earliest, (as_utc(latest) - as_utc(earliest)).total_seconds()
    return window.start, (as_utc(window.end) - as_utc(window.start)).total_seconds()


def _relevance(value: float) -> float:
    """NaN relevance sorts last instead of poisoning the ordering."""
    return -math.inf if math.isnan(value) else value


def _dedupe(candidates: Sequence[SpreadCandidate]) -> list[SpreadCandidate]:
    """One entry per id, keeping its highest relevance (first seen on ties)."""
    best: dict[str, SpreadCandidate] = {}
    for candidate in candidates:
        held = best.get(candidate[0])
        if held is None or _relevance(candidate[2]) > _relevance(held[2]):
            best[candidate[0]] = candidate
    return list(best.values())


def _fill_buckets(
    candidates: Sequence[SpreadCandidate], window: TimeWindow, buckets: int
) -> list[list[SpreadCandidate]]:
    """Candidates per bucket, each bucket sorted best first (relevance desc, then id)."""
    start, span = _range(window, [c[1] for c in candidates])
    slices: list[list[SpreadCandidate]] = [[] for _ in range(buckets)]
    for candidate in candidates:
        slices[bucket_index(candidate[1], start, span, buckets)].append(candidate)
    for members in slices:
        members.sort(key=lambda c: (-_relevance(c[2]), c[0]))
    return slices


def _round_picks(slices: Sequence[Sequence[SpreadCandidate]], round_no: int) -> list[SpreadCandidate]:
    """The ``round_no``-th best of every bucket that has one, strongest first."""
    picks = [(b, members[round_no]) for b, members in enumerate(slices) if len(members) > round_no]
    picks.sort(key=lambda p: (-_relevance(p[1][2]), p[0], p[1][0]))
    return [candidate for _, candidate in picks]


def spread_across_buckets(
    candidates: Sequence[SpreadCandidate],
    window: TimeWindow,
    *,
    buckets: int,
    limit: int,
) -> list[str]:
    """Select up to ``limit`` ids round-robin over time buckets; returns them in order.

    The result has ``min(limit, number of distinct ids)`` entries, no duplicates.
    """
    if buckets < 1:
        raise ValueError(f"buckets must be >= 1, got {buckets}")
    if limit <= 0:
        return []
    slices = _fill_buckets(_dedupe(candidates), window, buckets)
    deepest = max(len(members) for members in slices)
    selected: list[str] = []
    for round_no in range(deepest):
        for candidate in _round_picks(slices, round_no):
            if len(selected) == limit:
                return selected
            selected.append(candidate[0])
    return selected
