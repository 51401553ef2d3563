"""Numeric date forms (any language): ISO dates, d/m/y and m/d/y, 2023-05, 05/2023,
2019-2021, 2023-W12. They run before the number guards so that "05.01.2023"
is read as a date before "05.01" could be taken for a version number.
"""

from __future__ import annotations

import re
from datetime import date

from tempr.core.types import TimeWindow
from tempr.temporal import _calendar as cal
from tempr.temporal._engine import Atom, Ctx, make_atom, rule

DIGIT = frozenset({"#digit"})
ANY = "*"  # numeric forms are language-neutral
_Y = r"(?:1[89]|2[01])\d\d"
_L = r"(?<![\w.,:/-])"  # left edge: not inside a word or another number
_R = r"(?![\w]|[.,:/-]\d)"  # right edge


@rule("iso-date", 0, rf"{_L}(?P<y>{_Y})(?P<s>[-/.])(?P<m>\d{{1,2}})(?P=s)(?P<d>\d{{1,2}})(?!\d|[.-]\d)", DIGIT, ANY)
def iso_date(m: re.Match[str], ctx: Ctx) -> Atom | None:
    d = cal.safe_date(int(m["y"]), int(m["m"]), int(m["d"]))
    return make_atom(m, cal.day(d) if d else None, "date")


@rule(
    "numeric-date", 0, rf"{_L}(?P<a>\d{{1,2}})(?P<s>[/.-])(?P<b>\d{{1,2}})(?P=s)(?P<y>\d{{4}}|\d{{2}}){_R}", DIGIT, ANY
)
def numeric_date(m: re.Match[str], ctx: Ctx) -> Atom | None:
    a, b, sep, ys = int(m["a"]), int(m["b"]), m["s"], m["y"]
    if len(ys) == 2 and sep == ".":
        return None  # 1.2.23 is far more often a version than a date
    y = ctx.two_digit_year(ys) if len(ys) == 2 else int(ys)
    if sep == "." or a > 12:
        dd, mm = a, b
    elif b > 12:
        dd, mm = b, a
    else:
        dd, mm = (a, b) if ctx.dmy else (b, a)
    d = cal.safe_date(y, mm, dd)
    return make_atom(m, cal.day(d) if d else None, "date")


@rule("iso-month", 0, rf"{_L}(?P<y>{_Y})[-/](?P<m>0[1-9]|1[0-2]){_R}", DIGIT, ANY)
def iso_month(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, cal.month(int(m["y"]), int(m["m"])), "month")


@rule("month-slash-year", 0, rf"{_L}(?P<m>0?[1-9]|1[0-2])/(?P<y>{_Y}){_R}", DIGIT, ANY)
def month_slash_year(m: re.Match[str], ctx: Ctx) -> Atom | None:
    return make_atom(m, cal.month(int(m["y"]), int(m["m"])), "month")


@rule("year-range", 0, rf"{_L}(?P<a>{_Y})\s*-\s*(?P<b>{_Y}|\d\d){_R}", DIGIT, ANY)
def year_range(m: re.Match[str], ctx: Ctx) -> Atom | None:
    a = int(m["a"])
    b = int(m["b"]) if len(m["b"]) == 4 else a // 100 * 100 + int(m["b"])
    if not a < b <= a + 100:
        return None
    w = cal.year(a)
    return make_atom(m, TimeWindow(w.start, cal.year(b).end, "span"), "span")


@rule("iso-week", 0, rf"{_L}(?P<y>{_Y})-?w(?P<w>\d{{1,2}}){_R}", DIGIT, ANY)
def iso_week(m: re.Match[str], ctx: Ctx) -> Atom | None:
    try:
        monday = date.fromisocalendar(int(m["y"]), int(m["w"]), 1)
    except ValueError:
        return None
    return make_atom(m, cal.week(monday), "week")


RULES = (iso_date, numeric_date, iso_month, month_slash_year, year_range, iso_week)
