"""The chord's callback and the last step (queue ``fuse``).

``tempr.fuse.collect(results, state)`` receives the four strategy dicts (matched by their
``strategy`` name, never by position), fuses them with RRF and cuts to the reranker's candidates.
With no cross-encoder configured it applies the RRF-derived fallback right here and finishes: no
hop to a model, the exact post-strategy path of the in-process ``tempr.recall.pipeline.complete``.
With one, it replaces itself with ``chain(tempr.rerank.score, tempr.fuse.finish)``; the chain's
last task inherits the job id.

``tempr.fuse.finish(state)`` applies the boosts, packs tokens and ends the job (cache, record,
webhook). Every step refuses to work past the job's deadline.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from celery import chain

from config.errors import AllStrategiesFailed
from tasks.common import RecallStep, check_deadline, context, enter_step, finish_job, ms
from tempr.core.types import ALL_STRATEGIES, FusedCandidate, StrategyResult
from tempr.recall.finish import finish as finish_response
from tempr.recall.pipeline import complete
from tempr.recall.plan import QueryPlan
from tempr.recall.scoring import RerankOutcome, fuse
from tempr.recall.strategies import degraded
from workers.app import app
from workers.resources import get_resources


def ordered_results(raw: list[dict[str, Any]]) -> list[StrategyResult]:
    """One result per strategy, in the canonical order; a missing one counts as degraded."""
    by_name = {r.get("strategy"): r for r in raw if isinstance(r, dict)}
    return [
        StrategyResult.from_dict(by_name[s.value])
        if s.value in by_name
        else degraded(s, "no result came back from the strategy task")
        for s in ALL_STRATEGIES
    ]


def strategy_timings(raw: list[dict[str, Any]], dispatched_at: float) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in raw:
        name = r.get("strategy")
        out[f"queue.strategy.{name}"] = float(r.get("queue_ms", 0.0))
        out[f"strategy.{name}"] = float(r.get("elapsed_ms", 0.0))
    last = max((float(r.get("finished_at", dispatched_at)) for r in raw), default=dispatched_at)
    out["strategies"] = ms(last - dispatched_at)
    out["_last_finished_at"] = last
    return out


@app.task(name="tempr.fuse.collect", bind=True, base=RecallStep)
def collect(self: RecallStep, results: list[dict[str, Any]], state: dict[str, Any]) -> dict[str, Any]:
    began = time.time()
    env = state["env"]
    timings = {**state["timings"], **strategy_timings(results, float(state["dispatched_at"]))}
    timings["queue.fuse"] = ms(began - timings.pop("_last_finished_at"))
    check_deadline(env, "fusion")
    plan = QueryPlan.from_dict(state["plan"])
    ordered = ordered_results(results)
    settings = get_resources().settings
    if not settings.reranker_model:
        return finish_job(env, complete(plan, ordered, context(), timings))
    if all(r.error for r in ordered):
        raise AllStrategiesFailed("; ".join(f"{r.strategy.value}: {r.error}" for r in ordered))
    started = time.perf_counter()
    candidates = fuse(plan, ordered, settings)
    timings["fuse"] = ms(time.perf_counter() - started)
    nxt = {
        **state,
        "results": [r.to_dict() for r in ordered],
        "candidates": [asdict(c) for c in candidates],
        "timings": timings,
        "sent_at": time.time(),
    }
    raise self.replace(chain(app.signature("tempr.rerank.score", args=(nxt,)), app.signature("tempr.fuse.finish")))


@app.task(name="tempr.fuse.finish", bind=True, base=RecallStep)
def finish(self: RecallStep, state: dict[str, Any]) -> dict[str, Any]:
    env, timings, plan = enter_step(state, "finish")
    results = [StrategyResult.from_dict(r) for r in state["results"]]
    candidates = [FusedCandidate(**c) for c in state["candidates"]]
    outcome = RerankOutcome.from_dict(state["outcome"])
    return finish_job(env, finish_response(plan, results, candidates, outcome, context(), timings))
