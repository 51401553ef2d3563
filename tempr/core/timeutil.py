"""Two small conventions used everywhere: UTC datetimes and millisecond timings."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def as_utc(moment: datetime) -> datetime:
    """An aware UTC datetime; naive values are taken to already be UTC."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def ms(seconds: float) -> float:
    """Seconds as milliseconds, rounded to 0.01 ms (negative clock skew reads as 0)."""
    return round(max(seconds, 0.0) * 1000, 2)


def ms_since(started: float) -> float:
    """Milliseconds since ``started`` (a ``time.perf_counter()`` reading)."""
    return ms(time.perf_counter() - started)
