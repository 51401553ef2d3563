"""The pure recall maths: no I/O, no settings, every parameter passed in.

Nothing here (or in ``tempr.temporal``) may import celery, sqlalchemy, psycopg,
redis, kombu or the ``config`` package; ``tests/unit/test_core_purity.py`` checks.
"""

from tempr.core.boosts import (
    DEFAULT_ALPHAS,
    boost,
    combined_score,
    proof_signal,
    recency_signal,
    temporal_proximity_signal,
)
from tempr.core.budget import (
    LEVELS,
    BudgetLevel,
    multi_hop_depth,
    packing_pool_size,
    recall_budget,
)
from tempr.core.fusion import (
    BOOST_DIVISORS,
    RRF_K,
    cut_candidates,
    parse_strategy_boosts,
    rrf_fuse,
    rrf_score,
)
from tempr.core.packing import PackDecision, PackResult, pack
from tempr.core.rerank_scores import normalise_scores, rrf_fallback_scores, sigmoid
from tempr.core.spreading import SpreadCandidate, bucket_index, spread_across_buckets
from tempr.core.timeutil import as_utc
from tempr.core.types import (
    ALL_STRATEGIES,
    EventAnchor,
    FusedCandidate,
    Hit,
    Strategy,
    StrategyResult,
    TemporalAnalysis,
    TimeWindow,
)

__all__ = [
    "ALL_STRATEGIES",
    "BOOST_DIVISORS",
    "DEFAULT_ALPHAS",
    "LEVELS",
    "RRF_K",
    "BudgetLevel",
    "EventAnchor",
    "FusedCandidate",
    "Hit",
    "PackDecision",
    "PackResult",
    "SpreadCandidate",
    "Strategy",
    "StrategyResult",
    "TemporalAnalysis",
    "TimeWindow",
    "as_utc",
    "boost",
    "bucket_index",
    "combined_score",
    "cut_candidates",
    "multi_hop_depth",
    "normalise_scores",
    "pack",
    "packing_pool_size",
    "parse_strategy_boosts",
    "proof_signal",
    "recall_budget",
    "recency_signal",
    "rrf_fallback_scores",
    "rrf_fuse",
    "rrf_score",
    "sigmoid",
    "spread_across_buckets",
    "temporal_proximity_signal",
]
