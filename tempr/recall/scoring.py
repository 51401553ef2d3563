"""Stages 3 and 4 of recall: ``fuse`` (RRF of the strategies' lists, cut to the reranker's
candidate cap) and ``rerank`` (a cross-encoder score per candidate, or the RRF-derived fallback).

``fuse`` runs in the chord's callback (``tempr.fuse.collect``), ``rerank`` on the rerank queue
(``tempr.rerank.score``) or, with no model, right after fusion. Stage 5 (boosts, packing, the
response) is ``tempr.recall.finish``; ``boost_divisors`` and ``occurrence`` here are what it
reads. The maths lives in ``tempr.core``; this module only feeds it data from the store.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from config.errors import public_message
from config.settings import Settings
from tempr.core import (
    BOOST_DIVISORS,
    cut_candidates,
    normalise_scores,
    rrf_fallback_scores,
    rrf_fuse,
)
from tempr.core.rank_features import feature_array
from tempr.core.repeats import repeat_levels, step_down
from tempr.core.rerank_scores import sigmoid
from tempr.core.timeutil import ms_since
from tempr.core.types import FusedCandidate, StrategyResult
from tempr.recall.context import RecallContext
from tempr.recall.plan import QueryPlan
from tempr.recall.rank_inputs import gather
from tempr.store import recall_repo

RRF_FALLBACK = "rrf-fallback"
log = logging.getLogger(__name__)


@dataclass
class RerankOutcome:
    """Normalised [0, 1] score per candidate id, and which reranker produced them.

    ``raw`` (learned ranker): the model's own score, before repeats of a source chunk step down.
    ``features`` (learned ranker only): each candidate's feature row (``FEATURE_NAMES`` order,
    None for a missing value), for the trace. ``learned``: the score is already the final
    relevance, so the finish step applies no boosts on top.
    """

    scores: dict[str, float]
    reranker: str
    raw: dict[str, float] = field(default_factory=dict)
    elapsed_ms: float = 0.0
    features: dict[str, list[float | None]] = field(default_factory=dict)
    learned: bool = False
    repeats: dict[str, int] = field(default_factory=dict)
    """Learned ranker: the candidates that step down as repeats of a source chunk, and how many
    better-ranked memories of that chunk are above them (``tempr.core.repeats``)."""
    error: str | None = None
    """Why the cross-encoder gave no scores (it failed to load or to score): the candidates were
    ranked without it, and the answer lists ``rerank`` in ``degraded``."""
    units: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False, compare=False)
    """The candidates' stored rows as the ranker read them (with entities): finish reuses them when
    it runs in the same process. Never serialised: a finish on another queue fetches its own."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "scores": self.scores,
            "reranker": self.reranker,
            "raw": self.raw,
            "elapsed_ms": self.elapsed_ms,
            "features": self.features,
            "learned": self.learned,
            "repeats": self.repeats,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RerankOutcome:
        return cls(
            dict(data["scores"]),
            data["reranker"],
            dict(data.get("raw") or {}),
            data.get("elapsed_ms", 0.0),
            dict(data.get("features") or {}),
            bool(data.get("learned", False)),
            dict(data.get("repeats") or {}),
            data.get("error"),
        )


def fuse(plan: QueryPlan, results: Sequence[StrategyResult], settings: Settings) -> list[FusedCandidate]:
    """RRF (k = 60) with rank-space strategy boosts, cut to the reranker's candidate cap."""
    return cut_candidates(rrf_fuse(results, boosts=plan.boosts), settings.reranker_max_candidates)


def passage(unit: dict[str, Any]) -> str:
    """What the cross-encoder reads: the date and context give it what the bare fact lacks."""
    head = []
    if unit.get("event_date"):
        head.append(f"[Date: {unit['event_date']:%B %d, %Y}]")
    if unit.get("context"):
        head.append(f"{unit['context']}:")
    return " ".join([*head, unit["text"]])


def fallback_scores(candidates: Sequence[FusedCandidate]) -> RerankOutcome:
    """The seed's no-model fallback: scores spread evenly over [0.1, 1.0] by RRF rank."""
    scores = rrf_fallback_scores(len(candidates))
    return RerankOutcome({c.id: s for c, s in zip(candidates, scores, strict=True)}, RRF_FALLBACK)


