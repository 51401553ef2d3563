"""The learned ranker's features as first written (before the speed-up): the test oracle.

``tempr.core.rank_features.feature_matrix`` was rewritten for speed (each distinct text
tokenised once per call, stemming cached, per-query work hoisted out of the loop). The
shipped model was trained on this version's rows, so the new one must return exactly the
same floats: ``test_core_rank_features_oracle`` compares them on random candidate lists,
and ``bench/rank_cost.py`` times both. Do not "fix" anything here.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from tempr.core.boosts import proof_signal, recency_signal, temporal_proximity_signal
from tempr.core.rank_features import (
    CHUNK_WEIGHT,
    FACT_TYPE_CODES,
    STOPWORDS,
    STRATEGIES,
    SUPPORT_TOP,
    WH_CODES,
    RankCandidate,
    RankQuery,
)
from tempr.core.timeutil import as_utc

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """Lower-case word tokens with a crude plural/inflection trim (so 'works' meets 'work')."""
    out = []
    for w in _WORD.findall(text.lower()):
        if len(w) > 4 and w.endswith("ing"):
            w = w[:-3]
        elif len(w) > 3 and w.endswith("es"):
            w = w[:-2]
        elif len(w) > 3 and w.endswith("s"):
            w = w[:-1]
        elif len(w) > 3 and w.endswith("ed"):
            w = w[:-2]
        out.append(w)
    return out


def content_terms(text: str) -> list[str]:
    """Distinct non-stopword terms of a text, in order."""
    return list(dict.fromkeys(w for w in words(text) if w not in STOPWORDS))


def pool_idf(docs: Sequence[set[str]], terms: Sequence[str]) -> dict[str, float]:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))`` over the candidate pool (no bank statistics needed)."""
    n = len(docs)
    return {t: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for t in terms for df in [sum(t in d for d in docs)]}


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


def entity_hits(query: str, entities: Sequence[str]) -> float:
    """How many of the memory's entities the query names (whole words, case-insensitive)."""
    padded = f" {' '.join(_WORD.findall(query.lower()))} "
    hits = 0
    for name in entities:
        tokens = _WORD.findall(name.lower())
        if tokens and f" {' '.join(tokens)} " in padded:
            hits += 1
    return float(hits)


def _recip(rank: int | None) -> float:
    return 1.0 / rank if rank else 0.0


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


def _session_of(
    i: int, candidates: Sequence[RankCandidate], cos_fact: Sequence[float], cos_chunk: Sequence[float]
) -> list[float]:
    """The session features of candidate ``i``, by a scan over every candidate (quadratic, plain)."""
    both = [cos_fact[j] + CHUNK_WEIGHT * cos_chunk[j] for j in range(len(candidates))]
    doc = candidates[i].document
    mates = [both[j] for j, c in enumerate(candidates) if doc and c.document == doc] or [both[i]]
    return [
        both[i],
        both[i] - max(both),
        max(mates),
        max(mates) - max(both),
        sum(mates) / len(mates),
        float(len(mates)),
    ]


def _focus_of(i: int, candidates: Sequence[RankCandidate], cos_chunk: Sequence[float]) -> list[float]:
    """The focus features of candidate ``i`` (added with them, written as plainly)."""

    def focus_both(j: int) -> float:
        c = candidates[j]
        if c.cos_focus is None:
            return c.cos_fact + CHUNK_WEIGHT * cos_chunk[j]
        chunk = c.cos_focus if c.cos_focus_chunk is None else c.cos_focus_chunk
        return c.cos_focus + CHUNK_WEIGHT * chunk

    every = [focus_both(j) for j in range(len(candidates))]
    return [every[i], every[i] - max(every)]


