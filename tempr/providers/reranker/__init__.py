"""Rerankers: one interface (``Reranker``), one file per provider.

With no model configured there is no reranker object at all: the pipeline
applies the seed's RRF-derived fallback scores without any model call.
"""

from __future__ import annotations

from tempr.providers.reranker.base import Reranker


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


__all__ = ["Reranker", "make_reranker"]
