"""Strategy boosts after reranking, in rank space.

Before the reranker cut a favoured strategy's rank is divided by its level's
divisor inside RRF (``tempr.core.fusion``). After reranking the same idea is
applied to the reranked list: a candidate that came from a favoured strategy
and sits at rank r is lifted to the score found at rank r / divisor
(interpolated between neighbours), never lowered. Scores stay on the
reranker's [0, 1] scale, and candidates of other strategies keep theirs, so
a boost reaches deeper into its arm without pushing the best of the others
down more than the boosted ones overtake them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def score_at_rank(ordered_scores: Sequence[float], rank: float) -> float:
    """The score at a 1-indexed, possibly fractional rank of a descending list."""
    if not ordered_scores:
        raise ValueError("no scores")
    rank = min(max(rank, 1.0), float(len(ordered_scores)))
    low = math.floor(rank)
    high = min(low + 1, len(ordered_scores))
    frac = rank - low
    return ordered_scores[low - 1] + (ordered_scores[high - 1] - ordered_scores[low - 1]) * frac


def promote(scores: Mapping[str, float], divisors: Mapping[str, float]) -> dict[str, float]:
    """Lift each id with a divisor > 1 to the score at rank r / divisor; others unchanged."""
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    values = [v for _, v in ordered]
    out = dict(scores)
    for position, (item, own) in enumerate(ordered, start=1):
        divisor = divisors.get(item, 1.0)
        if divisor > 1.0:
            out[item] = max(own, score_at_rank(values, position / divisor))
    return out
