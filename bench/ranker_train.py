"""Fit the learned ranker (LightGBM LambdaRank) and cross-validate it leave-one-conversation-out.

``tempr ranker train`` = ingest the LoCoMo dev conversations, collect every question's
candidates (``bench.ranker_data``), report the leave-one-conversation-out figures (each
conversation ranked by a model trained on the other four, so no figure is measured on its
own training data) and write the model trained on all of them to ``tempr/data/ranker.txt``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.metrics import KS, mean, recall_at_k
from bench.ranker_data import Sample
from tempr.core.linear_rank import LinearModel, blend
from tempr.core.rank_features import FEATURE_NAMES, feature_matrix

PARAMS: dict[str, Any] = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [5, 10, 25],
    "lambdarank_truncation_level": 50,
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "num_threads": 2,
    "seed": 7,
    "deterministic": True,
    "force_row_wise": True,
    "verbosity": -1,
}
ROUNDS = 200
MONOTONE: dict[str, int] = {"in_window": 1, "temporal_proximity": 1}
"""Features the score may only grow with (LightGBM's monotone constraints): a memory inside the
query's time window, or nearer to it, never ranks lower for it. LoCoMo's questions rarely name a
date, so without the constraint a model can learn the window's signal backwards from a few
questions (the time-window test of ``tests/integration/test_recall_default.py``)."""
USED_FEATURES: tuple[str, ...] = tuple(n for n in FEATURE_NAMES if n != "ce")
"""The features the shipped model reads (``ce`` only when trained with a cross-encoder configured)."""


@dataclass
class Matrix:
    rows: list[list[float]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)


def columns(features: Sequence[str]) -> list[int]:
    return [FEATURE_NAMES.index(n) for n in features]


def sample_rows(sample: Sample, features: Sequence[str]) -> list[list[float]]:
    cols = columns(features)
    return [[row[c] for c in cols] for row in feature_matrix(sample.query, sample.candidates)]


def matrix(samples: Sequence[Sample], features: Sequence[str]) -> Matrix:
    """Questions with at least one relevant candidate (a LambdaRank group with none teaches nothing)."""
    out = Matrix()
    for s in samples:
        labels = s.labels()
        if not any(labels) or len(labels) < 2:
            continue
        out.rows += sample_rows(s, features)
        out.labels += labels
        out.groups.append(len(labels))
    return out


def as_unnamed(sample: Sample) -> Sample:
    """The question as if it named nobody: no focus cosines, so the focus features are the plain ones."""
    plain = [replace(c, cos_focus=None, cos_focus_chunk=None) for c in sample.candidates]
    return replace(sample, query=replace(sample.query, focus_tokens=None), candidates=plain)


def with_unnamed_copies(samples: Sequence[Sample]) -> list[Sample]:
    """The samples, plus each question that names someone once more as if it named nobody.

    Nearly every LoCoMo question names a speaker, so without the copies the model never sees a
    query that is its own focus (``focus_both == both``), which is what most users' queries are
    ("where does she work?"), and a query whose only topic is a date. Trained on both, it ranks
    those as the model before the focus features did (the time-window test of
    ``tests/integration/test_recall_default.py``) for 0.1-0.4 points of the focus' gain on LoCoMo
    (BENCHMARKS.md)."""
    named = [
        as_unnamed(s)
        for s in samples
        if s.query.focus_tokens is not None or any(c.cos_focus is not None for c in s.candidates)
    ]
    return [*samples, *named]


TOKENLESS_EVERY = 4
"""Every this many training questions is also trained once without token vectors (``with_tokenless_copies``)."""


def without_tokens(sample: Sample) -> Sample:
    """The question as a bank stored before token vectors, or a query with no topic, sees it."""
    bare = [replace(c, tokens=None) for c in sample.candidates]
    return replace(sample, query=replace(sample.query, tokens=None, focus_tokens=None), candidates=bare)


def with_tokenless_copies(samples: Sequence[Sample]) -> list[Sample]:
    """The samples, plus every ``TOKENLESS_EVERY``-th once more with its token features missing.

    Token features are missing for memories stored before token vectors (or with
    ``TEMPR_TOKEN_VECTORS=false``) and for a query that names someone and has no other topic
    ("What did Priya do on March 8?", ``tempr.core.query_focus.has_topic``). A model that never
    saw them missing reads NaN as 0 there, outside every value it learned; with the copies it
    learns to rank such questions on the other features, as the model before them did."""
    return [*samples, *(without_tokens(s) for s in samples[::TOKENLESS_EVERY])]


LINEAR_WEIGHT = 1.0
"""How much the linear member counts beside the trees (``tempr.core.linear_rank.blend``): chosen
on the dev conversations, leave one conversation out, among 0, 0.1, 0.25, 0.5, 1 and 2
(BENCHMARKS.md, "A linear member beside the trees"). 0 ships the trees alone."""
LINEAR_C = 0.1
"""The logistic regression's inverse L2 strength (scikit-learn's ``C``) on standardised features."""


def fit_linear(samples: Sequence[Sample], features: Sequence[str]) -> LinearModel:
    """A logistic regression on the rows the trees train on (with the same copies), classes
    balanced. A missing value reads as 0 and sets a flag of its own; values and flags are
    standardised for the fit and the flags' scaling folded back into their weights, so the model
    scores raw rows. ``MONOTONE`` features get no negative weight: the window can only help."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    m = matrix(with_tokenless_copies(with_unnamed_copies(samples)), features)
    raw = np.asarray(m.rows, dtype=np.float64)
    flags = np.isnan(raw).astype(np.float64)
    x = np.hstack([np.where(np.isnan(raw), 0.0, raw), flags])
    mean, sd = x.mean(axis=0), x.std(axis=0)
    scale = np.where(sd > 0, sd, 1.0)
    fitted = LogisticRegression(C=LINEAR_C, max_iter=2000, class_weight="balanced").fit((x - mean) / scale, m.labels)
    coef = fitted.coef_[0].copy()
    n = len(features)
    for i, name in enumerate(features):
        if MONOTONE.get(name, 0) > 0:
            coef[i] = max(coef[i], 0.0)
    flag_coef = coef[n:] / scale[n:]
    intercept = float(fitted.intercept_[0]) - float(np.sum(coef[n:] * mean[n:] / scale[n:]))
    return LinearModel(
        features=tuple(features),
        mean=tuple(float(v) for v in mean[:n]),
        scale=tuple(float(v) for v in scale[:n]),
        coef=tuple(float(v) for v in coef[:n]),
        missing_coef=tuple(float(v) for v in flag_coef),
        intercept=intercept,
    )


