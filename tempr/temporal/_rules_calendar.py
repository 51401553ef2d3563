"""English calendar units: dates, months, quarters, halves, seasons, weekdays,
decades, centuries and years.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from tempr.core.types import TimeWindow
from tempr.temporal import _calendar as cal
from tempr.temporal._engine import YEAR, Atom, Ctx, make_atom, rule, suffix_year, year_suffix
from tempr.temporal._lexicon import (
    ALL_MONTHS,
    AMBIGUOUS_MONTHS,
    COUNT_NOUNS,
    DECADE_WORDS,
    MONTH_CUES,
    NOT_PLURAL,
    ORDINAL_NUM,
    PERIOD_WORDS,
    SEASON_CUES,
    SEASONS,
    WEEKDAY_CUES,
    WEEKDAYS,
    YEAR_PREPOSITIONS,
    alt,
)

MON = alt(ALL_MONTHS)
_DAY = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th)?"
_NOT_MORE_DIGITS = r"(?!\d|\s*(?:[:.]\d|-\s*\d|(?:to|through|until|till|and)\s+(?:the\s+)?\d))"

_PREV_WORD = re.compile(r"([^\W\d_][\w']*)[\s,]*$")
_NEXT_WORD = re.compile(r"\s*([^\W\d_][\w']*)")


def prev_word(text: str, pos: int) -> str:
    """The word just before ``pos`` (only spaces/commas between), or ''."""
    m = _PREV_WORD.search(text, max(0, pos - 30), pos)
    return m.group(1) if m else ""


def next_word(text: str, pos: int) -> str:
    m = _NEXT_WORD.match(text, pos)
    return m.group(1) if m else ""


def _month_resolver(mm: int) -> cal.Resolver:
    return lambda y: cal.month(y, mm)


def _day_resolver(mm: int, dd: int) -> cal.Resolver:
    def resolve(y: int) -> TimeWindow | None:
        d = cal.safe_date(y, mm, dd)
        return cal.day(d) if d else None

    return resolve


def _dated(m: re.Match[str], ctx: Ctx, resolve: cal.Resolver, kind: str, mod: str | None = None) -> Atom | None:
    y = suffix_year(m, ctx)
    if y is not None:
        return make_atom(m, resolve(y), kind)
    return make_atom(m, ctx.choose(resolve, mod), kind, resolve=resolve)


# --- dates with a day ------------------------------------------------------------------


@rule(
    "month-day-range",
    5,
    rf"(?P<core>(?P<mon>{MON})\b\.?\s+(?P<d1>[0-3]?\d)(?:st|nd|rd|th)?\s*(?:-|to|through|until|till)\s*"
    rf"(?P<d2>[0-3]?\d)(?:st|nd|rd|th)?(?!\d){year_suffix()})",
    MONTH_CUES,
)
def month_day_range(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return _day_range(m, ctx)


@rule(
    "day-range-month",
    5,
    rf"(?<![\w.,:/-])(?P<core>(?:the\s+)?(?P<d1>[0-3]?\d)(?:st|nd|rd|th)?\s*(?:-|to|through|until|till)\s*"
    rf"(?:the\s+)?(?P<d2>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{MON})\b\.?{year_suffix()})",
    MONTH_CUES,
)
def day_range_month(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return _day_range(m, ctx)


def _day_range(m: re.Match[str], ctx: Ctx) -> Atom | None:
    mm, d1, d2 = ALL_MONTHS[m["mon"]], int(m["d1"]), int(m["d2"])
    if d1 >= d2:
        return None

    def resolve(y: int) -> TimeWindow | None:
        a, b = cal.safe_date(y, mm, d1), cal.safe_date(y, mm, d2)
        return cal.days(a, b) if a and b else None

    return _dated(m, ctx, resolve, "span")


@rule(
    "month-day",
    10,
    rf"(?P<core>(?P<mon>{MON})\b\.?\s+(?:the\s+)?{_DAY}{_NOT_MORE_DIGITS}\b{year_suffix()})",
    MONTH_CUES,
)
def month_day(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return _dated(m, ctx, _day_resolver(ALL_MONTHS[m["mon"]], int(m["d"])), "date")


@rule(
    "day-month",
    10,
    rf"(?<![\w.,:/-])(?P<core>(?:the\s+)?{_DAY}\s+(?:of\s+)?(?P<mon>{MON})\b\.?{year_suffix()})",
    MONTH_CUES,
)
def day_month(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return _dated(m, ctx, _day_resolver(ALL_MONTHS[m["mon"]], int(m["d"])), "date")


@rule(
    "on-the-nth",
    10,
    rf"\b(?:on|since|until|by|before|after|(?:on\s+)?(?P<wd>{alt(WEEKDAYS)}),?)\s+(?P<core>the\s+(?P<d>[0-3]?\d)"
    r"(?:st|nd|rd|th))(?=\s*(?:[?.!,;]|$|(?:at|in|when|what|did|was|were|we|i|they|he|she)\b))",
    frozenset({"#digit"}),
)
def on_the_nth(m: re.Match[str], ctx: Ctx) -> Atom | None:
    """ "on the 5th": this month's 5th if it has passed, else last month's; with a
    weekday ("Tuesday the 4th") the most recent month where the 4th is a Tuesday."""
    dd, wd = int(m["d"]), WEEKDAYS.get(m["wd"] or "")
    for back in range(0, 13 if wd is not None else 3):
        y, mm = cal.add_months(ctx.today.year, ctx.today.month, -back)
        d = cal.safe_date(y, mm, dd)
        if d and (d <= ctx.today or ctx.future) and (wd is None or d.weekday() == wd):
            start = m.start("wd") if m["wd"] else m.start("core")
            return Atom(start, m.end("core"), cal.day(d), "date")
    return None


# --- quarters, halves, weeks -------------------------------------------------------------


@rule(
    "quarter",
    20,
    rf"(?<![\w-])(?P<core>q(?P<q>[1-4])(?:\s*[-/]\s*(?P<y2>\d{{4}}|\d\d)(?!\d))?{year_suffix()})\b",
    frozenset({"#digit"}),
)
def quarter_q(m: re.Match[str], ctx: Ctx) -> Atom | None:
    q = int(m["q"])
    if m["y2"]:
        y = int(m["y2"]) if len(m["y2"]) == 4 else ctx.two_digit_year(m["y2"])
        return make_atom(m, cal.quarter(y, q), "quarter")
    return _dated(m, ctx, lambda y: cal.quarter(y, q), "quarter")


@rule("year-quarter", 20, rf"(?P<core>(?P<y>{YEAR})\s*[-/]?\s*q(?P<q>[1-4]))\b", frozenset({"#digit"}))
def year_quarter(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, cal.quarter(int(m["y"]), int(m["q"])), "quarter")


@rule(
    "ordinal-quarter",
    20,
    rf"(?P<core>(?:the\s+)?(?P<o>first|second|third|fourth|1st|2nd|3rd|4th|final|last)\s+quarter\b{year_suffix()})",
    frozenset({"quarter"}),
)
def ordinal_quarter(m: re.Match[str], ctx: Ctx) -> Atom | None:
    q = ORDINAL_NUM[m["o"]]
    if q == -1:
        if suffix_year(m, ctx) is None:
            return None  # "last quarter" is the previous quarter (relative rules)
        q = 4
    return _dated(m, ctx, lambda y: cal.quarter(y, q), "quarter")


@rule(
    "half",
    20,
    rf"(?<![\w-])(?P<core>h(?P<h>[12])\s*(?:[-/]\s*(?P<y2>\d{{4}}|\d\d)(?!\d)|{year_suffix()}))\b",
    frozenset({"#digit"}),
)
def half_h(m: re.Match[str], ctx: Ctx) -> Atom | None:
    h = int(m["h"])
    y: int | None
    if m["y2"]:
        y = int(m["y2"]) if len(m["y2"]) == 4 else ctx.two_digit_year(m["y2"])
    else:
        y = suffix_year(m, ctx)
    return make_atom(m, cal.half(y, h), "half") if y is not None else None


@rule("year-half", 20, rf"(?P<core>(?P<y>{YEAR})\s*[-/]?\s*h(?P<h>[12]))\b", frozenset({"#digit"}))
def year_half(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, cal.half(int(m["y"]), int(m["h"])), "half")


@rule(
    "week-number",
    20,
    rf"(?P<core>(?:calendar\s+)?week\s+(?P<w>\d{{1,2}})\s*(?:,\s*|of\s+|in\s+)?(?P<y>{YEAR}))",
    frozenset({"week"}),
)
def week_number(m: re.Match[str], ctx: Ctx) -> Atom | None:
    try:
        monday = date.fromisocalendar(int(m["y"]), int(m["w"]), 1)
    except ValueError:
        return None
    return make_atom(m, cal.week(monday), "week")


# --- seasons -----------------------------------------------------------------------------

_SEASON_PRE = (
    r"(?:in|during|over|throughout|since|until|till|before|after|by|from|through|to|and|for|of|between|around)"
)
_NOT_SEASON_NOUN = (
    r"(?!\s+(?:boot|framework|cloud|mvc|security|data|batch|roll|rolls|break|water|semester|term"
    r"|training|collection|cleaning|clean|festival|olympics|intern|internship|camp|school|course)\b)"
)


@rule(
    "season",
    20,
    rf"(?P<pre>\b{_SEASON_PRE}\s+(?:the\s+)?|\bthe\s+)?(?P<core>(?:(?P<mod>{PERIOD_WORDS})\s+)?"
    rf"(?P<s>spring|summer|autumn|fall|winter)\b{year_suffix()}){_NOT_SEASON_NOUN}",
    SEASON_CUES,
)
def season(m: re.Match[str], ctx: Ctx) -> Atom | None:
    name, mod, pre = SEASONS[m["s"]], m["mod"], (m["pre"] or "").strip()
    explicit = suffix_year(m, ctx)
    if mod is None and explicit is None:
        if not pre or (m["s"] in ("spring", "fall") and pre == "the"):
            return None
        if m["s"] == "fall" and re.match(r"\s+of\s+(?!the\s+year)", ctx.text[m.end() :]):
            return None  # "the fall of Rome"

    def resolve(y: int) -> TimeWindow:
        return cal.season(y, name, ctx.hemisphere)

    if explicit is not None:
        return make_atom(m, resolve(explicit), "season")
    return make_atom(m, ctx.choose(resolve, mod), "season", resolve=resolve)


# --- weekdays ------------------------------------------------------------------------------

_POST = r"before\s+last|after\s+next|(?:of\s+)?(?:last|this|next)\s+week"


@rule(
    "weekday",
    30,
    rf"(?<!every\s)(?<!each\s)(?P<core>(?:(?P<mod>{PERIOD_WORDS})\s+)?(?P<wd>{alt(WEEKDAYS)})\b"
    rf"(?:\s+(?P<post>{_POST}))?)"
    r"(?!\s*,?\s*(?:the\s+)?(?:\x00|\d))(?!\s+(?:before|after|following)\s)",
    WEEKDAY_CUES,
)
def weekday(m: re.Match[str], ctx: Ctx) -> Atom | None:
    wd, mod, post, today = WEEKDAYS[m["wd"]], m["mod"], " ".join((m["post"] or "").split()), ctx.today
    this_week = today - timedelta(days=today.weekday()) + timedelta(days=wd)
    if post.endswith("week"):
        shift = {"last": -7, "this": 0, "next": 7}[post.split()[-2]]
        return make_atom(m, cal.day(this_week + timedelta(days=shift)), "date")
    before = today - timedelta(days=(today.weekday() - wd) % 7 or 7)  # strictly before today
    after = today + timedelta(days=(wd - today.weekday()) % 7 or 7)  # strictly after today
    mode = {"last": "last", "past": "last", "previous": "last", "this": "this", "current": "this"}.get(
        mod or "", "next" if mod else ("future" if ctx.future else "past")
    )
    if post == "before last":
        d = before - timedelta(days=7)
    elif post == "after next":
        d = after + timedelta(days=7)
    elif mode == "last":
        d = before
    elif mode == "next":
        d = after
    elif mode == "this":
        d = this_week
    elif today.weekday() == wd:
        d = today
    else:
        d = after if mode == "future" else before
    return make_atom(m, cal.day(d), "date")


# --- months without a day ------------------------------------------------------------------

_MONTH_PRE = (
    r"(?:in|during|since|until|till|before|after|through|throughout|from|between|to|and|of|by|for"
    r"|around|early|late|starting|ending)"
)
_STRICT_PRE = frozenset(
    "in during since until till before after through throughout from between to and of early late "
    "starting ending".split()
)
_RANGE_BEFORE = re.compile(rf"(?:\x00|\d|\b{MON}\b)")
_RANGE_AFTER = re.compile(rf"\s*(?:-|to|through|until|till|and)\s+{MON}\b")


@rule(
    "month",
    22,
    rf"(?P<pre>\b{_MONTH_PRE}\s+(?:the\s+(?:month\s+of\s+)?)?|\bmid-\s*)?(?P<core>(?:(?P<mod>{PERIOD_WORDS})\s+)?"
    rf"(?P<mon>{MON})\b\.?{year_suffix()})",
    MONTH_CUES,
)
def month_name(m: re.Match[str], ctx: Ctx) -> Atom | None:
    name, mod = m["mon"], m["mod"]
    mm = ALL_MONTHS[name]
    pre = (m["pre"] or "").split()
    word = pre[0] if pre else ""
    if mod is None and suffix_year(m, ctx) is None and name in AMBIGUOUS_MONTHS:
        if word.startswith("mid"):
            word = "mid"
        elif word not in _STRICT_PRE:
            if not _RANGE_AFTER.match(ctx.text, m.end()):  # "March to June 2023"
                return None
            word = "range"
        if word in ("to", "and") and not _RANGE_BEFORE.search(ctx.text, max(0, m.start() - 30), m.start()):
            return None
    return _dated(m, ctx, _month_resolver(mm), "month", mod)


# --- decades and centuries -----------------------------------------------------------------

_DECADE = (
    r"(?<![\w.,:/-])(?:(?P<the>the\s+)?(?:(?P<part>early|mid|late)[\s-]+)?"
    rf"(?:(?P<c>1[89]|20|21)(?P<d>\d)0'?s|'(?P<d3>\d)0'?s|(?P<d2>\d)0'?s|(?P<w>{alt(DECADE_WORDS)})))\b"
)


@rule(
    "decade",
    40,
    rf"(?P<pre>\b(?:my|his|her|their|your|our|its|one's|aged?|over|under|in\s+(?:my|his|her|their|your|our))\s+)?"
    rf"(?P<core>{_DECADE})",
    frozenset({"#digit"}) | frozenset(DECADE_WORDS),
)
def decade(m: re.Match[str], ctx: Ctx) -> Atom | None:
    """ "the 90s", "the 1990s", "'90s", "the nineties", "the late 80s"; not ages ("in her 30s")."""
    if m["pre"] or ((m["d2"] or m["w"]) and not m["the"]):
        return None
    if m["c"]:
        first = int(m["c"]) * 100 + int(m["d"]) * 10
    else:
        tens = DECADE_WORDS[m["w"]] if m["w"] else int(m["d2"] or m["d3"])
        first = 2000 + tens * 10
        if first > ctx.ref.year:
            first -= 100
    window = cal.decade(first)
    return make_atom(m, cal.thirds(window, m["part"]) if m["part"] else window, "decade")


@rule("century", 40, r"(?P<core>(?:the\s+)?(?P<n>1\d|2[0-2]|[1-9])(?:st|nd|rd|th)\s+century)\b", frozenset({"century"}))
def century(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, cal.century((int(m["n"]) - 1) * 100), "century")


# --- bare years ------------------------------------------------------------------------------


_ARITHMETIC = re.compile(r"\s*(?:and|plus|minus|times|divided\s+by|[-+*/x×])\s*(?!(?:1[89]|2[01])\d\d\b)\d")
_WEAK_BEFORE = frozenset({"", "the", "and", "or", "to", "for", "about", "than", "vs", "versus"})


@rule("year", 50, rf"(?P<core>{YEAR}|(?<=\s)'(?P<yy>\d\d)(?![\w']))", frozenset({"#digit"}), lang="*")
def bare_year(m: re.Match[str], ctx: Ctx) -> Atom | None:
    text, start, end = ctx.text, m.start(), m.end()
    before, after = prev_word(text, start), next_word(text, end)
    if text.startswith("'s", end):
        return make_atom(m, cal.year(int(m.group())), "year")
    if after in COUNT_NOUNS or _ARITHMETIC.match(text, end):
        return None
    if before in _WEAK_BEFORE and after.endswith("s") and len(after) > 3 and after not in NOT_PLURAL:
        return None  # "2023 users signed up"; but "pre-2020 projects", "in 2019 reports" stay years
    if m["yy"]:
        if before not in YEAR_PREPOSITIONS:
            return None
        return make_atom(m, cal.year(ctx.two_digit_year(m["yy"])), "year")
    if before and before not in YEAR_PREPOSITIONS:
        return None
    attributive = before == "the" and bool(after) and after not in YEAR_PREPOSITIONS
    return make_atom(m, cal.year(int(m.group())), "year", attributive=attributive)


RULES = (
    month_day_range,
    day_range_month,
    month_day,
    day_month,
    on_the_nth,
    quarter_q,
    year_quarter,
    ordinal_quarter,
    half_h,
    year_half,
    week_number,
    season,
    weekday,
    month_name,
    decade,
    century,
    bare_year,
)
