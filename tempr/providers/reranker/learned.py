"""The learned ranker: a LightGBM LambdaRank model over ``tempr.core.rank_features`` rows.

It is the rerank stage when no cross-encoder is configured (and, when the model was
trained with the ``ce`` feature, beside one). The model is a small text file versioned
in the repository (``tempr/data/ranker.txt``), retrained with ``tempr ranker train``; it
records the feature names it was trained on, and rows are matched to them by name, so a
model trained on a subset of ``FEATURE_NAMES`` still loads. Prediction is one
``Booster.predict`` call per recall, on the CPU, in well under a millisecond per hundred
candidates; the model loads on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tempr.core.rank_features import FEATURE_NAMES

DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "data" / "ranker.txt"


class LearnedRanker:
    calibrated = False

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path else DEFAULT_MODEL
        self.name = f"learned:{self.path.stem}"
        self._booster: Any = None
        self._columns: list[int] = []
        self._all_columns = list(range(len(FEATURE_NAMES)))
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._booster is None:
            with self._lock:
                if self._booster is None:
                    import lightgbm

                    booster = lightgbm.Booster(model_file=str(self.path))
                    names = booster.feature_name()
                    unknown = [n for n in names if n not in FEATURE_NAMES]
                    if unknown:
                        raise ValueError(f"ranker model {self.path} uses unknown features {unknown}")
                    self._columns = [FEATURE_NAMES.index(n) for n in names]
                    self._booster = booster
        return self._booster

    @property
    def features(self) -> list[str]:
        """The feature names the model reads, in its column order."""
        self._load()
        return [FEATURE_NAMES[i] for i in self._columns]

    @property
    def uses_cross_encoder(self) -> bool:
        return "ce" in self.features

    def score_rows(self, rows: Sequence[Sequence[float]] | np.ndarray) -> list[float]:
        """Raw ranking scores (higher is better), one per ``FEATURE_NAMES`` row.

        ``rows`` is a list of rows or, cheaper, ``feature_array``'s float64 array (used
        as is: no copy but the model's column selection).
        """
        if len(rows) == 0:
            return []
        booster = self._load()
        matrix = np.asarray(rows, dtype=np.float64)
        if self._columns != self._all_columns:
            matrix = matrix[:, self._columns]
        scores: list[float] = booster.predict(matrix, num_threads=1).tolist()
        return scores