def cross_encoder_raw(plan: QueryPlan, candidates: Sequence[FusedCandidate], ctx: RecallContext) -> dict[str, float]:
    """The cross-encoder's raw score per candidate still in the bank, in candidate order."""
    assert ctx.reranker is not None
    with ctx.engine.connect() as conn:
        units = recall_repo.fetch_units(conn, [c.id for c in candidates], with_entities=False)
    ids = [c.id for c in candidates if c.id in units]
    raw = ctx.reranker.score_pairs([(plan.request.query, passage(units[i])) for i in ids])
    return dict(zip(ids, raw, strict=True))


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """The features' matrix products on one OpenBLAS thread, whatever the process's default.

    Their float32 products (``token_match.columns``) round differently with the number of
    threads on some CPUs (an AMD EPYC here: the same product, other bits, with 1 and 2 threads),
    so a recall answered in-process (default threads) and one answered by a worker (one thread,
    ``workers.app``) gave the same ranking with scores apart in the 8th digit. One thread is also
    what the workers measured best for these small products. About 8 us a call. The controller,
    made on first use, holds the BLAS libraries loaded by then, numpy's among them (loaded with
    numpy); one loaded later (scipy's own, through scikit-learn) is not limited, and computes none
    of these products."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController()
    with _BLAS.limit(limits=1, user_api="blas"):
        yield


_BLAS: Any = None


def learned_scores(plan: QueryPlan, candidates: Sequence[FusedCandidate], ctx: RecallContext) -> RerankOutcome:
    """The learned ranker over each candidate's features (plus the cross-encoder's score if it reads it:
    missing, like any missing feature, when the cross-encoder fails)."""
    ranker = ctx.ranker
    assert ranker is not None
    ce, error = None, None
    if ctx.reranker is not None and ranker.uses_cross_encoder:
        ce, error = _try_cross_encoder(plan, candidates, ctx)
    query, cands, units = gather(plan, candidates, ctx, ce)
    with one_blas_thread():
        rows = feature_array(query, cands)
    raw = ranker.score_rows(rows)
    ids = [c.id for c in cands]
    # A second memory of an already better-ranked source chunk steps down (tempr.core.repeats).
    chunks = [units[i].get("chunk_id") for i in ids]
    penalty = ctx.settings.recall_repeat_penalty
    levels = repeat_levels(list(raw), chunks) if penalty > 0 else [0] * len(ids)
    ranked = step_down(list(raw), levels, penalty)
    repeats = {i: n for i, n in zip(ids, levels, strict=True) if n}
    name = ranker.name if ce is None else f"{ranker.name}+{ctx.reranker.name}"  # type: ignore[union-attr]
    return RerankOutcome(
        scores={i: sigmoid(r) for i, r in zip(ids, ranked, strict=True)},
        reranker=name,
        raw=dict(zip(ids, raw, strict=True)),
        features=_trace_rows(ids, rows.tolist()) if plan.request.trace else {},
        learned=True,
        repeats=repeats,
        error=error,
        units=units,
    )


def _try_cross_encoder(
    plan: QueryPlan, candidates: Sequence[FusedCandidate], ctx: RecallContext
) -> tuple[dict[str, float] | None, str | None]:
    """``cross_encoder_raw``, or (None, why) when the model fails: a recall ranks without it rather
    than failing (a model that cannot load, a GPU out of memory), as a failed strategy degrades it."""
    try:
        return cross_encoder_raw(plan, candidates, ctx), None
    except Exception as exc:  # noqa: BLE001 - any model failure degrades the recall, never fails it
        log.warning("cross-encoder failed; ranking without it: %s", public_message(exc))
        return None, public_message(exc)


def _trace_rows(ids: Sequence[str], rows: list[list[float]]) -> dict[str, list[float | None]]:
    """Each candidate's feature row for the trace (only built when asked: 300 x 34 roundings)."""
    return {i: [None if math.isnan(v) else round(v, 6) for v in row] for i, row in zip(ids, rows, strict=True)}


def uses_learned(ctx: RecallContext) -> bool:
    """The learned ranker ranks unless a cross-encoder is configured that its model does not read."""
    return ctx.ranker is not None and (ctx.reranker is None or ctx.ranker.uses_cross_encoder)


def rerank(plan: QueryPlan, candidates: Sequence[FusedCandidate], ctx: RecallContext) -> RerankOutcome:
    started = time.perf_counter()
    if candidates and uses_learned(ctx):
        outcome = learned_scores(plan, candidates, ctx)
    elif ctx.reranker is None or not candidates:
        outcome = fallback_scores(candidates)
    else:
        raw, error = _try_cross_encoder(plan, candidates, ctx)
        if raw is None:  # ranked as if no cross-encoder were configured
            alone = replace(ctx, reranker=None)
            outcome = learned_scores(plan, candidates, alone) if uses_learned(alone) else fallback_scores(candidates)
            outcome.error = error
        else:
            norm = normalise_scores(list(raw.values()), calibrated=ctx.reranker.calibrated)
            outcome = RerankOutcome(dict(zip(raw, norm, strict=True)), ctx.reranker.name, raw)
    outcome.elapsed_ms = ms_since(started)
    return outcome


def boost_divisors(plan: QueryPlan, candidates: Sequence[FusedCandidate]) -> dict[str, float]:
    """Per candidate, the largest divisor among the favoured strategies it came from."""
    out: dict[str, float] = {}
    for c in candidates:
        levels = [BOOST_DIVISORS[plan.boosts[s]] for s in c.ranks if s in plan.boosts]
        if levels:
            out[c.id] = max(levels)
    return out


def occurrence(unit: dict[str, Any]) -> datetime | None:
    return unit.get("event_date")
