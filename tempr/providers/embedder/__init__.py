"""Embedders: one interface (``Embedder``), one file per provider."""

from __future__ import annotations

from tempr.providers.embedder.base import Embedder


def make_embedder(kind: str, *, batch_size: int = 64) -> Embedder:
    if kind == "fake":
        from tempr.providers.embedder.fake import FakeEmbedder

        return FakeEmbedder()
    from tempr.providers.embedder.minilm import MiniLMEmbedder

    return MiniLMEmbedder(batch_size=batch_size)


__all__ = ["Embedder", "make_embedder"]
