"""Per-candidate features for the learned ranker (pure: plain values in, a float matrix out).

The learned ranker (``tempr.providers.reranker.learned``) replaces the seed's rank-linear
fallback when no cross-encoder is configured. It sees, for every fused candidate, what
each stage already knows about it, plus a few cheap signals the strategies do not use:

* each strategy's reciprocal rank and raw score, and the RRF score;
* cosine similarity of the query to the memory, raw and relative to the best candidate;
* lexical overlap of the query with the memory's text and with its source chunk (the
  second text representation: the chunk keeps words the extracted fact dropped), as
  an idf-weighted coverage whose idf is computed over the candidate pool itself;
* entity overlap (memory entities named in the query), temporal proximity to the
  query's time window, recency, proof count, fact type, length;
* multi-hop support: how many of the most similar candidates share the memory's source
  document (session) or one of its entities;
* the cross-encoder's raw score when one is configured (NaN otherwise: the model treats
  it as missing).

Everything is relative to one query's candidate list, so the function takes the whole
list and returns one row per candidate in the same order. No I/O and no clock: ``now``
comes in with the query.

It runs on every recall (up to ~300 candidates), so it is written for speed: each distinct
text is tokenised once per call (a chunk is shared by many facts), stemming is cached per
word, and per-query work (query tokens, window bounds, the idf total) is done once. The
rows are exactly those of the first, plain version (the shipped model was trained on
them); ``tests/unit/rank_features_oracle.py`` keeps that version and a property test
compares the two.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

import numpy as np

from tempr.core.boosts import (
    NEUTRAL,
    RECENCY_FLOOR,
    RECENCY_WINDOW_DAYS,
    SECONDS_PER_DAY,
    proof_signal,
)
from tempr.core.timeutil import as_utc
from tempr.core.types import TimeWindow

STRATEGIES: tuple[str, ...] = ("semantic", "keyword", "graph", "temporal")
SUPPORT_TOP = 10
"""Multi-hop support counts neighbours among this many most query-similar candidates."""
FACT_TYPE_CODES: Mapping[str, float] = {"world": 0.0, "experience": 1.0, "observation": 2.0}
WH_CODES: Mapping[str, float] = {"what": 1.0, "when": 2.0, "where": 3.0, "who": 4.0, "why": 5.0, "how": 6.0}
_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS: frozenset[str] = frozenset(
    """a an the and or but of to in on at by for with from as is are was were be been being do does did
    has have had having it its this that these those what when where who whom which why how i you he she
    we they me him her us them my your his our their there here if then than so not no yes can could
    would should will shall may might must about into over after before up down out off just also very
    any some all each other such only own same too s t ever""".split()
)

FEATURE_NAMES: tuple[str, ...] = (
    *(f"rr_{s}" for s in STRATEGIES),
    *(f"score_{s}" for s in STRATEGIES),
    "rrf",
    "n_strategies",
    "cos_fact",
    "cos_fact_gap",
    "cos_fact_rr",
    "cos_chunk",
    "cos_chunk_gap",
    "cos_best",
    "lex_fact",
    "lex_chunk",
    "lex_best",
    "lex_gap",
    "entity_hits",
    "has_window",
    "temporal_proximity",
    "in_window",
    "recency",
    "undated",
    "proof",
    "fact_type",
    "length",
    "query_length",
    "wh",
    "session_support",
    "entity_support",
    "ce",
)


@dataclass(frozen=True)
class RankQuery:
    """What the ranker knows about the query."""

    text: str
    now: datetime
    windows: tuple[TimeWindow, ...] = ()


@dataclass(frozen=True)
class RankCandidate:
    """What the ranker knows about one fused candidate (ranks are 1-indexed per strategy)."""

    id: str
    text: str
    cos_fact: float
    ranks: Mapping[str, int] = field(default_factory=dict)
    scores: Mapping[str, float] = field(default_factory=dict)
    rrf: float = 0.0
    chunk_text: str | None = None
    cos_chunk: float | None = None
    entities: tuple[str, ...] = ()
    occurred: datetime | None = None
    proof_count: int = 1
    fact_type: str = "world"
    document: str | None = None
    ce: float | None = None


_COLUMN: Mapping[str, int] = {name: i for i, name in enumerate(FEATURE_NAMES)}


@lru_cache(maxsize=8192)
def _stem(w: str) -> str:
    """The crude plural/inflection trim of one lower-case token (cached: vocabularies repeat)."""
    if len(w) > 4 and w.endswith("ing"):
        return w[:-3]
    if len(w) > 3 and w.endswith("es"):
        return w[:-2]
    if len(w) > 3 and w.endswith("s"):
        return w[:-1]
    if len(w) > 3 and w.endswith("ed"):
        return w[:-2]
    return w


def words(text: str) -> list[str]:
    """Lower-case word tokens with a crude plural/inflection trim (so 'works' meets 'work')."""
    return [_stem(w) for w in _WORD.findall(text.lower())]


def _forms(term: str) -> frozenset[str]:
    """Every raw token that ``_stem`` maps to ``term``.

    A token loses at most one of the suffixes ing/es/s/ed, so these are among the term
    itself and the term plus one suffix; keeping only those that stem back to it makes
    "the text has a token stemming to term" a test on the text's raw tokens, with no
    stemming of the text at all.
    """
    return frozenset(w for w in (term, term + "ing", term + "es", term + "s", term + "ed") if _stem(w) == term)


def content_terms(text: str) -> list[str]:
    """Distinct non-stopword terms of a text, in order."""
    return list(dict.fromkeys(w for w in words(text) if w not in STOPWORDS))


def pool_idf(docs: Sequence[set[str]], terms: Sequence[str]) -> dict[str, float]:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))`` over the candidate pool (no bank statistics needed)."""
    n = len(docs)
    return {t: _idf(n, sum(t in d for d in docs)) for t in terms}