def _tokens_of(i: int, query: RankQuery, candidates: Sequence[RankCandidate]) -> list[float]:
    """The token features of candidate ``i`` (added with them): MaxSim by plain loops."""
    from tempr.core.token_match import MATCHED, MIN_WEIGHT, unpack

    def maxsim(q: object, raw: bytes | None) -> float:
        d = unpack(raw)
        if q is None or d is None:
            return math.nan
        return sum(max(float(a @ b) for b in d) for a in q) / len(q)  # type: ignore[union-attr]

    def idf_maxsim(q: object, raws: list[bytes | None]) -> list[float]:
        docs = [unpack(r) for r in raws]
        have = [d for d in docs if d is not None]
        if q is None or not have:
            return [math.nan] * len(docs)
        best = [[max(float(a @ b) for b in d) for d in have] for a in q]  # type: ignore[attr-defined]
        df = [sum(1 for v in row if v >= MATCHED) for row in best]
        w = [max(math.log((len(have) + 1) / (n + 0.5)), MIN_WEIGHT) for n in df]
        out, at = [], 0
        for d in docs:
            if d is None:
                out.append(math.nan)
                continue
            out.append(sum(wt * row[at] for wt, row in zip(w, best, strict=True)) / sum(w))
            at += 1
        return out

    def with_gap(every: list[float]) -> list[float]:
        present = [v for v in every if not math.isnan(v)]
        return [every[i], every[i] - max(present)] if present else [math.nan, math.nan]

    plain = query.tokens
    focus = query.tokens if query.focus_tokens is None else query.focus_tokens
    raws = [c.tokens for c in candidates]
    out: list[float] = []
    for q in (plain, focus):
        out += with_gap([maxsim(q, r) for r in raws])
    for q in (plain, focus):
        out += with_gap(idf_maxsim(q, raws))
    return out


def feature_matrix(query: RankQuery, candidates: Sequence[RankCandidate]) -> list[list[float]]:
    """One row of ``FEATURE_NAMES`` values per candidate, in the candidates' order."""
    if not candidates:
        return []
    terms = content_terms(query.text)
    fact_docs = [set(words(c.text)) for c in candidates]
    chunk_docs = [set(words(c.chunk_text)) if c.chunk_text else fact_docs[i] for i, c in enumerate(candidates)]
    idf = pool_idf([f | c for f, c in zip(fact_docs, chunk_docs, strict=True)], terms)
    lex_fact = [coverage(terms, d, idf) for d in fact_docs]
    lex_chunk = [coverage(terms, d, idf) for d in chunk_docs]
    lex_best = [max(a, b) for a, b in zip(lex_fact, lex_chunk, strict=True)]
    top_lex = max(lex_best)
    cos_fact = [c.cos_fact for c in candidates]
    top_cos = max(cos_fact)
    cos_chunk = [c.cos_chunk if c.cos_chunk is not None else c.cos_fact for c in candidates]
    top_chunk = max(cos_chunk)
    cos_order = {i: r for r, i in enumerate(sorted(range(len(candidates)), key=lambda i: -cos_fact[i]), start=1)}
    session, entity = _support(candidates)
    q_len, wh = float(len(terms)), wh_code(query.text)
    rows = []
    for i, c in enumerate(candidates):
        temporal = max((temporal_proximity_signal(c.occurred, w) for w in query.windows), default=0.5)
        inside = any(
            c.occurred is not None and as_utc(w.start) <= as_utc(c.occurred) <= as_utc(w.end) for w in query.windows
        )
        rows.append(
            [
                *(_recip(c.ranks.get(s)) for s in STRATEGIES),
                *(float(c.scores.get(s, 0.0)) for s in STRATEGIES),
                c.rrf,
                float(len(c.ranks)),
                cos_fact[i],
                cos_fact[i] - top_cos,
                1.0 / cos_order[i],
                cos_chunk[i],
                cos_chunk[i] - top_chunk,
                max(cos_fact[i], cos_chunk[i]),
                lex_fact[i],
                lex_chunk[i],
                lex_best[i],
                lex_best[i] - top_lex,
                entity_hits(query.text, c.entities),
                1.0 if query.windows else 0.0,
                temporal,
                1.0 if inside else 0.0,
                recency_signal(c.occurred, query.now),
                1.0 if c.occurred is None else 0.0,
                proof_signal(c.proof_count),
                FACT_TYPE_CODES.get(c.fact_type, 3.0),
                float(len(words(c.text))),
                q_len,
                wh,
                session[i],
                entity[i],
                *_session_of(i, candidates, cos_fact, cos_chunk),
                *_focus_of(i, candidates, cos_chunk),
                *_tokens_of(i, query, candidates),
                float(c.ce) if c.ce is not None else math.nan,
            ]
        )
    return rows
