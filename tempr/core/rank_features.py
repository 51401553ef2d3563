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
* the same similarity to the query with its names masked (``tempr.core.query_focus``): the
  topic, whoever it names;
* the cross-encoder's raw score when one is configured (NaN otherwise: the model treats
  it as missing).

Everything is relative to one query's candidate list, so the function takes the whole
list and returns one row per candidate in the same order. No I/O and no clock: ``now``
comes in with the query.

It runs on every recall (up to ~300 candidates), so it is written for speed: each distinct
text is scanned once per call (a chunk is shared by many facts; ``tempr.core.rank_text``),
per-query work (query tokens, window bounds, the idf total, the cosine order) is done once,
and the rows come out as one float64 array for the model. The rows are exactly those of
the first, plain version (the shipped model was trained on them);
``tests/unit/rank_features_oracle.py`` keeps that version and a property test compares them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from tempr.core import token_match
from tempr.core.boosts import (
    NEUTRAL,
    RECENCY_FLOOR,
    RECENCY_WINDOW_DAYS,
    SECONDS_PER_DAY,
    proof_signal,
)
from tempr.core.rank_text import (
    STOPWORDS,
    WORD,
    LexicalPool,
    bm25_idf,
    content_terms,
    names_in,
    padded,
    words,
)
from tempr.core.timeutil import as_utc
from tempr.core.types import TimeWindow

__all__ = [
    "FACT_TYPE_CODES",
    "FEATURE_NAMES",
    "STOPWORDS",
    "STRATEGIES",
    "SUPPORT_TOP",
    "WH_CODES",
    "RankCandidate",
    "RankQuery",
    "content_terms",
    "coverage",
    "entity_hits",
    "feature_array",
    "feature_matrix",
    "pool_idf",
    "wh_code",
    "words",
]

STRATEGIES: tuple[str, ...] = ("semantic", "keyword", "graph", "temporal")
SUPPORT_TOP = 10
"""Multi-hop support counts neighbours among this many most query-similar candidates."""
FACT_TYPE_CODES: Mapping[str, float] = {"world": 0.0, "experience": 1.0, "observation": 2.0}
WH_CODES: Mapping[str, float] = {"what": 1.0, "when": 2.0, "where": 3.0, "who": 4.0, "why": 5.0, "how": 6.0}

CHUNK_WEIGHT = 0.4
"""``both = cos_fact + CHUNK_WEIGHT * cos_chunk``: the two text representations in one similarity."""
SESSION_FEATURES: tuple[str, ...] = (
    "both",
    "both_gap",
    "session_best",
    "session_best_gap",
    "session_mean",
    "session_size",
)
"""How the memory's session (source document) as a whole matches the query: the best and mean
``both`` over the session's candidates, and how many there are. Evidence for a question tends to
sit in one session, so a memory in a session that answers well is likelier to be evidence than
its own similarity says (LoCoMo, cross-validated: R@10 +1, BENCHMARKS.md). A candidate without a
document is a session of its own."""
FOCUS_FEATURES: tuple[str, ...] = ("focus_both", "focus_both_gap")
"""``both`` again, from the query with its names masked (``tempr.core.query_focus``): how well the
memory matches the question's topic, whoever it names. A query that names nobody is its own focus."""

TOKEN_FEATURES: tuple[str, ...] = (
    "tok_fact",
    "tok_fact_gap",
    "tok_focus",
    "tok_focus_gap",
    "tok_idf",
    "tok_idf_gap",
    "tok_focus_idf",
    "tok_focus_idf_gap",
)
"""Word-by-word match of the query (and of its focus) with the memory's text (``tempr.core.token_match``),
and each one's gap to the best candidate, then the same with each query word weighted by how few
candidates match it (``token_match.idf_weights``); missing (NaN) for memories stored without token
vectors."""

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
    *SESSION_FEATURES,
    *FOCUS_FEATURES,
    *TOKEN_FEATURES,
    "ce",
)


@dataclass(frozen=True)
class RankQuery:
    """What the ranker knows about the query."""

    text: str
    now: datetime
    windows: tuple[TimeWindow, ...] = ()
    tokens: np.ndarray | None = field(default=None, compare=False)
    """The query's content-token vectors (``tempr.core.token_match``), unit rows; None: none computed."""
    focus_tokens: np.ndarray | None = field(default=None, compare=False)
    """The same for the focus query; None: the query is its own focus (or none computed)."""


