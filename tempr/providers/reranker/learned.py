"""The learned ranker: LightGBM LambdaRank models over ``tempr.core.rank_features`` rows.

It is the rerank stage when no cross-encoder is configured (and, when the model was
trained with the ``ce`` feature, beside one). The model is a small text file versioned
in the repository (``tempr/data/ranker.txt``), retrained with ``tempr ranker train``; it
records the feature names it was trained on, and rows are matched to them by name, so a
model trained on a subset of ``FEATURE_NAMES`` still loads. The file may hold several
models of the same features (an ensemble: ``MEMBER_SEPARATOR`` between them, as ``tempr ranker
train`` writes it); the score is their mean. One LightGBM model's ranking moves with its random
draw (bagging, feature sampling) by a few tenths of a point of recall, and a narrow signal such as
"inside the query's one-day window" can fall either side of a near-tie from one draw to the next;
the mean of three draws does not depend on one. Prediction is one call per member per recall, on
the CPU: each member's trees compiled to machine code (``compiled``: 0.8 ms for the three at 266
candidates), or LightGBM's own ``Booster.predict`` (4.3 ms); the model loads on first use. After
the trees the file may hold a linear member (``LINEAR_MARK``: a logistic regression over the same
features, ``tempr.core.linear_rank``), blended per recall with the trees'
mean: it ranks unseen conversations better than the trees alone (BENCHMARKS.md).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tempr.core.linear_rank import LinearModel, blend
from tempr.core.rank_features import FEATURE_NAMES
from tempr.providers.reranker.compiled import CompiledTrees, compile_members

DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "data" / "ranker.txt"
MEMBER_SEPARATOR = "\n# tempr ranker: next member\n"
"""Between the members of an ensemble in one model file (no line of LightGBM's text format starts with #)."""


LINEAR_MARK = "\n# tempr ranker: linear member, weight "
"""Before the linear member's weight and JSON (``tempr.core.linear_rank``), after the trees."""


def member_text(members: Iterable[str]) -> str:
    """The trees' part of a model file: each member's LightGBM text, ``MEMBER_SEPARATOR`` between."""
    return MEMBER_SEPARATOR.join(members)


def linear_section(model: LinearModel, weight: float) -> str:
    """The model file's last part: the linear member and how much it counts."""
    return f"{LINEAR_MARK}{weight!r}\n{model.to_json()}\n"


def split_model(text: str) -> tuple[str, LinearModel | None, float]:
    """A model file's text as (the trees' text, the linear member or None, its weight)."""
    trees, mark, rest = text.partition(LINEAR_MARK)
    if not mark:
        return text, None, 0.0
    weight, _, body = rest.partition("\n")
    try:
        return trees, LinearModel.from_json(body), float(weight)
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"the ranker model's linear member is unreadable: {exc}") from exc


def member_texts(text: str) -> list[str]:
    """Each tree member's LightGBM text in a model file's text (one, or an ensemble's members)."""
    trees, _, _ = split_model(text)
    return [part for part in trees.split(MEMBER_SEPARATOR) if part.strip()]


def load_members(text: str) -> list[Any]:
    """The LightGBM boosters a model file's text holds (one, or an ensemble's members)."""
    import lightgbm

    return [lightgbm.Booster(model_str=part) for part in member_texts(text)]


def mean_score(boosters: Sequence[Any], matrix: np.ndarray) -> np.ndarray:
    """The members' mean prediction for each row (one thread each: a recall is one small batch)."""
    total = boosters[0].predict(matrix, num_threads=1)
    for booster in boosters[1:]:
        total = total + booster.predict(matrix, num_threads=1)
    return total / len(boosters)


def mean_compiled(members: Sequence[CompiledTrees], matrix: np.ndarray) -> np.ndarray:
    """``mean_score`` by the compiled members (the same sums in the same order)."""
    total = members[0].predict(matrix)
    for member in members[1:]:
        total = total + member.predict(matrix)
    return total / len(members)


class LearnedRanker:
    calibrated = False

    def __init__(self, path: Path | str | None = None, *, compiled_dir: Path | None = None) -> None:
        """``compiled_dir``: where the trees' compiled code is cached (None: LightGBM predicts)."""
        self.path = Path(path) if path else DEFAULT_MODEL
        self.name = f"learned:{self.path.stem}"
        self._boosters: list[Any] = []
        self._compiled_dir = compiled_dir
        self._compiled: list[CompiledTrees] | None = None
        self._columns: list[int] = []
        self._linear: LinearModel | None = None
        self._linear_weight = 0.0
        self._all_columns = list(range(len(FEATURE_NAMES)))
        self._lock = threading.Lock()

    def _load(self) -> list[Any]:
        if not self._boosters:
            with self._lock:
                if not self._boosters:
                    text = self.path.read_text(encoding="utf-8")
                    boosters = load_members(text)
                    _, linear, weight = split_model(text)
                    if not boosters:
                        raise ValueError(f"ranker model {self.path} holds no model")
                    names = boosters[0].feature_name()
                    if any(b.feature_name() != names for b in boosters[1:]):
                        raise ValueError(f"the members of ranker model {self.path} read different features")
                    unknown = [n for n in names if n not in FEATURE_NAMES]
                    if unknown:
                        raise ValueError(f"ranker model {self.path} uses unknown features {unknown}")
                    if linear is not None and list(linear.features) != names:
                        raise ValueError(f"the linear member of ranker model {self.path} reads other features")
                    self._columns = [FEATURE_NAMES.index(n) for n in names]
                    self._linear, self._linear_weight = linear, weight
                    if self._compiled_dir is not None:
                        self._compiled = compile_members(member_texts(text), self._compiled_dir)
                    self._boosters = boosters
        return self._boosters

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
        boosters = self._load()
        matrix = np.asarray(rows, dtype=np.float64)
        if self._columns != self._all_columns:
            matrix = matrix[:, self._columns]
        trees = mean_compiled(self._compiled, matrix) if self._compiled else mean_score(boosters, matrix)
        if self._linear is not None:
            trees = blend(trees, self._linear.decision(matrix), self._linear_weight)
        scores: list[float] = trees.tolist()
        return scores
