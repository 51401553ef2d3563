"""Rules for caller text and dates, shared by the recall request and the fact schema.

Text: a NUL character cannot be stored in PostgreSQL ``text`` (the insert fails, a 500), and a lone
surrogate (``"\\ud800"`` is valid JSON) cannot be encoded as UTF-8 by Redis, Celery or the database
driver (a 502). Both are refused up front, as a 422 naming the field.

Dates: Python's datetime covers years 1-9999, and converting ``0001-01-01T00:00+05:00`` to UTC, or
reaching "last year" from year 1, falls off that range (OverflowError, a 500). tempr supports
:data:`MIN_DATE` to :data:`MAX_DATE` (UTC), a century inside each end, so offsets, windows and
relative arithmetic never leave datetime's range; anything outside is a 422.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, StrictStr

MIN_DATE = datetime(100, 1, 1, tzinfo=UTC)
MAX_DATE = datetime(9899, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
RANGE_TEXT = "0100-01-01 to 9899-12-31 (UTC)"


def check_text(value: str) -> str:
    """Refuse NUL and unpaired surrogates (raises ValueError, which pydantic reports by field)."""
    if "\x00" in value:
        raise ValueError("must not contain a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode (it contains a lone surrogate)") from None
    return value


def bad_text(value: str) -> str | None:
    """The reason ``value`` is refused by :func:`check_text`, or None."""
    try:
        check_text(value)
    except ValueError as exc:
        return str(exc)
    return None


CleanStr = Annotated[str, AfterValidator(check_text)]
StrictCleanStr = Annotated[StrictStr, AfterValidator(check_text)]


def to_utc(value: datetime) -> datetime:
    """Aware UTC (naive is taken as UTC); ValueError outside MIN_DATE..MAX_DATE."""
    try:
        aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise ValueError(f"is outside the supported date range {RANGE_TEXT}") from None
    if not MIN_DATE <= aware <= MAX_DATE:
        raise ValueError(f"is outside the supported date range {RANGE_TEXT}")
    return aware