@dataclass(slots=True)
class RankCandidate:
    """What the ranker knows about one fused candidate (ranks are 1-indexed per strategy).

    Read-only by convention, not ``frozen``: a frozen dataclass sets each field through
    ``object.__setattr__``, which made building ~200 of them per recall cost 0.4 ms.
    """

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
    cos_focus: float | None = None
    """Cosine of the focus query (``tempr.core.query_focus``) to the memory; None: the query is its own focus."""
    cos_focus_chunk: float | None = None
    """The focus query's cosine to the source chunk's vector; None: no chunk vector (or no focus)."""
    tokens: bytes | None = None
    """The memory's content-token vectors, packed (``tempr.core.token_match.pack``); None: not stored."""


def pool_idf(docs: Sequence[set[str]], terms: Sequence[str]) -> dict[str, float]:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))`` over the candidate pool (no bank statistics needed)."""
    n = len(docs)
    return {t: bm25_idf(n, sum(t in d for d in docs)) for t in terms}


def coverage(terms: Sequence[str], doc: set[str], idf: Mapping[str, float]) -> float:
    """The idf-weighted share of the query's terms that the document contains, in [0, 1]."""
    total = math.fsum(idf[t] for t in terms)
    if total <= 0.0:
        return 0.0
    return math.fsum(idf[t] for t in terms if t in doc) / total


def wh_code(query: str) -> float:
    """Which question word the query starts with (0: none of them)."""
    first = WORD.findall(query.lower())[:2]
    return next((WH_CODES[w] for w in first if w in WH_CODES), 0.0)


def entity_hits(query: str, entities: Sequence[str]) -> float:
    """How many of the memory's entities the query names (whole words, case-insensitive)."""
    in_query = padded(query)
    return float(sum(names_in(in_query, name) for name in entities))


def _support(candidates: Sequence[RankCandidate], top: Sequence[int]) -> tuple[list[float], list[float]]:
    """Per candidate: neighbours among ``top`` (the most query-similar) sharing its document, and an entity."""
    docs = Counter(candidates[i].document for i in top if candidates[i].document)
    ents = Counter(e.lower() for i in top for e in set(candidates[i].entities))
    top_set = set(top)
    session, entity = [], []
    for i, c in enumerate(candidates):
        own = 1.0 if i in top_set else 0.0
        session.append(docs.get(c.document, 0) - own if c.document else 0.0)
        shared = [ents.get(e.lower(), 0) - own for e in set(c.entities)] if c.entities else ()
        entity.append(float(max(shared, default=0.0)))
    return session, entity


def _focus_columns(candidates: Sequence[RankCandidate], cos_chunk: Sequence[float]) -> list[tuple[float, float]]:
    """``FOCUS_FEATURES`` per candidate: the chunk falls back to the fact, and a candidate without a
    focus cosine (a query that names nobody) to the plain cosines, as ``both`` does."""
    both = []
    for c, chunk in zip(candidates, cos_chunk, strict=True):
        if c.cos_focus is None:
            both.append(c.cos_fact + CHUNK_WEIGHT * chunk)
        else:
            focus_chunk = c.cos_focus_chunk if c.cos_focus_chunk is not None else c.cos_focus
            both.append(c.cos_focus + CHUNK_WEIGHT * focus_chunk)
    top = max(both)
    return [(b, b - top) for b in both]


