"""A linear member beside the learned ranker's trees, and how the two scores are blended.

Why: the LambdaRank trees are fitted on four conversations and ranked on a fifth; a model of
axis-aligned splits generalises in steps, and a logistic regression over the same features
(standardised, with a missing-value flag per column) ranks smoothly where the trees are unsure.
Blended per query, the two rank better on unseen conversations than either (leave one
conversation out on LoCoMo: BENCHMARKS.md, "A linear member beside the trees").

The blend is ``tree + weight * sd(tree) * z(linear)`` over one query's candidates: the same order
as ``z(tree) + weight * z(linear)``, on the trees' own scale, so what reads raw ranker units after
it (the repeat penalty, ``tempr.core.repeats``) means what it meant before.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["LinearModel", "blend"]


@dataclass(frozen=True)
class LinearModel:
    """A logistic regression's decision function over named features: each value standardised
    (a missing one reads as 0 and sets its column's flag), weighted, summed with the flags'
    weights."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    missing_coef: tuple[float, ...]
    intercept: float = 0.0

    def decision(self, matrix: np.ndarray) -> np.ndarray:
        """One score per row of ``matrix`` (columns in ``features``' order; NaN: missing)."""
        m = np.asarray(matrix, dtype=np.float64)
        missing = np.isnan(m)
        z = (np.where(missing, 0.0, m) - np.asarray(self.mean)) / np.asarray(self.scale)
        scores: np.ndarray = z @ np.asarray(self.coef) + missing @ np.asarray(self.missing_coef) + self.intercept
        return scores

    def to_json(self) -> str:
        return json.dumps(
            {
                "features": list(self.features),
                "mean": list(self.mean),
                "scale": list(self.scale),
                "coef": list(self.coef),
                "missing_coef": list(self.missing_coef),
                "intercept": self.intercept,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> LinearModel:
        data = json.loads(text)
        model = cls(
            features=tuple(data["features"]),
            mean=tuple(float(x) for x in data["mean"]),
            scale=tuple(float(x) for x in data["scale"]),
            coef=tuple(float(x) for x in data["coef"]),
            missing_coef=tuple(float(x) for x in data["missing_coef"]),
            intercept=float(data.get("intercept", 0.0)),
        )
        n = len(model.features)
        if not all(len(v) == n for v in (model.mean, model.scale, model.coef, model.missing_coef)):
            raise ValueError("a linear ranker's columns do not match its features")
        if any(s <= 0 for s in model.scale):
            raise ValueError("a linear ranker's scales must be positive")
        return model


def _z(values: np.ndarray) -> np.ndarray:
    sd = float(values.std())
    return (values - values.mean()) / sd if sd > 0 else np.zeros_like(values)


def blend(tree: Sequence[float] | np.ndarray, linear: Sequence[float] | np.ndarray, weight: float) -> np.ndarray:
    """One query's blended scores: ``tree + weight * sd(tree) * z(linear)``.

    Ranks exactly as ``z(tree) + weight * z(linear)``; a query whose tree scores are all equal
    is ranked by the linear scores alone (on a unit scale)."""
    a = np.asarray(tree, dtype=np.float64)
    b = np.asarray(linear, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError("tree and linear scores differ in length")
    if a.size == 0 or weight == 0:
        return a.copy()
    sd = float(a.std())
    out: np.ndarray = a + weight * (sd if sd > 0 else 1.0) * _z(b)
    return out
