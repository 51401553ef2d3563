"""Turning cross-encoder output into a [0, 1] relevance score, or faking one.

The combined-scoring boosts multiply a relevance in [0, 1], so whatever the
reranker returns must land there:

* A *calibrated* model (an API reranker that already returns probabilities) is
  passed through, only clamped, to keep its absolute confidence.
* An uncalibrated model (a local CrossEncoder such as ms-marco-MiniLM) returns
  raw logits, so every score goes through the logistic sigmoid.

Difference from the reference: it decides **per batch** -- if every score of the
batch happens to lie in [0, 1] it passes them through, otherwise it sigmoids all
of them. That makes one candidate's score depend on its batch neighbours (a batch
of logits that all fall in [0, 1] escapes the sigmoid). Here the choice is a
property of the **model** (``reranker_calibrated`` in settings), so a memory's
score is the same whichever request or merged rerank batch it arrives in.

Without a reranker, :func:`rrf_fallback_scores` assigns synthetic scores spread
evenly over [0.1, 1.0] by RRF rank, so the multiplicative boosts still have a
graded base to nudge (the seed's "RRF-derived fallback").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

FALLBACK_TOP = 1.0
FALLBACK_BOTTOM = 0.1


def sigmoid(x: float) -> float:
    """The logistic function ``1 / (1 + e^-x)``, without overflow for large ``|x|``.

    NaN maps to 0.0: a broken score should rank last, not mid-table.
    """
    if math.isnan(x):
        return 0.0
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def clamp_unit(x: float) -> float:
    """``x`` limited to [0, 1]; NaN maps to 0.0 (see :func:`sigmoid`)."""
    if math.isnan(x):
        return 0.0
    return max(0.0, min(1.0, x))


def normalise_scores(raw: Sequence[float], *, calibrated: bool) -> list[float]:
    """Map raw reranker scores to [0, 1], score by score (never batch-conditional).

    ``calibrated=True``: pass through, clamped. ``False``: sigmoid of each score.
    """
    transform = clamp_unit if calibrated else sigmoid
    return [transform(float(x)) for x in raw]


def rrf_fallback_scores(n: int) -> list[float]:
    """Synthetic relevance for ``n`` candidates in RRF order: ``1 - 0.9 * i / (n - 1)``.

    The best candidate gets 1.0 and the last 0.1, linearly in between; a single
    candidate gets 1.0. The floor of 0.1 (not 0) keeps the last candidate's boosts
    meaningful, since a multiplicative boost of zero is still zero.
    """
    if n < 0:
        raise ValueError(f"candidate count must be >= 0, got {n}")
    if n == 1:
        return [FALLBACK_TOP]
    span = FALLBACK_TOP - FALLBACK_BOTTOM
    # Written from the bottom up so both ends are exact floats (1.0 - 0.9 is not 0.1).
    return [FALLBACK_BOTTOM + span * ((n - 1 - i) / (n - 1)) for i in range(n)]