def _session_columns(
    candidates: Sequence[RankCandidate], cos_fact: Sequence[float], cos_chunk: Sequence[float]
) -> list[tuple[float, ...]]:
    """``SESSION_FEATURES`` per candidate, in its order."""
    both = [f + CHUNK_WEIGHT * c for f, c in zip(cos_fact, cos_chunk, strict=True)]
    top = max(both)
    members: dict[str, list[float]] = {}
    for c, b in zip(candidates, both, strict=True):
        if c.document:
            members.setdefault(c.document, []).append(b)
    summary = {d: (max(v), sum(v) / len(v), float(len(v))) for d, v in members.items()}
    out: list[tuple[float, ...]] = []
    for c, b in zip(candidates, both, strict=True):
        best, mean, size = summary[c.document] if c.document else (b, b, 1.0)
        out.append((b, b - top, best, best - top, mean, size))
    return out


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
        self._seen: dict[datetime, tuple[float, float, float]] = {}

    def features(self, occurred: datetime | None) -> tuple[float, float, float]:
        """(temporal proximity, in a window, recency) of one memory (memoised: facts share dates)."""
        if occurred is None:
            return NEUTRAL, 0.0, NEUTRAL
        got = self._seen.get(occurred)
        if got is None:
            got = self._seen[occurred] = self._compute(occurred)
        return got

    def _compute(self, occurred: datetime) -> tuple[float, float, float]:
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
    """``feature_matrix`` as one float64 array, shape (candidates, ``FEATURE_NAMES``): what the model reads."""
    n = len(candidates)
    if not n:
        return np.empty((0, len(FEATURE_NAMES)), dtype=np.float64)
    cos_fact = [c.cos_fact for c in candidates]
    top_cos = max(cos_fact)
    cos_chunk = [c.cos_chunk if c.cos_chunk is not None else c.cos_fact for c in candidates]
    top_chunk = max(cos_chunk)
    order = sorted(range(n), key=lambda i: -cos_fact[i])
    cos_rr = [0.0] * n
    for r, i in enumerate(order, start=1):
        cos_rr[i] = 1.0 / r
    session, entity = _support(candidates, order[:SUPPORT_TOP])
    by_session = _session_columns(candidates, cos_fact, cos_chunk)
    focus = _focus_columns(candidates, cos_chunk)
    tok = token_match.columns(query.tokens, query.focus_tokens, [c.tokens for c in candidates])

    pool = LexicalPool(query.text)
    facts = [pool.scan_counting(c.text) for c in candidates]
    fact_patterns = [f[0] for f in facts]
    chunk_patterns = [
        pool.scan(c.chunk_text) if c.chunk_text else f for c, f in zip(candidates, fact_patterns, strict=True)
    ]
    pool.fit(list(zip(fact_patterns, chunk_patterns, strict=True)))
    lex_fact = [pool.coverage(p) for p in fact_patterns]
    lex_chunk = [pool.coverage(p) for p in chunk_patterns]
    lex_best = [max(a, b) for a, b in zip(lex_fact, lex_chunk, strict=True)]
    top_lex = max(lex_best)

    clock, in_query = _Clock(query), padded(query.text)
    has_window, q_len, wh = (1.0 if query.windows else 0.0), float(len(pool.terms)), wh_code(query.text)
    named: dict[str, bool] = {}
    proofs: dict[int, float] = {}
    rows = []
    for i, c in enumerate(candidates):
        ranks, scores = c.ranks, c.scores
        hits = 0
        for name in c.entities:
            hit = named.get(name)
            if hit is None:
                hit = named[name] = names_in(in_query, name)
            hits += hit
        proof = proofs.get(c.proof_count)
        if proof is None:
            proof = proofs[c.proof_count] = proof_signal(c.proof_count)
        temporal, inside, recency = clock.features(c.occurred)
        rows.append(
            [
                *[1.0 / r if r else 0.0 for r in map(ranks.get, STRATEGIES)],
                *[float(scores.get(s, 0.0)) for s in STRATEGIES],
                c.rrf,
                float(len(ranks)),
                cos_fact[i],
                cos_fact[i] - top_cos,
                cos_rr[i],
                cos_chunk[i],
                cos_chunk[i] - top_chunk,
                max(cos_fact[i], cos_chunk[i]),
                lex_fact[i],
                lex_chunk[i],
                lex_best[i],
                lex_best[i] - top_lex,
                float(hits),
                has_window,
                temporal,
                inside,
                recency,
                1.0 if c.occurred is None else 0.0,
                proof,
                FACT_TYPE_CODES.get(c.fact_type, 3.0),
                float(facts[i][1]),
                q_len,
                wh,
                session[i],
                entity[i],
                *by_session[i],
                *focus[i],
                *tok[i],
                float(c.ce) if c.ce is not None else math.nan,
            ]
        )
    return np.array(rows, dtype=np.float64)


def feature_matrix(query: RankQuery, candidates: Sequence[RankCandidate]) -> list[list[float]]:
    """One row of ``FEATURE_NAMES`` values per candidate, in the candidates' order."""
    if not candidates:
        return []
    rows: list[list[float]] = feature_array(query, candidates).tolist()
    return rows
