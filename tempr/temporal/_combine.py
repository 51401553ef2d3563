"""Second pass over the atoms: modifiers ("early 2022", "the week of March 5"),
year-first phrases ("last year in May"), ranges ("between March and June 2023")
and open sides ("since January", "before 2020").
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date, datetime, timedelta

from tempr.core.types import TimeWindow
from tempr.temporal import _calendar as cal
from tempr.temporal._engine import Atom, Ctx
from tempr.temporal._lexicon import DAY_ORDINALS, ORDINAL_NUM, WEEKDAYS, alt
from tempr.temporal._text import EN_NUMBERS

HORIZON_YEARS = 10  # how far back "before X" reaches (and how far "after X" reaches into the future)

_NUM = r"(?:\d{1,3}|" + "|".join(sorted(EN_NUMBERS, key=len, reverse=True)) + ")"
_MODIFIER = re.compile(
    rf"""(?:
      \b(?:the\s+)?(?P<part>early|mid|late)[\s-]*
    | \b(?:the\s+)?(?P<edge>beginning|start|middle|end)\s+of\s+(?:the\s+)?
    | \b(?:the\s+)?(?P<half>first|second|1st|2nd)\s+half\s+of\s+(?:the\s+)?
    | \b(?:the\s+)?(?P<nth>first|second|third|fourth|last|final|1st|2nd|3rd|4th)\s+(?P<sub>week|weekend|day)\s+of\s+
      (?:the\s+)?
    | \bthe\s+(?P<of>week|weekend)\s+of\s+
    | \b(?:the\s+)?(?P<rel>day|week|weekend|month|year)\s+(?P<dir>before|after|following|prior\s+to)\s+(?:the\s+)?
    | \b(?P<n>{_NUM})\s+(?P<nu>days?|weeks?)\s+(?P<ndir>before|after|following|prior\s+to)\s+(?:the\s+)?
    | \b(?:the\s+)?(?P<wd>{alt(WEEKDAYS)})\s+(?P<wdir>before|after|following)\s+(?:the\s+)?
    | \b(?:the\s+)?(?P<dom>\d{{1,2}}|{alt(DAY_ORDINALS)})(?:st|nd|rd|th)?\s+(?:day\s+)?of\s+(?:the\s+)?
    )$""",
    re.VERBOSE,
)
_EDGE = {"beginning": "early", "start": "early", "middle": "mid", "end": "late"}
_NTH = ORDINAL_NUM  # "the first/second/.../last <day, week, weekend> of <window>": 1, 2, ..., -1
_SPLITTABLE = frozenset({"year", "month", "decade", "century", "season", "quarter", "half", "week", "span"})

_YEAR_FIRST_GAP = re.compile(r"^\s*,?\s*(?:in|during|at|on)?\s*(?:the\s+)?$")
_CONNECTOR = re.compile(
    r"^\s*(?:(?P<to>-|to|until|till|through|thru)|(?P<xto>hasta|a|au|jusqu'a|jusqu'au|bis|al|fino\s+al?|ate|по|до)"
    r"|(?P<and>and|&|y|et|und|e|и))\s*(?:the\s+|el\s+|le\s+|il\s+|o\s+)?$"
)
_RANGE_PREFIX = re.compile(
    r"\b(?:(?P<between>between|entre|zwischen|tra|fra|между)|(?P<from>from|de|desde|du|von|vom|da|dal|dalla|с|со|от))"
    r"\s+(?:the\s+|el\s+|le\s+|il\s+|o\s+)?$"
)
_OPEN = re.compile(
    r"""(?:^|(?<=[\s,(\x00]))(?:
      (?P<since>(?:ever\s+)?since|starting(?:\s+(?:in|from|on|with))?|as\s+of|beginning\s+(?:in|with)
        |desde|depuis|seit|ab|dal|dalla|da|с|со)
    | (?P<after>after|post|following|despues\s+del?|apres|nach|dopo|depois\s+de|depois\s+do|depois\s+da|после)
    | (?P<before>before|prior\s+to|pre|antes\s+del?|antes\s+do|antes\s+da|avant|vor|prima\s+d(?:i|el|ella)|до)
    | (?P<until>until|till|til|up\s+(?:to|until)|through|thru|by|hasta|jusqu'a|jusqu'au|jusqu'en|bis|fino\s+al?|ate|по)
    )\s+(?:the\s+|el\s+|la\s+|le\s+|l'|il\s+|o\s+)?$""",
    re.VERBOSE,
)


def _tail(text: str, pos: int, width: int = 48) -> tuple[str, int]:
    start = max(0, pos - width)
    return text[start:pos], start


def _weekend_before(d: date) -> TimeWindow:
    sunday = d - timedelta(days=(d.weekday() + 1) % 7 or 7)  # strictly before d
    return cal.days(sunday - timedelta(days=1), sunday, "weekend")


def _weekend_after(d: date) -> TimeWindow:
    saturday = d + timedelta(days=(5 - d.weekday()) % 7 or 7)
    return cal.days(saturday, saturday + timedelta(days=1), "weekend")


def _apply_modifier(m: re.Match[str], w: TimeWindow) -> TimeWindow | None:
    first, last = w.start.date(), w.end.date()
    if m["part"] or m["edge"]:
        if w.granularity not in _SPLITTABLE:
            return None
        return cal.thirds(w, m["part"] or _EDGE[m["edge"]])
    if m["half"]:
        return cal.halves(w, 1 if m["half"] in ("first", "1st") else 2) if w.granularity in _SPLITTABLE else None
    if m["nth"]:
        n, sub = _NTH[m["nth"]], m["sub"]
        if sub == "day":
            return cal.day(first if n == 1 else last if n == -1 else first + timedelta(days=n - 1))
        if sub == "week":
            lo = last - timedelta(days=6) if n == -1 else first + timedelta(days=7 * (n - 1))
            return cal.days(lo, lo + timedelta(days=6), "week") if lo + timedelta(days=6) <= last else None
        saturdays = [
            first + timedelta(days=i)
            for i in range((last - first).days + 1)
            if (first + timedelta(days=i)).weekday() == 5
        ]
        if not saturdays or abs(n) > len(saturdays):
            return None
        sat = saturdays[n - 1 if n > 0 else -1]
        return cal.days(sat, sat + timedelta(days=1), "weekend")
    if m["of"]:
        if w.granularity != "day":
            return None
        return cal.week(first) if m["of"] == "week" else cal.weekend_of_week(first)
    if m["rel"]:
        before = m["dir"] in ("before",) or m["dir"].startswith("prior")
        unit = m["rel"]
        if unit == "day":
            return cal.day(first - timedelta(days=1) if before else last + timedelta(days=1))
        if unit == "weekend":
            return _weekend_before(first) if before else _weekend_after(last)
        span = {"week": 7, "month": 30, "year": 365}[unit]
        if before:
            return cal.days(first - timedelta(days=span), first - timedelta(days=1))
        return cal.days(last + timedelta(days=1), last + timedelta(days=span))
    if m["wd"]:
        wd = WEEKDAYS[m["wd"]]
        if m["wdir"] == "before":
            return cal.day(first - timedelta(days=(first.weekday() - wd) % 7 or 7))
        return cal.day(last + timedelta(days=(wd - last.weekday()) % 7 or 7))
    if m["dom"]:
        if w.granularity != "month":
            return None
        dom = m["dom"]
        d = cal.safe_date(first.year, first.month, int(dom) if dom.isdigit() else DAY_ORDINALS[" ".join(dom.split())])
        return cal.day(d) if d else None
    n_text = m["n"]
    n = int(n_text) if n_text.isdigit() else EN_NUMBERS.get(n_text, 0)
    offset = timedelta(days=n * (7 if m["nu"].startswith("week") else 1))
    point = first - offset if m["ndir"] in ("before",) or m["ndir"].startswith("prior") else last + offset
    return cal.day(point) if m["nu"].startswith("day") else cal.week(point)


def apply_modifiers(atoms: list[Atom], text: str) -> list[Atom]:
    out = []
    for a in atoms:
        tail, offset = _tail(text, a.start)
        m = _MODIFIER.search(tail)
        w = _apply_modifier(m, a.window) if m else None
        out.append(replace(a, start=offset + m.start(), window=w, kind="span", resolve=None) if m and w else a)
    return out


def merge_year_first(atoms: list[Atom], text: str) -> list[Atom]:
    """ "last year in May", "in 2023, at Christmas": a year then a year-less atom."""
    out: list[Atom] = []
    for a in atoms:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.window.granularity == "year"
            and a.resolve is not None
            and not prev.attributive
            and _YEAR_FIRST_GAP.match(text[prev.end : a.start])
        ):
            w = a.resolve(prev.window.start.year)
            if w is not None:
                out[-1] = Atom(prev.start, a.end, w, a.kind)
                continue
        out.append(a)
    return out


def _range_window(a: Atom, b: Atom) -> TimeWindow:
    wa, wb = a.window, b.window
    if a.resolve is not None:
        cand = a.resolve(wb.start.year)
        if cand is not None and cand.start > wb.start:
            cand = a.resolve(wb.start.year - 1)
        wa = cand or wa
    elif b.resolve is not None:
        cand = b.resolve(wa.start.year)
        if cand is not None and cand.end < wa.start:
            cand = b.resolve(wa.start.year + 1)
        wb = cand or wb
    if wa.start > wb.start:
        wa, wb = wb, wa
    return TimeWindow(wa.start, max(wa.end, wb.end), "span")


def merge_ranges(atoms: list[Atom], text: str) -> list[Atom]:
    out: list[Atom] = []
    i = 0
    while i < len(atoms):
        a = atoms[i]
        if (
            i + 1 < len(atoms)
            and not a.attributive
            and not atoms[i + 1].attributive
            and "recent" not in (a.kind, atoms[i + 1].kind)
        ):
            b = atoms[i + 1]
            conn = _CONNECTOR.match(text[a.end : b.start])
            tail, offset = _tail(text, a.start)
            prefix = _RANGE_PREFIX.search(tail)
            ok = conn is not None and (
                (conn["to"] and True)
                or (conn["xto"] and prefix is not None)
                or (conn["and"] and prefix and prefix["between"])
            )
            if ok:
                start = offset + prefix.start() if prefix else a.start
                out.append(Atom(start, b.end, _range_window(a, b), "span"))
                i += 2
                continue
        out.append(a)
        i += 1
    return out


def open_window(side: str, w: TimeWindow, ref_end: datetime) -> TimeWindow:
    """since / after / before / until applied to a calendar window."""
    if side in ("since", "after"):
        start = w.start if side == "since" else w.end + cal.US
        end = ref_end if ref_end > start else cal.add_years(start, HORIZON_YEARS)
        return TimeWindow(start, end, "span", open_side="after", anchor=start)
    anchor = w.start if side == "before" else w.end + cal.US
    return TimeWindow(cal.add_years(anchor, -HORIZON_YEARS), anchor - cal.US, "span", open_side="before", anchor=anchor)


def apply_open_sides(atoms: list[Atom], text: str, ctx: Ctx) -> list[Atom]:
    ref_end = cal.end_of_day(ctx.today)
    out = []
    for a in atoms:
        tail, offset = _tail(text, a.start)
        m = _OPEN.search(tail)
        possessive = text.startswith("'s", a.end)
        if m and not a.attributive and not possessive and a.kind != "recent":
            side = next(k for k in ("since", "after", "before", "until") if m[k])
            out.append(Atom(offset + m.start(), a.end, open_window(side, a.window, ref_end), "open"))
        else:
            out.append(a)
    return out
