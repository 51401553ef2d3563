"""Stage 5 of recall: strategy boosts after reranking, the three boosts, token packing, response."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from tempr.core import (
    DEFAULT_ALPHAS,
    combined_score,
    pack,
    packing_pool_size,
    proof_signal,
    recency_signal,
    temporal_proximity_signal,
)
from tempr.core.rank_boost import promote
from tempr.core.rank_features import FEATURE_NAMES
from tempr.core.timeutil import ms_since
from tempr.core.types import FusedCandidate, StrategyResult
from tempr.recall.context import RecallContext
from tempr.recall.models import ChunkData, EntityState, RecallResponse, RecallResult, RecallScores
from tempr.recall.plan import QueryPlan
from tempr.recall.scoring import RRF_FALLBACK, RerankOutcome, boost_divisors, occurrence
from tempr.store import recall_repo


def finish(
    plan: QueryPlan,
    results: Sequence[StrategyResult],
    candidates: Sequence[FusedCandidate],
    outcome: RerankOutcome,
    ctx: RecallContext,
    timings_ms: dict[str, float] | None = None,
) -> RecallResponse:
    started = time.perf_counter()
    req = plan.request
    ce = outcome.scores
    if plan.boosts:
        ce = promote(ce, boost_divisors(plan, candidates))
    units = outcome.units  # the learned ranker's rows (with entities) when it ran in this process
    if not units:
        with ctx.engine.connect() as conn:
            units = recall_repo.fetch_units(conn, [c.id for c in candidates], with_entities=req.include.wants_entities)
    alphas = DEFAULT_ALPHAS
    if outcome.learned:  # recency, proximity and proof are the ranker's features, not boosts on top
        alphas = (0.0, 0.0, 0.0)
    elif outcome.reranker == RRF_FALLBACK and not ctx.settings.recall_fallback_recency:
        alphas = (0.0, *DEFAULT_ALPHAS[1:])
    scored = _score(plan, candidates, ce, units, alphas)
    pool = scored[: packing_pool_size(plan.budget)]
    packed = pack(pool, max_tokens=req.max_tokens, count_tokens=lambda s: ctx.tokens(units[s["id"]]["text"]))
    by_id = {c.id: c for c in candidates}
    results_out = [_result(units[s["id"]], s, by_id[s["id"]], outcome, req.include.wants_entities) for s in packed.kept]
    timings = {**plan.timings_ms, **(timings_ms or {})}
    chunks = _chunks(plan, [units[s["id"]] for s in packed.kept], ctx) if req.include.chunks is not None else None
    timings["finish"] = ms_since(started)
    return RecallResponse(
        results=results_out,
        entities=_entities(units, packed.kept, req.include.entity_tokens, ctx) if req.include.wants_entities else None,
        chunks=chunks,
        trace=_trace(plan, results, candidates, outcome, scored, packed, timings) if req.trace else None,
        bank_id=plan.bank_id,
        budget=plan.budget,
        reranker=outcome.reranker,
        degraded=[r.strategy.value for r in results if r.error] + (["rerank"] if outcome.error else []),
        timings_ms=timings,
    )


def _score(
    plan: QueryPlan,
    candidates: Sequence[FusedCandidate],
    ce: dict[str, float],
    units: dict[str, dict[str, Any]],
    alphas: tuple[float, float, float],
) -> list[dict[str, Any]]:
    if not any(alphas) and not plan.request.trace:
        return _ranked(candidates, ce, units)
    now, windows = plan.now, plan.windows
    scored: list[dict[str, Any]] = []
    for order, c in enumerate(candidates):
        unit = units.get(c.id)
        if unit is None:  # deleted between retrieval and now
            continue
        when = occurrence(unit)
        temporal = max((temporal_proximity_signal(when, w) for w in windows), default=0.5)
        final, parts = combined_score(
            ce.get(c.id, 0.0),
            recency=recency_signal(when, now),
            temporal=temporal,
            proof=proof_signal(unit["proof_count"]),
            alphas=alphas,
        )
        scored.append({"id": c.id, "final": final, "order": order, "components": parts})
    scored.sort(key=lambda s: (-s["final"], s["order"]))
    return scored


def _ranked(
    candidates: Sequence[FusedCandidate], ce: dict[str, float], units: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """``_score`` with every boost off and no trace to show: the reranker's score is the final one.

    The learned ranker's case (recency, proximity and proof are its features): ``combined_score``
    would multiply each score by three boosts of 1.0, after computing the signals nobody reads
    (finish took 1-4 ms less CPU per recall without them: ``python -m bench.answer_cost``)."""
    scored: list[dict[str, Any]] = []
    for order, c in enumerate(candidates):
        if c.id not in units:  # deleted between retrieval and now
            continue
        final = ce.get(c.id, 0.0)
        if not 0.0 <= final <= 1.0:  # as combined_score: an upstream normalisation bug, not clamped
            raise ValueError(f"ce must be in [0, 1], got {final}")
        scored.append({"id": c.id, "final": final, "order": order})
    scored.sort(key=lambda s: (-s["final"], s["order"]))
    return scored


def _iso(value: datetime | None) -> str | None:
    return _iso_at(value, value.utcoffset()) if value is not None else None


@lru_cache(maxsize=65536)
def _iso_at(value: datetime, offset: timedelta | None) -> str:
    """``isoformat``, memoised: memories share dates, and three isoformats a result were a third of
    finish (2.5 us each). Keyed with the offset too: an equal instant at another offset prints otherwise."""
    return value.isoformat()


def _result(
    unit: dict[str, Any], s: dict[str, Any], c: FusedCandidate, outcome: RerankOutcome, with_entities: bool
) -> RecallResult:
    return RecallResult(
        id=unit["id"],
        fact_id=unit["fact_id"],
        text=unit["text"],
        type=unit["type"],
        entities=unit.get("entities") if with_entities else None,
        context=unit.get("context"),
        occurred_start=_iso(unit.get("occurred_start")),
        occurred_end=_iso(unit.get("occurred_end")),
        mentioned_at=_iso(unit.get("mentioned_at")),
        document_id=unit.get("document_id"),
        metadata=unit.get("metadata") or {},
        chunk_id=unit.get("chunk_id"),
        tags=unit.get("tags") or [],
        scores=RecallScores(
            final=round(s["final"], 6),
            reranker=None if outcome.reranker == RRF_FALLBACK else outcome.scores.get(c.id),
            semantic=c.scores.get("semantic"),
            keyword=c.scores.get("keyword"),
            graph=c.scores.get("graph"),
            temporal=c.scores.get("temporal"),
        ),
    )


def _entities(
    units: dict[str, dict[str, Any]], kept: Sequence[dict[str, Any]], max_tokens: int, ctx: RecallContext
) -> dict[str, EntityState]:
    """The returned memories' entities in result order, until their names fill ``max_tokens``.

    An entity is keyed and identified by its canonical name (unique per bank), as the reference's
    response is; tempr keeps no observations per entity, so the names are what the budget counts."""
    out: dict[str, EntityState] = {}
    remaining = max_tokens
    for s in kept:
        for name in units[s["id"]].get("entities") or []:
            if name in out:
                continue
            cost = ctx.tokens(name)
            if cost > remaining:
                return out
            remaining -= cost
            out[name] = EntityState(entity_id=name, canonical_name=name)
    return out


def _chunks(plan: QueryPlan, kept_units: Sequence[dict[str, Any]], ctx: RecallContext) -> dict[str, ChunkData]:
    """Source chunks of the returned memories, in result order, under their own token budget."""
    req = plan.request
    assert req.include.chunks is not None
    ids = list(dict.fromkeys(u["chunk_id"] for u in kept_units if u.get("chunk_id")))
    with ctx.engine.connect() as conn:
        found = recall_repo.fetch_chunks(conn, plan.bank_id, ids)
    remaining, out = req.include.chunks.max_tokens, {}
    for cid in ids:
        chunk = found.get(cid)
        if chunk is None or remaining <= 0:
            continue
        tokens = ctx.tokens(chunk["text"])
        if tokens <= remaining:
            out[cid] = ChunkData(id=cid, text=chunk["text"], document_id=chunk.get("document_id"))
            remaining -= tokens
        else:  # the last chunk that reaches the budget is cut to fit, and says so
            text = _truncate(chunk["text"], remaining, ctx)
            out[cid] = ChunkData(id=cid, text=text, document_id=chunk.get("document_id"), truncated=True)
            remaining = 0
    return out


def _truncate(text: str, tokens: int, ctx: RecallContext) -> str:
    words, out = text.split(), list[str]()
    for word in words:
        if ctx.tokens(" ".join([*out, word])) > tokens:
            break
        out.append(word)
    return " ".join(out)


def _trace(
    plan: QueryPlan,
    results: Sequence[StrategyResult],
    candidates: Sequence[FusedCandidate],
    outcome: RerankOutcome,
    scored: list[dict[str, Any]],
    packed: Any,
    timings: dict[str, float],
) -> dict[str, Any]:
    return {
        "query": plan.request.query,
        "budget": plan.budget,
        "depth": plan.depth,
        "now": plan.now.isoformat(),
        "temporal": plan.temporal_trace,
        "strategy_boosts": plan.boosts,
        "strategies": {
            r.strategy.value: {
                "hits": [[h.id, h.score] for h in r.hits],
                "error": r.error,
                "elapsed_ms": r.elapsed_ms,
                "detail": r.detail,
            }
            for r in results
        },
        "fusion": [{"id": c.id, "rrf": c.rrf_score, "ranks": c.ranks} for c in candidates],
        "rerank": {
            "reranker": outcome.reranker,
            "scores": outcome.scores,
            "raw": outcome.raw,
            "repeats": outcome.repeats,
            **({"feature_names": list(FEATURE_NAMES), "features": outcome.features} if outcome.features else {}),
        },
        "boosts": [{"id": s["id"], **s["components"]} for s in scored],
        "packing": [
            {
                "id": scored[d.index]["id"],
                "tokens": d.tokens,
                "outcome": d.outcome,
                "remaining_before": d.remaining_before,
            }
            for d in packed.decisions
        ],
        "timings_ms": timings,
    }
