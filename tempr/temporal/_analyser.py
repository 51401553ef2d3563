"""The query-time analyser: query + reference instant -> TemporalAnalysis."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import lru_cache

from tempr.core.timeutil import as_utc
from tempr.core.types import TemporalAnalysis, TimeWindow
from tempr.temporal import (
    _fallback,
    _holidays,
    _rules_calendar,
    _rules_cjk,
    _rules_intl,
    _rules_numeric,
    _rules_relative,
)
from tempr.temporal._anchors import find_anchors
from tempr.temporal._combine import apply_modifiers, apply_open_sides, merge_ranges, merge_year_first
from tempr.temporal._engine import Atom, Ctx, Rule, run_rules
from tempr.temporal._lexicon import DECADE_WORDS, MONTH_CUES, SEASON_CUES, UNIT_CUES, WEEKDAY_CUES
from tempr.temporal._text import container_spans, mask_spans, number_spans, prepare

SUPPORTED_LANGUAGES: tuple[str, ...] = ("en", "es", "fr", "de", "it", "pt", "ru", "zh", "ja", "ko")
HEMISPHERES = ("north", "south")
EMPTY = TemporalAnalysis()

_ALL_RULES: tuple[Rule, ...] = (
    _rules_numeric.RULES
    + _rules_calendar.RULES
    + _rules_relative.RULES
    + _holidays.RULES
    + _rules_intl.RULES
    + _rules_cjk.RULES
)
_NUMERIC_TIER = 0

_ANCHOR_CUES = frozenset({"before", "after", "since", "until", "till", "prior"})
_EN_CUES = (
    MONTH_CUES
    | SEASON_CUES
    | UNIT_CUES
    | WEEKDAY_CUES
    | frozenset(DECADE_WORDS)
    | _holidays.HOLIDAY_CUES
    | _ANCHOR_CUES
    | frozenset(
        "yesterday today tonight tomorrow night morning afternoon evening ago recent recently lately late "
        "weekend weekends earlier later far ytd mtd qtd other century half hour hours hr hrs minute minutes min "
        "mins".split()
    )
)
_ALL_CUES = frozenset().union(_EN_CUES, *_rules_intl.LANG_CUES.values(), _fallback.CUES, {"#digit", "#cjk", "#hangul"})

_WORD = re.compile(r"[^\W\d_]+")
_CJK = re.compile(_rules_cjk.CJK_CUE_CHARS)
_HANGUL = re.compile(_rules_cjk.HANGUL_CUES)
_FUTURE = re.compile(
    r"\b(?:will|going\s+to|gonna|shall|plan(?:s|ned|ning)?\s+(?:to|for)|scheduled|upcoming|coming\s+up)\b|\w'll\b"
    r"|\b(?:va|vamos|voy|vais|van)\s+a\b|\bwird\b|\bwerden\b"
)


def tokens_of(folded: str) -> set[str]:
    tokens = set(_WORD.findall(folded))
    if any(ch.isdigit() for ch in folded):
        tokens.add("#digit")
    if _CJK.search(folded):
        tokens.add("#cjk")
    if _HANGUL.search(folded):
        tokens.add("#hangul")
    return tokens


@lru_cache(maxsize=64)
def _rules_for(langs: frozenset[str]) -> tuple[tuple[Rule, ...], tuple[Rule, ...]]:
    """(numeric rules, other rules) for a language set, in tier order."""
    chosen = sorted(
        (r for r in _ALL_RULES if r.lang == "*" or not langs.isdisjoint(r.lang.split("|"))), key=lambda r: r.tier
    )
    return (tuple(r for r in chosen if r.tier <= _NUMERIC_TIER), tuple(r for r in chosen if r.tier > _NUMERIC_TIER))


def normalise_languages(languages: Sequence[str] | None) -> frozenset[str]:
    if languages is None:
        return frozenset(SUPPORTED_LANGUAGES)
    if isinstance(languages, str):
        languages = [languages]
    chosen = frozenset(lang.lower().split("-")[0].split("_")[0] for lang in languages)
    unknown = chosen - set(SUPPORTED_LANGUAGES)
    if unknown:
        raise ValueError(f"unsupported language(s) {sorted(unknown)}; supported: {', '.join(SUPPORTED_LANGUAGES)}")
    return chosen


def analyse(
    query: str,
    reference: datetime,
    *,
    hemisphere: str = "north",
    languages: Sequence[str] | None = None,
) -> TemporalAnalysis:
    """Find the time windows and event anchors a query refers to.

    ``reference`` is the query timestamp (naive = UTC). ``languages`` limits
    the rule sets (default: all supported). ``hemisphere`` ("north"/"south")
    decides which months a season covers.
    """
    if hemisphere not in HEMISPHERES:
        raise ValueError(f"hemisphere must be one of {HEMISPHERES}, not {hemisphere!r}")
    langs = normalise_languages(languages)
    if not query:
        return EMPTY
    original, folded = prepare(query)
    tokens = tokens_of(folded)
    if _ALL_CUES.isdisjoint(tokens):
        return EMPTY
    ref = as_utc(reference)
    ctx = Ctx(
        ref=ref,
        today=ref.date(),
        hemisphere=hemisphere,
        future=bool(_FUTURE.search(folded)),
        text=mask_spans(folded, container_spans(folded)),
        langs=langs,
        dmy="en" not in langs or not _rules_intl.LANG_CUES_ALL.isdisjoint(tokens),
    )
    numeric, others = _rules_for(langs)
    atoms = run_rules(numeric, ctx, tokens) if "#digit" in tokens else []
    if "#digit" in tokens:
        ctx.text = mask_spans(ctx.text, number_spans(ctx.text))
    atoms = sorted(atoms + run_rules(others, ctx, tokens), key=lambda a: a.start)
    text = ctx.text
    atoms = merge_year_first(atoms, text)
    atoms = apply_modifiers(atoms, text)
    atoms = merge_ranges(atoms, text)
    atoms = apply_open_sides(atoms, text, ctx)

    anchors = []
    if "en" in langs and not _ANCHOR_CUES.isdisjoint(tokens):
        for start, end, anchor in find_anchors(folded, original, [(a.start, a.end) for a in atoms]):
            atoms = [a for a in atoms if not (start <= a.start and a.end <= end)]
            anchors.append(anchor)

    if not atoms and not anchors:
        window = _fallback.fallback(original, ctx, tokens)
        return TemporalAnalysis(windows=(window,)) if window else EMPTY
    return TemporalAnalysis(windows=_windows(atoms, original), anchors=tuple(anchors))


def _windows(atoms: list[Atom], original: str) -> tuple[TimeWindow, ...]:
    seen: set[tuple[datetime, datetime, str | None]] = set()
    out = []
    for a in atoms:
        key = (a.window.start, a.window.end, a.window.open_side)
        if key in seen:
            continue
        seen.add(key)
        out.append(replace(a.window, source=" ".join(original[a.start : a.end].split())))
    return tuple(out)
