"""Stage 2 of recall: the four strategies, each a ranked list with its own score.

Each function runs on its own connection so the four can run on different
workers (the Celery chord) or threads (in-process) at the same time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from config.errors import public_message
from tempr.core import rrf_fuse, spread_across_buckets
from tempr.core.types import Hit, Strategy, StrategyResult
from tempr.recall.context import RecallContext
from tempr.recall.plan import QueryPlan
from tempr.recall.seeds import SHARED
from tempr.store import recall_repo
from tempr.temporal import bucket_count

SEED_WAIT_S = 0.4
"""How long the graph waits for a running strategy's seeds before it runs the query itself
(below the job Redis client's 0.5 s socket timeout)."""


def semantic(plan: QueryPlan, ctx: RecallContext) -> tuple[list[Hit], dict[str, Any]]:
    with _posting_seeds("semantic", plan, ctx) as post:
        with ctx.engine.begin() as conn:
            hits = recall_repo.semantic_search(conn, plan.embedding, plan.filters(), plan.budget)
        post(hits)
    return hits, {}


def keyword(plan: QueryPlan, ctx: RecallContext) -> tuple[list[Hit], dict[str, Any]]:
    s = ctx.settings
    with _posting_seeds("keyword", plan, ctx) as post:
        with ctx.engine.begin() as conn:
            hits, detail = recall_repo.bm25_top(
                conn, plan.request.query, plan.filters(), plan.budget, k1=s.bm25_k1, b=s.bm25_b
            )
        post(hits)
    return hits, {"bm25": detail}


@contextmanager
def _posting_seeds(strategy: str, plan: QueryPlan, ctx: RecallContext) -> Iterator[Callable[[list[Hit]], None]]:
    """Mark ``strategy`` started on the recall's seed board and post its first hits for the graph
    walk (``tempr.recall.seeds``); ``None`` when the search fails, so the graph need not wait.
    Only when this list is at least as long as the graph's seeds (``budget`` ≥ the seed count)."""
    board, n = ctx.seeds, ctx.settings.graph_seed_count
    if board is None or plan.budget < n:
        yield lambda hits: None
        return
    board.started(strategy)
    posted = False

    def post(hits: list[Hit]) -> None:
        nonlocal posted
        board.post(strategy, hits[:n])
        posted = True

    try:
        yield post
    finally:
        if not posted:
            board.post(strategy, None)


def _keyword_seeds(plan: QueryPlan, ctx: RecallContext) -> list[Hit]:
    s = ctx.settings
    with ctx.engine.begin() as conn:
        return recall_repo.keyword_search(
            conn, plan.request.query, plan.filters(), s.graph_seed_count, k1=s.bm25_k1, b=s.bm25_b
        )


def graph(plan: QueryPlan, ctx: RecallContext) -> tuple[list[Hit], dict[str, Any]]:
    """Seeds are the top semantic and keyword hits; traversal depth follows the budget level.

    Each seed list comes from its strategy's own task when that one is running (the seed board,
    ``tempr.recall.seeds``), else from a query of the graph's own. Two such queries run at once,
    the keyword one on a second connection: in a large bank each costs about as much as the other
    (BENCHMARKS.md, "BM25 at scale").
    """
    s = ctx.settings
    filters = plan.filters()
    shared = ctx.seeds.running(SHARED) if ctx.seeds is not None and plan.budget >= s.graph_seed_count else set()
    source: dict[str, str] = {}
    pool = ThreadPoolExecutor(1, thread_name_prefix="graph-seeds")
    try:
        with ctx.engine.begin() as conn:
            keyword_seeds = pool.submit(_seeds, "keyword", shared, source, lambda: _keyword_seeds(plan, ctx), ctx)
            sem = _seeds(
                "semantic",
                shared,
                source,
                lambda: recall_repo.semantic_search(conn, plan.embedding, filters, s.graph_seed_count),
                ctx,
            )
            kw = keyword_seeds.result()
            # Seeds: the best of semantic and keyword together (RRF), not their union: in a small
            # bank the union is half the bank, and hub entities then make every node look connected.
            pair = [StrategyResult(Strategy.SEMANTIC, tuple(sem)), StrategyResult(Strategy.KEYWORD, tuple(kw))]
            seeds = [c.id for c in rrf_fuse(pair)][: s.graph_seed_count]
            reached, detail = recall_repo.graph_search(
                conn,
                seeds,
                filters,
                depth=plan.depth,
                budget=plan.budget,
                decay=s.graph_hop_decay,
                beam=s.graph_beam,
            )
    finally:
        # No waiting: when the strategy's soft time limit interrupts it, it must return now,
        # not after the keyword query (whose connection goes back to the pool when it ends).
        pool.shutdown(wait=False, cancel_futures=True)
    # Hop 0: the seeds themselves at full activation (3.0, the top of the graph scale), in seed
    # order, then what the walk reached. Without them the graph list would vote only for the
    # seeds' neighbours and, in RRF, outvote the very matches the walk started from.
    hits = [Hit(seed, 3.0) for seed in seeds] + [h for h in reached if h.id not in set(seeds)]
    return hits[: plan.budget], {"seeds": len(seeds), "seeds_from": source, "depth": plan.depth, **detail}


def _seeds(
    strategy: str, shared: set[str], source: dict[str, str], own: Callable[[], list[Hit]], ctx: RecallContext
) -> list[Hit]:
    """The seed list from ``strategy``'s own task when it has started (``tempr.recall.seeds``), else
    (not started, failed, or not posted within ``SEED_WAIT_S``) from the graph's own query."""
    if strategy in shared and ctx.seeds is not None:
        taken = ctx.seeds.take(strategy, SEED_WAIT_S)
        if taken is not None:
            source[strategy] = "shared"
            return taken
    source[strategy] = "own query"
    return own()


def temporal(plan: QueryPlan, ctx: RecallContext) -> tuple[list[Hit], dict[str, Any]]:
    """In-window memories chosen by relevance, then spread across the window's time buckets."""
    if (done := settled(Strategy.TEMPORAL, plan)) is not None:  # no window: nothing to search
        return list(done.hits), done.detail
    windows = plan.windows
    filters = plan.filters()
    per_window: list[list[Hit]] = []
    with ctx.engine.begin() as conn:
        for window in windows:
            pool = recall_repo.temporal_candidates(conn, plan.embedding, window, filters, plan.budget * 2)
            similarity = {i: sim for i, _, sim in pool}
            # Buckets follow the window's granularity (a year: 12 months, a week: 7 days...).
            order = spread_across_buckets(pool, window, buckets=bucket_count(window), limit=plan.budget)
            per_window.append([Hit(i, similarity[i]) for i in order])
    merged = _interleave(per_window, plan.budget)
    return merged, {"windows": len(windows), "in_window": sum(len(w) for w in per_window)}


def _interleave(lists: list[list[Hit]], limit: int) -> list[Hit]:
    seen: set[str] = set()
    out: list[Hit] = []
    for position in range(max((len(x) for x in lists), default=0)):
        for hits in lists:
            if position < len(hits) and hits[position].id not in seen and len(out) < limit:
                seen.add(hits[position].id)
                out.append(hits[position])
    return out


RUNNERS: dict[Strategy, Callable[[QueryPlan, RecallContext], tuple[list[Hit], dict[str, Any]]]] = {
    Strategy.SEMANTIC: semantic,
    Strategy.KEYWORD: keyword,
    Strategy.GRAPH: graph,
    Strategy.TEMPORAL: temporal,
}


def run_strategy(strategy: Strategy | str, plan: QueryPlan, ctx: RecallContext) -> StrategyResult:
    """Run one strategy. Errors propagate: the caller decides whether that degrades or fails."""
    name = Strategy(strategy)
    started = time.perf_counter()
    hits, detail = RUNNERS[name](plan, ctx)
    elapsed = (time.perf_counter() - started) * 1000
    return StrategyResult(name, tuple(hits), None, round(elapsed, 2), detail)


NO_WINDOW = {"skipped": "no time reference in the query"}


def settled(strategy: Strategy | str, plan: QueryPlan) -> StrategyResult | None:
    """The strategy's result when the plan alone decides it, else None (it must run).

    The temporal strategy has nothing to search without a time window in the query (most
    queries): the chord answers it where it is built instead of spending a queue hop, a worker
    slot and a result message on an empty list (``tasks.recall.build_chord``). The result is the
    one ``temporal`` returns, so the answer and its trace are the same either way."""
    if Strategy(strategy) is Strategy.TEMPORAL and not plan.windows:
        return StrategyResult(Strategy.TEMPORAL, (), None, 0.0, dict(NO_WINDOW))
    return None


def all_failed(results: Sequence[StrategyResult]) -> str | None:
    """The ``AllStrategiesFailed`` message when no strategy with something to search answered
    (each failed, or was settled empty by the plan: a query without a time window leaves the
    temporal strategy nothing to do), else None."""
    if not any(r.error for r in results) or any(r.error is None and "skipped" not in r.detail for r in results):
        return None
    return "; ".join(f"{r.strategy.value}: {r.error or 'not run (' + r.detail['skipped'] + ')'}" for r in results)


def degraded(strategy: Strategy | str, error: BaseException | str, elapsed_ms: float = 0.0) -> StrategyResult:
    message = error if isinstance(error, str) else public_message(error)
    return StrategyResult(Strategy(strategy), (), message, round(elapsed_ms, 2), {})
