"""Holidays and named days: fixed dates, Easter (Gregorian computus) and the US
"nth weekday of the month" days. A holiday is a one-day window; without a year
it is the most recent one on or before the reference date (the next one when
the query is in the future tense), "last Christmas" the most recent one that
is over, "next Easter" the first one after the reference date.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from tempr.core.types import TimeWindow
from tempr.temporal import _calendar as cal
from tempr.temporal._engine import Atom, Ctx, make_atom, rule, suffix_year, year_suffix
from tempr.temporal._lexicon import PERIOD_WORDS, alt


def easter(y: int) -> date:
    """Western (Gregorian) Easter Sunday: the anonymous Gregorian algorithm."""
    a, b, c = y % 19, y // 100, y % 100
    d, e = b // 4, b % 4
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    x = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * x) // 451
    month, day = divmod(h + x - 7 * m + 114, 31)
    return date(y, month, day + 1)


def nth_weekday(y: int, month: int, weekday: int, n: int) -> date:
    """The ``n``-th ``weekday`` (0 = Monday) of a month; ``n = -1`` for the last one."""
    if n > 0:
        first = date(y, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    y2, m2 = cal.add_months(y, month, 1)
    last = date(y2, m2, 1) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def _fixed(month: int, day: int) -> Callable[[int], date]:
    return lambda y: date(y, month, day)


def _thanksgiving(y: int) -> date:
    return nth_weekday(y, 11, 3, 4)


HOLIDAYS: dict[str, Callable[[int], date]] = {
    "christmas eve": _fixed(12, 24),
    "christmas day": _fixed(12, 25),
    "christmas": _fixed(12, 25),
    "xmas": _fixed(12, 25),
    "boxing day": _fixed(12, 26),
    "new year's eve": _fixed(12, 31),
    "new years eve": _fixed(12, 31),
    "new year's day": _fixed(1, 1),
    "new years day": _fixed(1, 1),
    "new year's": _fixed(1, 1),
    "new years": _fixed(1, 1),
    "new year": _fixed(1, 1),
    "thanksgiving day": _thanksgiving,
    "thanksgiving": _thanksgiving,
    "black friday": lambda y: _thanksgiving(y) + timedelta(days=1),
    "easter sunday": easter,
    "easter monday": lambda y: easter(y) + timedelta(days=1),
    "good friday": lambda y: easter(y) - timedelta(days=2),
    "easter": easter,
    "halloween": _fixed(10, 31),
    "valentine's day": _fixed(2, 14),
    "valentines day": _fixed(2, 14),
    "valentine's": _fixed(2, 14),
    "st. patrick's day": _fixed(3, 17),
    "st patrick's day": _fixed(3, 17),
    "saint patrick's day": _fixed(3, 17),
    "st. paddy's day": _fixed(3, 17),
    "independence day": _fixed(7, 4),
    "fourth of july": _fixed(7, 4),
    "labor day": lambda y: nth_weekday(y, 9, 0, 1),
    "labour day": lambda y: nth_weekday(y, 9, 0, 1),
    "memorial day": lambda y: nth_weekday(y, 5, 0, -1),
    "mother's day": lambda y: nth_weekday(y, 5, 6, 2),
    "mothers day": lambda y: nth_weekday(y, 5, 6, 2),
    "father's day": lambda y: nth_weekday(y, 6, 6, 3),
    "fathers day": lambda y: nth_weekday(y, 6, 6, 3),
}

HOLIDAY_CUES = frozenset(
    "christmas xmas boxing new thanksgiving black easter good halloween valentine valentines patrick paddy "
    "independence fourth labor labour memorial mother mothers father fathers".split()
)


def resolver(name: str) -> cal.Resolver:
    fn = HOLIDAYS[name]

    def resolve(y: int) -> TimeWindow | None:
        try:
            return cal.day(fn(y))
        except ValueError:
            return None

    return resolve


@rule(
    "holiday",
    20,
    rf"\b(?<!chinese\s)(?<!lunar\s)(?<!jewish\s)(?<!persian\s)(?<!islamic\s)(?<!orthodox\s)"
    rf"(?P<core>(?:(?P<mod>{PERIOD_WORDS})\s+)?(?:the\s+)?(?P<h>{alt(HOLIDAYS)})(?![\w']){year_suffix()})",
    HOLIDAY_CUES,
)
def holiday(m: re.Match[str], ctx: Ctx) -> Atom | None:
    name = " ".join(m["h"].split())
    resolve = resolver(name)
    y = suffix_year(m, ctx)
    if y is not None:
        return make_atom(m, resolve(y), "holiday")
    window = ctx.choose(resolve, m["mod"])
    return make_atom(m, window, "holiday", resolve=resolve)


RULES = (holiday,)