ENSEMBLE_SEEDS: tuple[int, ...] = (1, 2, 3)
"""The shipped model is the mean of LightGBM models drawn with these seeds (``Ensemble``)."""


@dataclass
class Ensemble:
    """Models of the same features whose mean score ranks: saved as one file that
    ``tempr.providers.reranker.learned`` reads (its ``MEMBER_SEPARATOR`` between members)."""

    members: list[Any]
    linear: LinearModel | None = None
    weight: float = LINEAR_WEIGHT

    def predict(self, rows: Any) -> Any:
        """One query's scores (its candidates' rows): the trees' mean, blended with the linear member."""
        from tempr.providers.reranker.learned import mean_score

        trees = mean_score(self.members, rows)
        if self.linear is None:
            return trees
        return blend(trees, self.linear.decision(rows), self.weight)

    def save_model(self, path: str) -> None:
        from tempr.providers.reranker.learned import linear_section, member_text

        text = member_text(m.model_to_string() for m in self.members)
        if self.linear is not None:
            text += linear_section(self.linear, self.weight)
        Path(path).write_text(text, encoding="utf-8")


def fit_one(samples: Sequence[Sample], features: Sequence[str], rounds: int, seed: int) -> Any:
    """One LightGBM LambdaRank model, ``seed`` replacing ``PARAMS``' (bagging and feature sampling),
    trained on the samples with their unnamed and tokenless copies."""
    import lightgbm
    import numpy as np

    m = matrix(with_tokenless_copies(with_unnamed_copies(samples)), features)
    data = lightgbm.Dataset(
        np.asarray(m.rows, dtype=np.float64), label=m.labels, group=m.groups, feature_name=list(features)
    )
    monotone = [MONOTONE.get(f, 0) for f in features]
    return lightgbm.train({**PARAMS, "seed": seed, "monotone_constraints": monotone}, data, num_boost_round=rounds)


def fit(
    samples: Sequence[Sample], features: Sequence[str] = USED_FEATURES, rounds: int = ROUNDS, seed: int | None = None
) -> Ensemble:
    """The shipped configuration: the mean of ``len(ENSEMBLE_SEEDS)`` models, blended with a linear
    member (``fit_linear``, ``LINEAR_WEIGHT``; it has no random draw). ``seed`` draws
    another ensemble of the same configuration (members seeded ``10 * seed + ENSEMBLE_SEEDS``),
    for the spread over draws that ``tempr ranker train --cv-seeds`` reports."""
    seeds = ENSEMBLE_SEEDS if seed is None else tuple(10 * seed + s for s in ENSEMBLE_SEEDS)
    linear = fit_linear(samples, features) if LINEAR_WEIGHT else None
    return Ensemble([fit_one(samples, features, rounds, s) for s in seeds], linear, LINEAR_WEIGHT)


def ranking(
    sample: Sample, score: Callable[[list[list[float]]], Sequence[float]], features: Sequence[str]
) -> list[list[str]]:
    """The candidates' dia_ids, best first, by ``score`` (ties keep fusion order)."""
    if not sample.candidates:
        return []
    scores = score(sample_rows(sample, features))
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return [sample.dia_ids[i] for i in order]


def loco(
    samples: Sequence[Sample], features: Sequence[str] = USED_FEATURES, rounds: int = ROUNDS, seed: int | None = None
) -> dict[str, list[list[list[str]]]]:
    """Leave one conversation out: each conversation's rankings from a model trained on the others."""
    out: dict[str, list[list[list[str]]]] = {}
    for held in sorted({s.conversation for s in samples}):
        model = fit([s for s in samples if s.conversation != held], features, rounds, seed)
        predict = _predictor(model)
        out[held] = [ranking(s, predict, features) for s in samples if s.conversation == held]
    return out


def _predictor(model: Any) -> Callable[[list[list[float]]], Sequence[float]]:
    import numpy as np

    return lambda rows: [float(x) for x in model.predict(np.asarray(rows, dtype=np.float64))]


def recall_table(samples: Sequence[Sample], rankings: Sequence[list[list[str]]]) -> dict[int, float]:
    return {k: mean([recall_at_k(r, s.evidence, k) for s, r in zip(samples, rankings, strict=True)]) * 100 for k in KS}


def save(model: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save_model(str(path))
