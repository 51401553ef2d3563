"""A sentence-transformers ``CrossEncoder``, local path or model name, on GPU when present.

The model is loaded on first use, not at construction, so a rerank
worker's start-up is never blocked by it. ``activation_fn`` is the identity:
the model's raw logits come back and tempr applies the sigmoid itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from config.errors import ConfigError

SETTING = "TEMPR_RERANKER_MODEL"


def model_error(ref: str) -> str | None:
    """Why ``ref`` cannot be loaded offline (None: it can be tried): a folder that is missing, or a
    model name that the local Hugging Face cache does not hold. Cheap (no torch), so ``tempr
    services up`` checks it before starting a rerank pool that could only fail every recall."""
    path = Path(ref).expanduser()
    if path.is_dir():
        return None
    if path.exists():
        return f"{ref!r} is a file; give the folder that holds the model"
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(ref, "config.json")
    except Exception:  # noqa: BLE001 - not a valid model name either (e.g. a path that does not exist)
        cached = None
    if isinstance(cached, str):
        return None
    return (
        f"no folder {ref!r}, and no model of that name in the local Hugging Face cache "
        "(nothing is downloaded): give a local folder holding a sentence-transformers CrossEncoder"
    )


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
        self._error: str | None = None
        self._lock = threading.Lock()

    @property
    def device(self) -> str:
        return pick_device(self._device)

    def _load(self) -> Any:
        """The model, loaded once. A model that cannot load raises ``ConfigError`` naming the
        setting, at once on every later call too (a recall then ranks without it: degraded)."""
        if self._model is None:
            with self._lock:
                if self._error is not None:
                    raise ConfigError(self._error, field=SETTING)
                if self._model is None:
                    missing = model_error(self.model_ref)  # said plainly, before the loader's own noise
                    try:
                        if missing:
                            raise FileNotFoundError(missing)
                        self._model = self._build()
                    except Exception as exc:
                        reason = missing or (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                        self._error = f"cannot load the cross-encoder {self.model_ref!r}: {reason}"
                        raise ConfigError(self._error, field=SETTING) from exc
        return self._model

    def _build(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from sentence_transformers import CrossEncoder

        return CrossEncoder(
            self.model_ref, device=self.device, max_length=self.max_length, activation_fn=torch.nn.Identity()
        )

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
