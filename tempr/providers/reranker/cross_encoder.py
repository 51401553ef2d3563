"""A sentence-transformers ``CrossEncoder``, local path or model name, on GPU when present.

The model is loaded on first use, not at construction, so a rerank
worker's start-up is never blocked by it. ``activation_fn`` is the identity:
the model's raw logits come back and tempr applies the sigmoid itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any


def pick_device(preferred: str | None = None) -> str:
    if preferred:
        return preferred
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class CrossEncoderReranker:
    def __init__(
        self,
        model: str,
        *,
        calibrated: bool = False,
        batch_size: int = 32,
        device: str | None = None,
        max_length: int = 512,
    ) -> None:
        self.name = f"cross-encoder:{model}"
        self.model_ref = model
        self.calibrated = calibrated
        self.batch_size = batch_size
        self.max_length = max_length
        self._device = device
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def device(self) -> str:
        return pick_device(self._device)

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    import torch
                    from sentence_transformers import CrossEncoder

                    self._model = CrossEncoder(
                        self.model_ref,
                        device=self.device,
                        max_length=self.max_length,
                        activation_fn=torch.nn.Identity(),
                    )
        return self._model

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        scores = self._load().predict(
            [list(p) for p in pairs],
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return [float(s) for s in scores.reshape(-1)]
