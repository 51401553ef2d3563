"""Graph strategy scoring: three evidence channels summed, decayed per hop.

A memory reached from the seeds scores ``entity + semantic + causal`` in [0, 3]:

* entity: ``tanh(0.5 x shared entities)``. Raw counts are unbounded (a hub entity
  such as "user" can be shared 50 times) and would drown the other channels; tanh
  saturates (1 -> 0.46, 2 -> 0.76, 3 -> 0.91), so the first few shared entities
  matter and the rest add little.
* semantic: the precomputed kNN link weight (>= the link threshold, <= 1).
* causal: the causal link weight.

Additive, not multiplicative, because the channels are independent evidence: a
memory linked only causally must not be zeroed by having no shared entity.

Unlike the reference (always one hop), the budget level sets the depth (low 1, mid
2, high 3 hops) and each extra hop multiplies the score by ``decay`` (settings'
``graph_hop_decay``, 0.5: hop 1 x1, hop 2 x0.5, hop 3 x0.25), so a direct link
always outweighs the same evidence found further away.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

ENTITY_SATURATION = 0.5
HOP_DEPTHS: Mapping[str, int] = {"low": 1, "mid": 2, "high": 3}


def _unit(x: float) -> float:
    """``x`` clamped to [0, 1]; NaN (a broken link weight) counts as no evidence."""
    if math.isnan(x):
        return 0.0
    return max(0.0, min(1.0, x))


def entity_score(shared_count: int) -> float:
    """``tanh(0.5 x shared_count)``: in [0, 1), 0 for no shared entity."""
    if shared_count < 0:
        raise ValueError(f"shared entity count must be >= 0, got {shared_count}")
    return math.tanh(ENTITY_SATURATION * shared_count)


def graph_score(entity: float, semantic: float, causal: float) -> float:
    """Sum of the three channels, each clamped to [0, 1] so none can dominate; in [0, 3]."""
    return _unit(entity) + _unit(semantic) + _unit(causal)


def hop_decay(hop: int, decay: float) -> float:
    """Multiplier for a node first reached at ``hop`` (1-indexed): ``decay ** (hop - 1)``."""
    if hop < 1:
        raise ValueError(f"hops are 1-indexed, got {hop}")
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"hop decay must be in [0, 1], got {decay}")
    return decay ** (hop - 1)


def combine_hops(per_hop: Sequence[Mapping[str, float]], decay: float) -> dict[str, float]:
    """Merge per-hop scores (``per_hop[0]`` is hop 1) into one decayed score per node.

    A node reached at several hops keeps its best decayed score: a strong 2-hop
    path should not be masked by a weak direct link, nor counted twice. The result
    is ordered by score desc, then id, so it can be used as a ranking directly.
    """
    best: dict[str, float] = {}
    for hop, scores in enumerate(per_hop, start=1):
        factor = hop_decay(hop, decay)
        for node, score in scores.items():
            decayed = score * factor
            if node not in best or decayed > best[node]:
                best[node] = decayed
    return dict(sorted(best.items(), key=lambda item: (-item[1], item[0])))


def multi_hop_depth(level: str) -> int:
    """Traversal depth for a budget level: low 1, mid 2, high 3."""
    try:
        return HOP_DEPTHS[level]
    except KeyError:
        raise ValueError(f"unknown budget level {level!r}; expected one of {tuple(HOP_DEPTHS)}") from None
