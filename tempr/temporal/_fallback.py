"""dateparser as a narrow fallback, for the one family the rules leave out: weekday
names in the other languages ("el lunes", "letzten Montag", "星期一", "月曜日").

It only runs when no rule matched and such a weekday word is present, always
with an explicit ``languages=[...]`` (without it dateparser spends ~80 ms on
language detection), and its answer is kept only when the span it parsed is
that weekday word. The result is the day: the most recent such weekday before
the reference day, or the next one after it when the query says "next".
"""

from __future__ import annotations

import re
import threading
from datetime import datetime

from tempr.core.types import TimeWindow
from tempr.temporal import _calendar as cal
from tempr.temporal._engine import Ctx
from tempr.temporal._text import fold

_WEEKDAYS = {
    "es": "lunes martes miércoles jueves viernes sábado domingo",
    "fr": "lundi mardi mercredi jeudi vendredi samedi dimanche",
    "de": "montag dienstag mittwoch donnerstag freitag samstag sonnabend sonntag",
    "it": "lunedì martedì mercoledì giovedì venerdì sabato domenica",
    "pt": "segunda-feira terça-feira quarta-feira quinta-feira sexta-feira sábado domingo",
    "ru": "понедельник вторник среду среда четверг пятницу пятница субботу суббота воскресенье",
}
WEEKDAY_WORDS: dict[str, str] = {fold(w): lang for lang, words in _WEEKDAYS.items() for w in words.split()}
_LATIN = re.compile(r"(?<!\w)(" + "|".join(sorted(map(re.escape, WEEKDAY_WORDS), key=len, reverse=True)) + r")(?!\w)")
_CJK = re.compile(r"(?:星期|礼拜|禮拜|周|週)[一二三四五六日天]|[月火水木金土日]曜日?")
_NEXT = re.compile(r"proxim|prochain|nachst|prossim|следующ|下|来|來|次の")
CUES = frozenset(t for w in WEEKDAY_WORDS for t in re.findall(r"[^\W\d_]+", w))


_SEARCH_LOCK = threading.Lock()
"""The gateway analyses queries on threads (``tempr.api.miss``); dateparser's search shares parser
objects between calls and does not say it is thread-safe, and this path is rare (a weekday in a
language the rules do not cover), so one search at a time."""


def _search(text: str, lang: str, ref: datetime, future: bool) -> list[tuple[str, datetime]]:
    from dateparser.search import search_dates  # imported on first use: ~0.3 s, once per process

    settings = {
        "RELATIVE_BASE": ref.replace(tzinfo=None),
        "PREFER_DATES_FROM": "future" if future else "past",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }
    with _SEARCH_LOCK:
        return search_dates(text, languages=[lang], settings=settings) or []


def _candidate(folded: str, ctx: Ctx, tokens: set[str]) -> tuple[str, str] | None:
    """(language, weekday word) worth asking dateparser about, or None."""
    if not CUES.isdisjoint(tokens):
        for m in _LATIN.finditer(folded):
            lang = WEEKDAY_WORDS[m.group(1)]
            if lang in ctx.langs:
                return lang, m.group(1)
    if "#cjk" in tokens:
        cjk = _CJK.search(folded)
        if cjk:
            lang = "ja" if "曜" in cjk.group() else "zh"
            if lang in ctx.langs:
                return lang, cjk.group()
    return None


def fallback(original: str, ctx: Ctx, tokens: set[str]) -> TimeWindow | None:
    folded = fold(original)
    found = _candidate(folded, ctx, tokens)
    if found is None:
        return None
    lang, word = found
    future = bool(_NEXT.search(folded)) or ctx.future
    for span, when in _search(original, lang, ctx.ref, future):
        if word not in fold(span):
            continue
        window = cal.day(when.date())
        return TimeWindow(window.start, window.end, "day", source=span.strip())
    return None


def warm(languages: frozenset[str]) -> None:
    """Load dateparser and the locales the fallback may use (call once at start-up)."""
    probes = {
        "es": "el lunes",
        "fr": "lundi",
        "de": "Montag",
        "it": "lunedì",
        "pt": "segunda-feira",
        "ru": "понедельник",
        "zh": "星期一",
        "ja": "月曜日",
    }
    ref = datetime(2024, 1, 1)
    for lang, probe in probes.items():
        if lang in languages:
            _search(probe, lang, ref, False)
