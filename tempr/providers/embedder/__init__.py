"""Embedders: one interface (``Embedder``), one file per provider."""

from __future__ import annotations

from pathlib import Path

from tempr.providers.embedder.base import Embedder

_VARIANT = {"onnx": "exact", "onnx-int8": "int8", "onnx-int8-mixed": "int8-mixed"}


def make_embedder(
    kind: str, *, batch_size: int = 16, cache_dir: Path | None = None, threads: int | None = None
) -> Embedder:
    """``onnx`` (default), ``onnx-int8-mixed`` / ``onnx-int8`` (quantised), ``torch`` (``minilm`` is its old name) or ``fake``.

    ``cache_dir`` holds the one-time ONNX export of the shipped model; ``threads``: ONNX Runtime's
    intra-op threads (None: one per core).
    """
    if kind == "fake":
        from tempr.providers.embedder.fake import FakeEmbedder

        return FakeEmbedder()
    if kind in ("onnx", "onnx-int8", "onnx-int8-mixed"):
        from tempr.providers.embedder.onnx import OnnxMiniLMEmbedder

        folder = cache_dir or Path(".tempr") / "models"
        return OnnxMiniLMEmbedder(cache_dir=folder, batch_size=batch_size, variant=_VARIANT[kind], threads=threads)
    from tempr.providers.embedder.minilm import MiniLMEmbedder

    return MiniLMEmbedder(batch_size=batch_size)


__all__ = ["Embedder", "make_embedder"]
