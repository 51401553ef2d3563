"""The reranker interface: (query, passage) pairs in, raw relevance scores out.

Raw means what the model emits: logits for most cross-encoders, [0, 1]
probabilities for a model declared ``calibrated``. Normalisation to [0, 1]
is the pure core's job (``tempr.core.rerank_scores.normalise_scores``), so
every provider is scored the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np


class Reranker(Protocol):
    name: str
    calibrated: bool

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


class CandidateRanker(Protocol):
    """A ranker over feature rows (``tempr.core.rank_features.FEATURE_NAMES`` columns), not text pairs."""

    name: str

    @property
    def uses_cross_encoder(self) -> bool: ...

    def score_rows(self, rows: Sequence[Sequence[float]] | np.ndarray) -> list[float]:
        """One score per row; rows as lists or as ``feature_array``'s float64 array."""
        ...
