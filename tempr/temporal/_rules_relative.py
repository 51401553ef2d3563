"""English relative expressions: yesterday, N units ago, the past N units,
last/this/next unit, weekends, "recently".

Unit windows are calendar-aligned: "3 weeks ago" is the Monday-Sunday week
containing the day 21 days before the reference, "2 months ago" the whole
calendar month. Rolling windows ("the past 10 days") run from the start of
the day N units back to the end of the reference day.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from tempr.core.types import TimeWindow
from tempr.temporal import _calendar as cal
from tempr.temporal._engine import Atom, Ctx, make_atom, rule
from tempr.temporal._lexicon import FUZZY, FUZZY_ROLLING, NUMBER, UNIT_CUES, UNITS, alt
from tempr.temporal._text import EN_NUMBERS

RECENT_DAYS = 30
_UNIT = alt(UNITS)
_FUZZY = alt(FUZZY)
_SINGLE_UNIT = r"(?:day|week|fortnight|month|quarter|year|decade)"
_CAL_UNIT = r"(?:week|weekend|month|quarter|year|decade|century)"


def shift(unit: str, d: date, n: int) -> date:
    if unit == "day":
        return d + timedelta(days=n)
    if unit in ("week", "fortnight"):
        return d + timedelta(days=7 * n * (2 if unit == "fortnight" else 1))
    if unit == "month":
        return cal.shift_months(d, n)
    if unit == "quarter":
        return cal.shift_months(d, 3 * n)
    return cal.shift_years(d, n * (10 if unit == "decade" else 100 if unit == "century" else 1))


def unit_window(unit: str, d: date) -> TimeWindow:
    if unit == "day":
        return cal.day(d)
    if unit in ("week", "fortnight"):
        return cal.week(d)
    if unit == "weekend":
        return cal.weekend_of_week(d)
    if unit == "month":
        return cal.month(d.year, d.month)
    if unit == "quarter":
        return cal.quarter(d.year, (d.month - 1) // 3 + 1)
    if unit == "year":
        return cal.year(d.year)
    if unit == "decade":
        return cal.decade(d.year // 10 * 10)
    return cal.century(d.year // 100 * 100)


def units_ago(unit: str, today: date, lo: int, hi: int) -> TimeWindow:
    """From the unit ``hi`` units back to the unit ``lo`` units back (calendar-aligned)."""
    first = unit_window(unit, shift(unit, today, -hi))
    if lo == hi:
        return first
    return TimeWindow(first.start, unit_window(unit, shift(unit, today, -lo)).end, "span")


def rolling(unit: str, today: date, n: int) -> TimeWindow:
    """The last ``n`` units up to the end of ``today``."""
    return cal.days(shift(unit, today, -n), today)


def _count(text: str) -> int | None:
    text = " ".join(text.split())
    return int(text) if text.isdigit() else EN_NUMBERS.get(text)


@rule(
    "day-before-yesterday",
    25,
    r"(?P<core>(?:the\s+)?day\s+(?P<w>before\s+yesterday|after\s+tomorrow))\b",
    frozenset({"yesterday", "tomorrow"}),
)
def day_before_yesterday(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, cal.day(ctx.today + timedelta(days=-2 if m["w"].startswith("before") else 2)), "date")


_DAYWORDS = {
    "yesterday": -1,
    "today": 0,
    "tonight": 0,
    "tomorrow": 1,
    "last night": -1,
    "this morning": 0,
    "this afternoon": 0,
    "this evening": 0,
}


@rule(
    "day-word",
    30,
    rf"\b(?P<core>{alt(_DAYWORDS)})\b",
    frozenset({"yesterday", "today", "tonight", "tomorrow", "night", "morning", "afternoon", "evening"}),
)
def day_word(m: re.Match[str], ctx: Ctx) -> Atom | None:
    offset = _DAYWORDS[" ".join(m["core"].split())]
    return make_atom(m, cal.day(ctx.today + timedelta(days=offset)), "date")


@rule("ago", 25, rf"\b(?P<core>(?:(?P<f>{_FUZZY})|(?P<n>{NUMBER}))\s+(?P<u>{_UNIT})\s+(?:ago|back))\b", UNIT_CUES)
def ago(m: re.Match[str], ctx: Ctx) -> Atom | None:
    unit = UNITS[m["u"]]
    if m["f"]:
        lo, hi = FUZZY[" ".join(m["f"].split())]
        return make_atom(m, units_ago(unit, ctx.today, lo, hi), "span")
    n = _count(m["n"])
    if n is None or n > 5000:
        return None
    return make_atom(m, units_ago(unit, ctx.today, n, n), "relative")


@rule(
    "half-year-ago",
    24,
    r"\b(?P<core>(?P<w>half\s+a\s+year|a\s+year\s+and\s+a\s+half|(?:a\s+)?year\s+and\s+a\s+half)\s+ago)\b",
    frozenset({"half"}),
)
def half_year_ago(m: re.Match[str], ctx: Ctx) -> Atom | None:
    months = 6 if m["w"].startswith("half") else 18
    return make_atom(m, units_ago("month", ctx.today, months, months), "relative")


@rule(
    "hours-ago",
    25,
    rf"\b(?P<core>(?:(?P<f>{_FUZZY})|(?P<n>{NUMBER}))\s+(?P<u>hours?|hrs?|minutes?|mins?)\s+ago)\b",
    frozenset({"hour", "hours", "hr", "hrs", "minute", "minutes", "min", "mins"}),
)
def hours_ago(m: re.Match[str], ctx: Ctx) -> Atom | None:
    n = FUZZY[" ".join(m["f"].split())][1] if m["f"] else _count(m["n"])
    if n is None:
        return None
    delta = timedelta(hours=n) if m["u"].startswith("h") else timedelta(minutes=n)
    return make_atom(m, cal.day((ctx.ref - delta).date()), "date")


_PAST_TENSE = re.compile(r"\b(?:did|was|were|had|went|took|spent)\b")


_NUMBER_NO_A = NUMBER.replace("|an?)", ")")
_QUANTITY = re.compile(r"\bhow\s+(?:many|much|long)\b|\bper\b|\btimes\b")


@rule(
    "in-n-units",
    26,
    rf"\b(?:in|within)\s+(?P<core>(?:(?P<f>{_FUZZY})|(?P<n>{_NUMBER_NO_A}))\s+(?P<u>{_UNIT}))\b"
    r"(?!\s+(?:of|ago|back)\b)"
    rf"|\b(?P<core2>(?:(?P<f2>{_FUZZY})|(?P<n2>{NUMBER}))\s+(?P<u2>{_UNIT})\s+from\s+(?:now|today))\b",
    UNIT_CUES,
)
def in_n_units(m: re.Match[str], ctx: Ctx) -> Atom | None:
    if m["core"] and (_PAST_TENSE.search(ctx.text) or _QUANTITY.search(ctx.text)):
        return None  # "what did I learn in 3 months", "how many days in 2 weeks": durations, not dates
    unit = UNITS[m["u"] or m["u2"]]
    f, n = m["f"] or m["f2"], m["n"] or m["n2"]
    group = "core" if m["core"] else "core2"
    if f:
        lo, hi = FUZZY[" ".join(f.split())]
        return make_atom(m, _ahead(unit, ctx.today, lo, hi), "span", group=group)
    count = _count(n)
    if count is None:
        return None
    return make_atom(m, unit_window(unit, shift(unit, ctx.today, count)), "relative", group=group)


def _ahead(unit: str, today: date, lo: int, hi: int) -> TimeWindow:
    first = unit_window(unit, shift(unit, today, lo))
    return TimeWindow(first.start, unit_window(unit, shift(unit, today, hi)).end, "span")


@rule("this-past", 24, r"\b(?P<core>this\s+past\s+(?P<u>week|weekend|month|year))\b", frozenset({"past"}))
def this_past(m: re.Match[str], ctx: Ctx) -> Atom | None:
    unit = m["u"]
    if unit == "weekend":
        return make_atom(m, _last_weekend(ctx.today), "weekend")
    return make_atom(m, unit_window(unit, shift(unit, ctx.today, -1)), "relative")


@rule(
    "rolling",
    25,
    rf"\b(?P<core>(?P<the>the\s+|these\s+)?(?P<w>last|past)\s+(?:(?P<n>{NUMBER})\s+|(?P<f>{alt(FUZZY_ROLLING)}|couple)"
    rf"\s+)?(?P<u>{_UNIT}))\b(?!\s+of\b)",
    UNIT_CUES,
)
def rolling_rule(m: re.Match[str], ctx: Ctx) -> Atom | None:
    unit = UNITS[m["u"]]
    if m["n"]:
        n = _count(m["n"])
    elif m["f"]:
        n = FUZZY_ROLLING.get(" ".join(m["f"].split()), 3)
    elif m["w"] == "past" or m["the"]:
        n = 1
    else:
        return None  # "last week": the previous calendar week, see ``calendar_relative``
    if n is None or n > 5000:
        return None
    return make_atom(m, rolling(unit, ctx.today, n), "span")


@rule("recent-units", 25, r"\b(?:in\s+)?(?P<core>recent\s+(?P<u>days|weeks|months|years))\b", frozenset({"recent"}))
def recent_units(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, rolling(UNITS[m["u"]], ctx.today, 5), "span")


_REL_MOD = {
    "last": -1,
    "previous": -1,
    "the previous": -1,
    "this": 0,
    "current": 0,
    "the current": 0,
    "next": 1,
    "coming": 1,
    "the following": 1,
    "the coming": 1,
}


@rule(
    "calendar-relative",
    30,
    rf"\b(?P<core>(?P<mod>{alt(_REL_MOD)})\s+(?P<u>{_CAL_UNIT}))\b(?!\s+of\s)",
    frozenset({"week", "weekend", "month", "quarter", "year", "decade", "century"}),
)
def calendar_relative(m: re.Match[str], ctx: Ctx) -> Atom | None:
    delta, unit = _REL_MOD[" ".join(m["mod"].split())], m["u"]
    if unit == "weekend":
        base = _last_weekend(ctx.today) if delta == -1 else cal.weekend_of_week(ctx.today + timedelta(days=7 * delta))
        return make_atom(m, base, "weekend")
    kind = "year" if unit == "year" else "relative"
    return make_atom(m, unit_window(unit, shift(unit, ctx.today, delta)), kind)


def _last_weekend(today: date) -> TimeWindow:
    """The weekend of the previous ISO week."""
    return cal.weekend_of_week(today - timedelta(days=7))


@rule(
    "the-weekend",
    31,
    r"\b(?:over|on|at|during|for|this|the)\s+(?:the\s+)?(?P<core>weekend)\b(?!\s+(?:of|before|after))",
    frozenset({"weekend"}),
)
def the_weekend(m: re.Match[str], ctx: Ctx) -> Atom | None:
    wd = ctx.today.weekday()
    if wd >= 5 or ctx.future:
        return make_atom(m, cal.weekend_of_week(ctx.today), "weekend")
    return make_atom(m, _last_weekend(ctx.today), "weekend")


@rule(
    "so-far",
    24,
    r"\b(?P<core>(?:earlier|so\s+far)\s+this\s+(?P<u>week|month|quarter|year)|this\s+(?P<u2>week|month|quarter|year)"
    r"\s+so\s+far|(?P<u3>week|month|quarter|year)[\s-]to[\s-]date|(?P<abbr>ytd|mtd|qtd))\b",
    frozenset({"earlier", "far", "date", "ytd", "mtd", "qtd"}),
)
def so_far(m: re.Match[str], ctx: Ctx) -> Atom | None:
    unit = m["u"] or m["u2"] or m["u3"] or {"ytd": "year", "mtd": "month", "qtd": "quarter"}[m["abbr"]]
    return make_atom(m, cal.days(unit_window(unit, ctx.today).start.date(), ctx.today), "span")


@rule("later-this", 24, r"\b(?P<core>later\s+this\s+(?P<u>week|month|quarter|year))\b", frozenset({"later"}))
def later_this(m: re.Match[str], ctx: Ctx) -> Atom | None:
    w = unit_window(m["u"], ctx.today)
    tomorrow = ctx.today + timedelta(days=1)
    return make_atom(m, cal.days(min(tomorrow, w.end.date()), w.end.date()), "span")


@rule("other-day", 30, r"\b(?P<core>the\s+other\s+day)\b", frozenset({"other"}))
def other_day(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, cal.days(ctx.today - timedelta(days=7), ctx.today - timedelta(days=1)), "span")


@rule(
    "recently",
    32,
    r"(?<!most\s)(?<!more\s)(?<!least\s)\b(?P<core>recently|lately|of\s+late|recent)\b",
    frozenset({"recently", "lately", "late", "recent"}),
)
def recently(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, cal.days(ctx.today - timedelta(days=RECENT_DAYS), ctx.today), "recent")


@rule(
    "of-the-unit",
    33,
    r"\bof\s+(?P<core>the\s+(?P<u>year|month|week))\b(?!\s+(?:before|after|of|that|when|i|we|he|she|they|you)\b)",
    frozenset({"year", "month", "week"}),
)
def of_the_unit(m: re.Match[str], ctx: Ctx) -> Atom | None:
    unit = m["u"]
    return make_atom(m, unit_window(unit, ctx.today), "year" if unit == "year" else "relative")


RULES = (
    half_year_ago,
    hours_ago,
    this_past,
    so_far,
    later_this,
    day_before_yesterday,
    ago,
    rolling_rule,
    recent_units,
    in_n_units,
    day_word,
    calendar_relative,
    other_day,
    the_weekend,
    recently,
    of_the_unit,
)
