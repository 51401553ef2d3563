"""Rerankers: two interfaces, one file per provider.

``Reranker`` scores (query, passage) text pairs: the cross-encoder (``TEMPR_RERANKER_MODEL``).
``CandidateRanker`` scores feature rows: the learned ranker, the rerank stage of the
``default`` recall profile when no cross-encoder is configured (or beside one, when its model
was trained with the cross-encoder's score as a feature). With neither (the ``seed``
profile, no model) the pipeline applies the seed's RRF-derived fallback scores.
"""

from __future__ import annotations

from pathlib import Path

from tempr.providers.reranker.base import CandidateRanker, Reranker


def make_reranker(
    model: str | None, *, calibrated: bool = False, batch_size: int = 32, device: str | None = None
) -> Reranker | None:
    if not model:
        return None
    if model == "fake":
        from tempr.providers.reranker.fake import FakeReranker

        return FakeReranker()
    from tempr.providers.reranker.cross_encoder import CrossEncoderReranker

    return CrossEncoderReranker(model, calibrated=calibrated, batch_size=batch_size, device=device)


def make_ranker(
    profile: str, model_path: Path | None = None, *, compiled_dir: Path | None = None
) -> CandidateRanker | None:
    """The learned ranker for the ``default`` recall profile; None for ``seed`` (the seed's fallback).

    ``compiled_dir``: its trees run as compiled code cached there (``TEMPR_RANKER_RUNTIME=compiled``);
    None: LightGBM's own predict (the same scores, slower)."""
    if profile == "seed":
        return None
    from tempr.providers.reranker.learned import LearnedRanker

    return LearnedRanker(model_path, compiled_dir=compiled_dir)


__all__ = ["CandidateRanker", "Reranker", "make_ranker", "make_reranker"]