def _idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def coverage(terms: Sequence[str], doc: set[str], idf: Mapping[str, float]) -> float:
    """The idf-weighted share of the query's terms that the document contains, in [0, 1]."""
    total = math.fsum(idf[t] for t in terms)
    if total <= 0.0:
        return 0.0
    return math.fsum(idf[t] for t in terms if t in doc) / total


def wh_code(query: str) -> float:
    """Which question word the query starts with (0: none of them)."""
    first = _WORD.findall(query.lower())[:2]
    return next((WH_CODES[w] for w in first if w in WH_CODES), 0.0)


def _padded(text: str) -> str:
    """The text's raw tokens, space-joined and space-padded: whole-word phrase search by ``in``."""
    return f" {' '.join(_WORD.findall(text.lower()))} "


def _names_in(padded_query: str, name: str) -> bool:
    tokens = _WORD.findall(name.lower())
    return bool(tokens) and f" {' '.join(tokens)} " in padded_query


def entity_hits(query: str, entities: Sequence[str]) -> float:
    """How many of the memory's entities the query names (whole words, case-insensitive)."""
    padded = _padded(query)
    return float(sum(_names_in(padded, name) for name in entities))


def _support(candidates: Sequence[RankCandidate]) -> tuple[list[float], list[float]]:
    """Per candidate: top-similar neighbours sharing its document, and sharing an entity."""
    top = sorted(range(len(candidates)), key=lambda i: -candidates[i].cos_fact)[:SUPPORT_TOP]
    docs = Counter(candidates[i].document for i in top if candidates[i].document)
    ents = Counter(e.lower() for i in top for e in set(candidates[i].entities))
    top_set = set(top)
    session, entity = [], []
    for i, c in enumerate(candidates):
        own = 1.0 if i in top_set else 0.0
        session.append(docs.get(c.document, 0) - own if c.document else 0.0)
        shared = [ents.get(e.lower(), 0) - own for e in set(c.entities)]
        entity.append(float(max(shared, default=0.0)))
    return session, entity


class _Lexical:
    """Idf-weighted coverage of the query's terms, each distinct text scanned once.

    ``scan`` returns, per text, which query terms it contains and its token count; the
    idf is over the pool (a term counts once per candidate, in its fact or its chunk)
    and a coverage is memoised per pattern of contained terms (a handful per query).
    """

    def __init__(self, query: str) -> None:
        self.terms = content_terms(query)
        self._forms = [_forms(t) for t in self.terms]
        self._texts: dict[str, tuple[tuple[bool, ...], int]] = {}
        self._covers: dict[tuple[bool, ...], float] = {}
        self._idf: list[float] = []
        self._total = 0.0

    def scan(self, text: str) -> tuple[tuple[bool, ...], int]:
        got = self._texts.get(text)
        if got is None:
            tokens = _WORD.findall(text.lower())
            present = set(tokens)
            got = self._texts[text] = (tuple(not present.isdisjoint(f) for f in self._forms), len(tokens))
        return got

    def fit(self, docs: Sequence[tuple[tuple[bool, ...], tuple[bool, ...]]]) -> None:
        """The pool's idf from each candidate's (fact, chunk) term patterns."""
        n = len(docs)
        self._idf = [_idf(n, sum(f[j] or c[j] for f, c in docs)) for j in range(len(self.terms))]
        self._total = math.fsum(self._idf)

    def coverage(self, pattern: tuple[bool, ...]) -> float:
        got = self._covers.get(pattern)
        if got is None:
            if self._total <= 0.0:
                got = 0.0
            else:
                got = math.fsum(x for x, hit in zip(self._idf, pattern, strict=True) if hit) / self._total
            self._covers[pattern] = got
        return got


