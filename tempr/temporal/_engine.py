"""The rule machinery: rules match spans of the folded query and turn them into atoms.

A rule is a compiled regex plus a handler. Rules run in tier order; each
accepted match masks its span so later (more general) rules cannot re-read it.
A rule only runs when one of its cue tokens is present in the query, which is
what keeps the cost of a temporal query to the few rule families it can use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime

from tempr.core.types import TimeWindow
from tempr.temporal._calendar import MAX_YEAR, MIN_YEAR, Resolver, pick
from tempr.temporal._text import mask_spans


@dataclass(frozen=True)
class Atom:
    """A recognised time expression: its span in the query and its window.

    ``resolve`` is set when the year was implied ("in May", "Christmas") so
    ranges and "of last year" can re-resolve it in another year.
    ``attributive``: a bare year used as a modifier ("the 2020 election").
    """

    start: int
    end: int
    window: TimeWindow
    kind: str
    resolve: Resolver | None = None
    attributive: bool = False


@dataclass
class Ctx:
    ref: datetime
    today: date
    hemisphere: str
    future: bool
    text: str
    dmy: bool = False
    langs: frozenset[str] = field(default_factory=frozenset)

    def choose(self, resolve: Resolver, modifier: str | None = None) -> TimeWindow | None:
        """Pick the year for a year-less expression from its modifier or the tense."""
        mode = MODIFIER_MODE.get(modifier or "", "future" if self.future else "past")
        return pick(resolve, self.ref, mode)

    def two_digit_year(self, yy: str) -> int:
        y = 2000 + int(yy)
        return y if y <= self.ref.year + 10 else y - 100


MODIFIER_MODE = {
    "last": "last",
    "past": "last",
    "previous": "last",
    "the previous": "last",
    "this": "this",
    "current": "this",
    "this coming": "next",
    "next": "next",
    "coming": "next",
    "upcoming": "next",
    "the following": "next",
}

Handler = Callable[[re.Match[str], Ctx], Atom | None]


@dataclass(frozen=True)
class Rule:
    name: str
    tier: int
    pattern: re.Pattern[str]
    handle: Handler
    cues: frozenset[str]
    lang: str = "en"


def rule(name: str, tier: int, pattern: str, cues: Iterable[str], lang: str = "en") -> Callable[[Handler], Rule]:
    """Decorator: ``@rule("month", 40, r"...", MONTH_CUES)`` over a handler."""

    def wrap(fn: Handler) -> Rule:
        return Rule(name, tier, re.compile(pattern, re.VERBOSE), fn, frozenset(cues), lang)

    return wrap


def make_atom(
    m: re.Match[str],
    window: TimeWindow | None,
    kind: str,
    resolve: Resolver | None = None,
    group: str = "core",
    attributive: bool = False,
) -> Atom | None:
    if window is None or not (window.start.year >= MIN_YEAR and window.end.year <= MAX_YEAR):
        return None
    start, end = m.span(group) if group in m.re.groupindex and m.group(group) is not None else m.span()
    return Atom(start, end, window, kind, resolve, attributive)


def run_rules(rules: Iterable[Rule], ctx: Ctx, tokens: frozenset[str] | set[str]) -> list[Atom]:
    atoms: list[Atom] = []
    for r in rules:
        if r.cues.isdisjoint(tokens):
            continue
        found = [a for m in r.pattern.finditer(ctx.text) if (a := r.handle(m, ctx)) is not None]
        if found:
            ctx.text = mask_spans(ctx.text, [(a.start, a.end) for a in found])
            atoms.extend(found)
    atoms.sort(key=lambda a: a.start)
    return atoms


# --- shared regex fragments (folded text: lower-case, Latin accents stripped) ------------

YEAR = r"(?<![\w.,:/-])(?:1[89]|2[01])\d\d(?![\w]|[.,:/]\d|-\d)"
APOS_YEAR = r"'\d\d(?![\w'])"


def year_suffix(n: str = "") -> str:
    """Optional ", 2023" / "of 2023" / "'23" / "of last year" after a year-less expression."""
    return (
        rf"(?:\s*,?\s*(?:of\s+|in\s+)?(?:(?P<y{n}>{YEAR})|'(?P<yy{n}>\d\d)(?![\w'])"
        rf"|(?P<ry{n}>last|this|next|the\s+previous|the\s+following|the)\s+year\b))?"
    )


def suffix_year(m: re.Match[str], ctx: Ctx, n: str = "") -> int | None:
    if m.group(f"y{n}"):
        return int(m.group(f"y{n}"))
    if m.group(f"yy{n}"):
        return ctx.two_digit_year(m.group(f"yy{n}"))
    rel = m.group(f"ry{n}")
    if rel:
        mode = MODIFIER_MODE.get(" ".join(rel.split()), "this")
        return ctx.ref.year + {"last": -1, "next": 1}.get(mode, 0)
    return None
