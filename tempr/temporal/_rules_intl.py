"""Rules for Spanish, French, German, Italian, Portuguese and Russian, built
from the word tables in :mod:`tempr.temporal._lang_tables`.

Each language gets: a date ("5 de mayo de 2023"), a month with a year
("mayo de 2023"), a month after a preposition ("en mayo"), yesterday/today
words, last/this/next week|month|year|weekend, "N units ago" and seasons.
Years ("en 2023", "в 2023 году") are read by the shared year rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from tempr.core.types import TimeWindow
from tempr.temporal import _calendar as cal
from tempr.temporal._engine import YEAR, Atom, Ctx, Rule, make_atom
from tempr.temporal._lang_tables import LANGUAGES
from tempr.temporal._lexicon import alt
from tempr.temporal._rules_relative import shift, unit_window, units_ago
from tempr.temporal._text import fold, strip_accents

_WORD = re.compile(r"[^\W\d_]+")
_L, _R = r"(?<!\w)", r"(?!\w)"


def _numbered(template: str, placeholder: str, group: str, body: str) -> str:
    """Replace each ``{X}`` with its own named group ``(?P<x1>...)``, ``(?P<x2>...)``..."""
    parts = template.split(placeholder)
    out = parts[0]
    for i, part in enumerate(parts[1:], 1):
        out += f"(?P<{group}{i}>{body})" + part
    return out


def _first(m: re.Match[str], group: str) -> str | None:
    for name, value in m.groupdict().items():
        if value is not None and name.rstrip("0123456789") == group:
            return value
    return None


class _Lang:
    def __init__(self, code: str, spec: dict[str, Any]) -> None:
        self.code = code
        self.months = {fold(k): v for k, v in spec["months"].items()}
        self.units = {fold(k): v for k, v in spec["units"].items()}
        self.numbers = {fold(k): v for k, v in spec["numbers"].items()}
        self.fuzzy = {fold(k): v for k, v in spec["fuzzy"].items()}
        self.seasons = {fold(k): v for k, v in spec["seasons"].items()}
        self.days = {fold(k): v for k, v in spec["day_words"].items()}
        self.day_guard = {fold(k): v for k, v in spec.get("day_guard", {}).items()}
        self.spec = spec
        self.M, self.U, self.S = alt(self.months), alt(self.units), alt(self.seasons)
        self.N = rf"(?:\d{{1,3}}|{alt(list(self.numbers) + list(self.fuzzy))})"
        words = [*self.months, *self.units, *self.seasons, *self.days, *spec["cues"].split()]
        self.cues = frozenset(t for w in words for t in _WORD.findall(fold(w)) if len(t) >= 3)
        self.strong = frozenset(
            t for w in [*self.days, *spec["cues"].split()] for t in _WORD.findall(fold(w)) if len(t) >= 3
        )

    def tmpl(self, template: str) -> str:
        t = strip_accents(template).replace("{M}", self.M).replace("{Y}", YEAR).replace("{N}", self.N)
        t = _numbered(t, "{U}", "u", self.U)
        return _numbered(t, "{S}", "s", self.S)

    def rule(self, name: str, tier: int, pattern: str, handler: Callable[[re.Match[str], Ctx], Atom | None]) -> Rule:
        return Rule(f"{self.code}-{name}", tier, re.compile(pattern), handler, self.cues, self.code)

    def count(self, text: str | None) -> int | tuple[int, int] | None:
        if text is None:
            return 1
        text = " ".join(text.split())
        if text.isdigit():
            return int(text)
        return self.numbers.get(text) or self.fuzzy.get(text)

    def rules(self) -> list[Rule]:
        spec = self.spec
        out = [
            self.rule("date", 10, rf"(?<![\w.,:/-])(?P<core>{self.tmpl(spec['day_month'])}){_R}", self._date),
            self.rule("month-year", 15, rf"{_L}(?P<core>{self.tmpl(spec['month_year'])}){_R}", self._month_year),
            self.rule(
                "month",
                40,
                rf"(?:^|(?<=[\s,(]))(?:{strip_accents(spec['month_pre'])})(?P<core>(?P<mon>{self.M})){_R}",
                self._month,
            ),
            self.rule("day-word", 30, rf"{_L}(?P<core>{alt(self.days)}){_R}", self._day_word),
        ]
        for i, pattern in enumerate(spec["ago"]):
            out.append(self.rule(f"ago{i}", 25, rf"{_L}(?P<core>{self.tmpl(pattern)}){_R}", self._ago))
        for i, (pattern, delta) in enumerate(spec["relative"]):
            out.append(self.rule(f"relative{i}", 30, rf"{_L}(?P<core>{self.tmpl(pattern)}){_R}", self._relative(delta)))
        for i, (pattern, mode) in enumerate(spec["season_rel"]):
            out.append(self.rule(f"season{i}", 20 + i, rf"{_L}(?P<core>{self.tmpl(pattern)}){_R}", self._season(mode)))
        return out

    # --- handlers ---------------------------------------------------------------------------

    def _date(self, m: re.Match[str], ctx: Ctx) -> Atom | None:
        mm, dd = self.months[m["mon"]], int(m["d"])

        def resolve(y: int) -> TimeWindow | None:
            d = cal.safe_date(y, mm, dd)
            return cal.day(d) if d else None

        if m["y"]:
            return make_atom(m, resolve(int(m["y"])), "date")
        return make_atom(m, ctx.choose(resolve), "date", resolve=resolve)

    def _month_year(self, m: re.Match[str], ctx: Ctx) -> Atom | None:
        return make_atom(m, cal.month(int(m["y"]), self.months[m["mon"]]), "month")

    def _month(self, m: re.Match[str], ctx: Ctx) -> Atom | None:
        mm = self.months[m["mon"]]

        def resolve(y: int) -> TimeWindow:
            return cal.month(y, mm)

        return make_atom(m, ctx.choose(resolve), "month", resolve=resolve)

    def _day_word(self, m: re.Match[str], ctx: Ctx) -> Atom | None:
        word = " ".join(m["core"].split())
        veto = self.day_guard.get(word)
        if veto and not veto.isdisjoint(_WORD.findall(ctx.text)):
            return None
        return make_atom(m, cal.day(ctx.today + timedelta(days=self.days[word])), "date")

    def _ago(self, m: re.Match[str], ctx: Ctx) -> Atom | None:
        unit = self.units.get(" ".join((_first(m, "u") or "").split()))
        n = self.count(m.groupdict().get("n") or m.groupdict().get("n2"))
        if unit is None or unit == "weekend" or n is None:
            return None
        lo, hi = n if isinstance(n, tuple) else (n, n)
        return make_atom(m, units_ago(unit, ctx.today, lo, hi), "relative" if lo == hi else "span")

    def _relative(self, delta: int) -> Callable[[re.Match[str], Ctx], Atom | None]:
        def handle(m: re.Match[str], ctx: Ctx) -> Atom | None:
            unit = self.units.get(" ".join((_first(m, "u") or "").split()))
            if unit is None or unit == "day":
                return None
            if unit == "weekend":
                return make_atom(m, cal.weekend_of_week(ctx.today + timedelta(days=7 * delta)), "weekend")
            kind = "year" if unit == "year" else "relative"
            return make_atom(m, unit_window(unit, shift(unit, ctx.today, delta)), kind)

        return handle

    def _season(self, mode: str) -> Callable[[re.Match[str], Ctx], Atom | None]:
        def handle(m: re.Match[str], ctx: Ctx) -> Atom | None:
            word = _first(m, "s") or m["core"]
            name = self.seasons.get(word.split()[-1]) or self.seasons.get(word)
            if name is None:
                return None

            def resolve(y: int) -> TimeWindow:
                return cal.season(y, name, ctx.hemisphere)

            if mode == "year":
                return make_atom(m, resolve(int(m["y"] or m["y2"])), "season")
            return make_atom(m, ctx.choose(resolve, None if mode == "past" else mode), "season", resolve=resolve)

        return handle


_LANGS = [_Lang(code, spec) for code, spec in LANGUAGES.items()]
RULES: tuple[Rule, ...] = tuple(r for lang in _LANGS for r in lang.rules())
LANG_CUES: dict[str, frozenset[str]] = {lang.code: lang.cues for lang in _LANGS}
# Words that only another language uses: their presence makes 05/06/2023 day-first.
LANG_CUES_ALL: frozenset[str] = frozenset().union(*(lang.strong for lang in _LANGS))