class _Clock:
    """The date features against the query's windows and ``now``, bounds converted to UTC once.

    The arithmetic is ``boosts.temporal_proximity_signal`` / ``recency_signal`` step for step
    (same operations, same order), so the floats are theirs.
    """

    def __init__(self, query: RankQuery) -> None:
        self.now = as_utc(query.now)
        self.windows = [
            (w.open_side, w.start, w.end, as_utc(w.centre), w.days / 2.0, as_utc(w.start), as_utc(w.end))
            for w in query.windows
        ]

    def features(self, occurred: datetime | None) -> tuple[float, float, float]:
        """(temporal proximity, in a window, recency) of one memory."""
        if occurred is None:
            return NEUTRAL, 0.0, NEUTRAL
        at = as_utc(occurred)
        proximity, inside = NEUTRAL if not self.windows else -math.inf, 0.0
        for open_side, start, end, centre, half_width, start_utc, end_utc in self.windows:
            if open_side and not start <= at <= end:
                signal = 0.0
            else:
                distance = abs((at - centre).total_seconds() / SECONDS_PER_DAY)
                signal = 1.0 - min(distance / half_width, 1.0)
            proximity = max(proximity, signal)
            if start_utc <= at <= end_utc:
                inside = 1.0
        days_ago = (self.now - at).total_seconds() / SECONDS_PER_DAY
        recency = max(RECENCY_FLOOR, min(1.0, 1.0 - days_ago / RECENCY_WINDOW_DAYS))
        return proximity, inside, recency


def feature_array(query: RankQuery, candidates: Sequence[RankCandidate]) -> np.ndarray:
    """``feature_matrix`` as a float64 array of shape (candidates, ``FEATURE_NAMES``): what the ranker reads."""
    n = len(candidates)
    out = np.empty((n, len(FEATURE_NAMES)), dtype=np.float64)
    if not n:
        return out

    def put(name: str, values: Sequence[float] | float | np.ndarray) -> None:
        out[:, _COLUMN[name]] = values

    for s in STRATEGIES:
        put(f"rr_{s}", [1.0 / r if r else 0.0 for r in (c.ranks.get(s) for c in candidates)])
        put(f"score_{s}", [float(c.scores.get(s, 0.0)) for c in candidates])
    put("rrf", [c.rrf for c in candidates])
    put("n_strategies", [float(len(c.ranks)) for c in candidates])

    cos_fact = [c.cos_fact for c in candidates]
    top_cos = max(cos_fact)
    cos_chunk = [c.cos_chunk if c.cos_chunk is not None else c.cos_fact for c in candidates]
    top_chunk = max(cos_chunk)
    cos_rr = [0.0] * n
    for r, i in enumerate(sorted(range(n), key=lambda i: -cos_fact[i]), start=1):
        cos_rr[i] = 1.0 / r
    put("cos_fact", cos_fact)
    put("cos_fact_gap", out[:, _COLUMN["cos_fact"]] - top_cos)
    put("cos_fact_rr", cos_rr)
    put("cos_chunk", cos_chunk)
    put("cos_chunk_gap", out[:, _COLUMN["cos_chunk"]] - top_chunk)
    put("cos_best", [max(a, b) for a, b in zip(cos_fact, cos_chunk, strict=True)])

    lexical = _Lexical(query.text)
    facts = [lexical.scan(c.text) for c in candidates]
    chunks = [lexical.scan(c.chunk_text) if c.chunk_text else facts[i] for i, c in enumerate(candidates)]
    lexical.fit([(f[0], c[0]) for f, c in zip(facts, chunks, strict=True)])
    lex_fact = [lexical.coverage(f[0]) for f in facts]
    lex_chunk = [lexical.coverage(c[0]) for c in chunks]
    lex_best = [max(a, b) for a, b in zip(lex_fact, lex_chunk, strict=True)]
    top_lex = max(lex_best)
    put("lex_fact", lex_fact)
    put("lex_chunk", lex_chunk)
    put("lex_best", lex_best)
    put("lex_gap", [x - top_lex for x in lex_best])

    padded, named = _padded(query.text), {}
    hits = []
    for c in candidates:
        count = 0
        for name in c.entities:
            hit = named.get(name)
            if hit is None:
                hit = named[name] = _names_in(padded, name)
            count += hit
        hits.append(float(count))
    put("entity_hits", hits)

    clock = _Clock(query)
    dates = [clock.features(c.occurred) for c in candidates]
    put("has_window", 1.0 if query.windows else 0.0)
    put("temporal_proximity", [d[0] for d in dates])
    put("in_window", [d[1] for d in dates])
    put("recency", [d[2] for d in dates])
    put("undated", [1.0 if c.occurred is None else 0.0 for c in candidates])
    put("proof", [proof_signal(c.proof_count) for c in candidates])
    put("fact_type", [FACT_TYPE_CODES.get(c.fact_type, 3.0) for c in candidates])
    put("length", [float(f[1]) for f in facts])
    put("query_length", float(len(lexical.terms)))
    put("wh", wh_code(query.text))
    session, entity = _support(candidates)
    put("session_support", session)
    put("entity_support", entity)
    put("ce", [float(c.ce) if c.ce is not None else math.nan for c in candidates])
    return out


def feature_matrix(query: RankQuery, candidates: Sequence[RankCandidate]) -> list[list[float]]:
    """One row of ``FEATURE_NAMES`` values per candidate, in the candidates' order."""
    if not candidates:
        return []
    rows: list[list[float]] = feature_array(query, candidates).tolist()
    return rows
