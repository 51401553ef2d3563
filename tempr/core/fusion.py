"""Reciprocal Rank Fusion of the four strategies, with optional rank-space boosts.

RRF scores a memory by its *positions*, never by the strategies' raw scores: a
cosine similarity of 0.85 and a BM25 score of 12.5 are not comparable, ranks are::

    score(d) = sum over strategies i that returned d of 1 / (k + rank_i(d))

with 1-indexed ranks and ``k = 60`` so the top hit of one list cannot drown the
consensus of several (seed: #1 semantic and #5 keyword -> 1/61 + 1/65 = 0.0318).

Strategy boosts ("graph:high,semantic:low") favour an arm *in rank space*: its
rank is divided by the level's divisor before the contribution is computed. The
seed's reason for rank space rather than score scaling is that it lets fusion reach
deeper into the favoured arm without pushing the other arms' top hits out of the
reranker cap. Divisors:

* ``low``    1.5 -- rank 15 counts like rank 10
* ``mid``    3   -- rank 30 counts like rank 10 (``medium``, the reference's word, is accepted)
* ``high``   6   -- rank 60 counts like rank 10

(The reference implementation instead adds ``level x 1/(k+rank)``, a score-space
multiplier of 1/3/6; the low level of 1.5 here keeps "low" a real but mild boost.)

Strategies are identified by *name* (``StrategyResult.strategy``), never by list
position, so the order in which the chord delivers results cannot change anything;
sums use ``math.fsum`` so float rounding is order-independent too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from tempr.core.types import FusedCandidate, Strategy, StrategyResult

RRF_K = 60
BOOST_DIVISORS: Mapping[str, float] = {"low": 1.5, "mid": 3.0, "high": 6.0}
LEVEL_ALIASES: Mapping[str, str] = {"medium": "mid"}
"""One word per level across tempr (the budget's ``low|mid|high``); the reference's ``medium`` still parses."""
STRATEGY_NAMES: frozenset[str] = frozenset(s.value for s in Strategy)
STRATEGY_ALIASES: Mapping[str, str] = {"bm25": Strategy.KEYWORD.value}
"""The reference spells the keyword arm ``bm25``; accept its boost strings as they are."""
DEFAULT_BOOST_LEVEL = "mid"


def _strategy_name(raw: str, part: str) -> str:
    name = STRATEGY_ALIASES.get(raw, raw)
    if name not in STRATEGY_NAMES:
        allowed = ", ".join(sorted(STRATEGY_NAMES))
        raise ValueError(f"unknown strategy {raw!r} in boost {part!r}; expected one of {allowed}")
    return name


def _boost_level(raw: str, part: str) -> str:
    level = LEVEL_ALIASES.get(raw, raw)
    if level not in BOOST_DIVISORS:
        allowed = ", ".join(BOOST_DIVISORS)
        raise ValueError(f"unknown boost level {raw!r} in boost {part!r}; expected one of {allowed}")
    return level


def parse_strategy_boosts(spec: str) -> dict[str, str]:
    """Parse ``"graph:high,semantic:low"`` into ``{"graph": "high", "semantic": "low"}``.

    Blank entries and whitespace are ignored; a strategy without a level gets
    ``mid`` (the reference's ``medium``). Unknown names or levels, and a strategy named
    twice, raise ValueError naming the offending part: a typo in a deployment
    setting should fail at start-up, not silently do nothing.
    """
    boosts: dict[str, str] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        raw_name, _, raw_level = part.partition(":")
        name = _strategy_name(raw_name.strip().lower(), part)
        level = _boost_level(raw_level.strip().lower() or DEFAULT_BOOST_LEVEL, part)
        if name in boosts:
            raise ValueError(f"strategy {name!r} boosted twice (at {part!r})")
        boosts[name] = level
    return boosts


def boosted_rank(rank: int, level: str | None) -> float:
    """The rank RRF sees: ``rank / divisor`` for a boosted arm, else ``rank``."""
    if rank < 1:
        raise ValueError(f"ranks are 1-indexed, got {rank}")
    if level is None:
        return float(rank)
    return rank / BOOST_DIVISORS[_boost_level(level, level)]


def rrf_score(ranks: Mapping[str, int], *, k: int = RRF_K, boosts: Mapping[str, str] | None = None) -> float:
    """``sum 1/(k + rank')`` over a memory's per-strategy ranks.

    Public so callers can recompute the *unboosted* score of a FusedCandidate from
    its ``ranks`` (FusedCandidate.rrf_score holds the boosted one).
    """
    levels = boosts or {}
    return math.fsum(1.0 / (k + boosted_rank(r, levels.get(s))) for s, r in ranks.items())


def _validate(results: Sequence[StrategyResult], boosts: Mapping[str, str]) -> None:
    names = [Strategy(r.strategy).value for r in results]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"strategy results must be unique per strategy, repeated: {duplicates}")
    for name, level in boosts.items():
        _strategy_name(name, f"{name}:{level}")
        _boost_level(level, f"{name}:{level}")


def _best_ranks(result: StrategyResult) -> Iterable[tuple[str, int, float]]:
    """(id, 1-indexed rank, raw score) per distinct id; a repeated id keeps its best rank."""
    if result.error is not None:
        return []
    seen: dict[str, tuple[int, float]] = {}
    for position, hit in enumerate(result.hits, start=1):
        seen.setdefault(hit.id, (position, hit.score))
    return [(hit_id, rank, score) for hit_id, (rank, score) in seen.items()]


def _sort_key(candidate: FusedCandidate) -> tuple[float, int, str]:
    """Score desc, then the best single-strategy rank, then id: fully deterministic."""
    return (-candidate.rrf_score, min(candidate.ranks.values()), candidate.id)


def rrf_fuse(
    results: Sequence[StrategyResult],
    *,
    k: int = RRF_K,
    boosts: Mapping[str, str] | None = None,
) -> list[FusedCandidate]:
    """Fuse the strategies' ranked lists into one list, best first.

    A result with ``error`` set counts as an empty list (the strategy degraded; the
    others still answer). ``ranks`` on each candidate are the real, unboosted
    1-indexed positions and ``scores`` the strategies' raw scores, keyed by
    strategy name; ``rrf_score`` is the boosted score the list is sorted by.
    """
    if k < 0:
        raise ValueError(f"RRF k must be >= 0, got {k}")
    levels = dict(boosts or {})
    _validate(results, levels)
    ranks: dict[str, dict[str, int]] = {}
    scores: dict[str, dict[str, float]] = {}
    for result in sorted(results, key=lambda r: Strategy(r.strategy).value):
        name = Strategy(result.strategy).value
        for hit_id, rank, score in _best_ranks(result):
            ranks.setdefault(hit_id, {})[name] = rank
            scores.setdefault(hit_id, {})[name] = score
    fused = [
        FusedCandidate(
            id=hit_id,
            rrf_score=rrf_score(hit_ranks, k=k, boosts=levels),
            ranks=hit_ranks,
            scores=scores[hit_id],
        )
        for hit_id, hit_ranks in ranks.items()
    ]
    fused.sort(key=_sort_key)
    return fused


def cut_candidates(fused: Sequence[FusedCandidate], max_candidates: int) -> list[FusedCandidate]:
    """The top ``max_candidates`` of an already fused (sorted) list: the reranker cap."""
    if max_candidates < 0:
        raise ValueError(f"max_candidates must be >= 0, got {max_candidates}")
    return list(fused[:max_candidates])
