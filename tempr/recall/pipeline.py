"""The recall entry point: one plain function over a request, independent of Celery.

    analyse -> 4 strategies -> fuse -> rerank -> finish

The Celery chord (``tasks/recall.py``) runs exactly these stages on
different queues; here they run in one process, the strategies on threads.
A strategy that fails degrades the answer (listed in ``degraded``); all four
failing is an error.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from config.errors import AllStrategiesFailed
from tempr.bank_ids import check_bank_id
from tempr.core.timeutil import ms_since
from tempr.core.types import ALL_STRATEGIES, StrategyResult
from tempr.recall.context import RecallContext
from tempr.recall.finish import finish
from tempr.recall.models import RecallRequest, RecallResponse
from tempr.recall.plan import QueryPlan, analyse
from tempr.recall.scoring import fuse, rerank
from tempr.recall.seeds import LocalSeedBoard
from tempr.recall.strategies import all_failed, degraded, run_strategy
from tempr.store import banks_repo


def run_strategies(plan: QueryPlan, ctx: RecallContext) -> list[StrategyResult]:
    ctx = replace(ctx, seeds=LocalSeedBoard())  # this recall's: the graph takes the others' seeds

    def one(strategy: str) -> StrategyResult:
        started = time.perf_counter()
        try:
            return run_strategy(strategy, plan, ctx)
        except Exception as exc:  # noqa: BLE001 - any strategy failure degrades, never fails, the recall
            return degraded(strategy, exc, ms_since(started))

    with ThreadPoolExecutor(max_workers=len(ALL_STRATEGIES), thread_name_prefix="strategy") as pool:
        return list(pool.map(one, ALL_STRATEGIES))


def fuse_rerank_finish(
    plan: QueryPlan, results: list[StrategyResult], ctx: RecallContext, timings_ms: dict[str, float]
) -> RecallResponse:
    """Everything after the strategies: shared by the in-process and the chord paths' tests."""
    if (failure := all_failed(results)) is not None:
        raise AllStrategiesFailed(failure)
    started = time.perf_counter()
    candidates = fuse(plan, results, ctx.settings)
    timings_ms["fuse"] = ms_since(started)
    outcome = rerank(plan, candidates, ctx)
    timings_ms["rerank"] = outcome.elapsed_ms
    return finish(plan, results, candidates, outcome, ctx, timings_ms)


def recall(bank_id: str, request: RecallRequest, ctx: RecallContext) -> RecallResponse:
    started = time.perf_counter()
    check_bank_id(bank_id)
    with ctx.engine.connect() as conn:  # an unknown bank is NotFound, an empty one answers []
        version, space = banks_repo.bank_state(conn, bank_id)
    plan = analyse(bank_id, request, ctx.for_space(space), version=version)
    t_strat = time.perf_counter()
    results = run_strategies(plan, ctx)
    timings = {f"strategy.{r.strategy.value}": r.elapsed_ms for r in results}
    timings["strategies"] = ms_since(t_strat)
    response = fuse_rerank_finish(plan, results, ctx, timings)
    response.timings_ms["total"] = ms_since(started)
    return response
