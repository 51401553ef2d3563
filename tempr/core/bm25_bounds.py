"""Exact top-k BM25 without scoring every posting: MaxScore-style term bounds (pure).

A BM25 score is a sum over the query's terms of ``idf * f(tf, dl)`` with
``f = tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))``, which grows with the term frequency
and shrinks with the document's length. So if the bank remembers, per term, the largest
tf and the shortest document it has seen (``bm25_terms.max_tf`` / ``min_len``), no memory
can get more than ``idf * f(max_tf, min_len)`` from that term: its *bound*.

Split the query's terms in two: the *essential* ones (rare, high idf) and the rest. Score
only the memories that contain an essential term, but with every query term. A memory
that contains none of the essential terms scores at most the sum of the other terms'
bounds. If the k-th best score found exceeds that sum, no such memory can enter the top
k, and the answer equals the full query's: exact, not approximate. If it does not, move
one more term into the essential set and try again; at worst, score everything. The same
proof works for the memories holding *all* of a few strong terms (a memory missing one of
them scores at most the sum of all bounds but that term's): for a short list (the graph
strategy's 10 seeds) and a person's first and last name, that set is tiny.

This matters when a bank is large and a query names a common word ("moved", a year):
that word's postings are most of the work and rarely change the top k.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "MAX_PRUNED_ATTEMPTS",
    "MIN_POSTINGS",
    "MIN_PRUNED_SHARE",
    "Attempt",
    "TermStat",
    "certified",
    "pruned_attempts",
    "term_bound",
    "tf_part",
]

# Below this many postings (the sum of the query terms' df) one full query is cheap already.
MIN_POSTINGS = 5_000
# A pruned attempt is worth a round trip only when it skips at least this share of postings.
MIN_PRUNED_SHARE = 0.25
# Failed attempts cost a query each; after this many, score everything.
MAX_PRUNED_ATTEMPTS = 3
# Scores are summed in PostgreSQL (and rounded to 10 decimals) and bounds in Python: allow for both.
_RELATIVE_SLACK = 1e-9


@dataclass(frozen=True, slots=True)
class TermStat:
    """One query term as the bank knows it: df, idf, and its bound (the most it can add)."""

    term: str
    df: int
    idf: float
    bound: float


def tf_part(tf: float, dl: float, avgdl: float, k1: float, b: float) -> float:
    """The saturating, length-normalised term frequency of Okapi BM25 (``avgdl`` > 0)."""
    return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


def term_bound(idf: float, max_tf: int, min_len: int, avgdl: float, k1: float, b: float) -> float:
    """The most one term can add to any memory's score: largest tf, shortest memory.

    ``tf_part`` rises with tf and falls with dl (k1, b >= 0), so the extremes bound it.
    """
    return idf * tf_part(max(max_tf, 1), max(min_len, 0), avgdl, k1, b)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One pruned query: score the memories holding ``any`` (or ``all``) of ``terms``.

    ``rest_bound``: the most a memory outside that set can score. Outside ``any(E)`` a memory
    holds only the other terms; outside ``all(A)`` it misses at least one term of A.
    """

    terms: tuple[str, ...]
    conjunctive: bool
    rest_bound: float


def pruned_attempts(
    terms: Sequence[TermStat],
    limit: int,
    *,
    units: int = 0,
    min_postings: int = MIN_POSTINGS,
    min_share: float = MIN_PRUNED_SHARE,
    max_attempts: int = MAX_PRUNED_ATTEMPTS,
) -> list[Attempt]:
    """The pruned queries worth trying, cheapest first. An empty list means: run the full query.

    First, when the two strongest terms are likely to co-occur in ``limit`` of the bank's
    ``units`` memories (independence estimate, doubled), the memories holding both: a person's
    first and last name, typically, whose intersection is tiny beside either posting list.
    Then disjunctions: terms go into the essential set strongest bound first; an attempt
    needs its essential postings to reach ``limit`` (else it cannot fill the top k), the
    rest's bound below the sum of its own terms' idf (what a memory of average length holding
    each once scores; a k-th score above that is unlikely, so the query would be wasted: a
    choice, not part of the proof), and must skip at least ``min_share`` of all postings.
    """
    postings = sum(t.df for t in terms)
    if len(terms) < 2 or postings <= min_postings or limit <= 0:
        return []
    ordered = sorted(terms, key=lambda t: (-t.bound, t.df, t.term))
    total = sum(t.bound for t in ordered)
    attempts: list[Attempt] = []
    pair = ordered[:2]
    if units > 0 and 2 * units * (pair[0].df / units) * (pair[1].df / units) >= limit:
        attempts.append(Attempt((pair[0].term, pair[1].term), True, total - min(t.bound for t in pair)))
    for j in range(1, len(ordered)):
        essential, rest = ordered[:j], ordered[j:]
        essential_postings = sum(t.df for t in essential)
        rest_bound = sum(t.bound for t in rest)
        if essential_postings < limit or rest_bound >= sum(t.idf for t in essential):
            continue  # cannot fill the top k, or its k-th would need more than a typical match of E
        if postings - essential_postings < min_share * postings:
            break
        attempts.append(Attempt(tuple(t.term for t in essential), False, rest_bound))
    return attempts[:max_attempts]


def certified(scores: Sequence[float], limit: int, rest_bound: float) -> bool:
    """True when a pruned query's scores (best first) are provably the full query's top ``limit``.

    It needs ``limit`` rows, and its k-th score strictly above what a memory without an
    essential term can reach (so ties at the k-th place cannot hide such a memory either).
    """
    if limit <= 0 or len(scores) < limit:
        return False
    return scores[limit - 1] > rest_bound * (1 + _RELATIVE_SLACK) + _RELATIVE_SLACK
