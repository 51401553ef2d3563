"""The chord's callback and the last step (queue ``fuse``).

``tempr.fuse.collect(results, state)`` receives the header's ``StrategyReport`` and the ones the
start task settled without a task (matched by their ``strategy`` name, never by position), fuses
them with RRF and cuts to the reranker's candidates.
With no cross-encoder configured it reranks (the learned ranker of the ``default`` profile, or the
``seed`` profile's RRF-derived fallback: both CPU-cheap, a few ms) and finishes right here: no more
hops, the exact post-strategy path of the in-process ``tempr.recall.pipeline.fuse_rerank_finish``
(two queue hops cost ~25 ms on a small machine, more than the work they carried). With a
cross-encoder (a model that wants its own, GPU, pool) it replaces itself with
``chain(tempr.rerank.score, tempr.fuse.finish)``; the chain's last task inherits the job id.

``tempr.fuse.finish(state)`` applies the boosts, packs tokens and ends the job (cache, record,
webhook). Every step refuses to work past the job's deadline. The messages are typed
(``tasks/messages.py``).
"""

from __future__ import annotations

import time
from typing import Any

from celery import chain

from config.errors import AllStrategiesFailed
from tasks.common import RecallStep, enter_step, job_ends
from tasks.messages import FinishState, FuseState, RerankState, StrategyReport
from tempr.core.timeutil import ms, ms_since
from tempr.core.types import ALL_STRATEGIES, StrategyResult
from tempr.jobs.outcome import check_deadline, succeed_job
from tempr.recall.finish import finish as finish_response
from tempr.recall.pipeline import fuse_rerank_finish
from tempr.recall.scoring import fuse
from tempr.recall.strategies import all_failed, degraded
from workers.app import app
from workers.resources import get_resources, recall_context


def ordered_reports(reports: list[StrategyReport]) -> list[StrategyReport]:
    """One report per strategy, in the canonical order; a missing one counts as degraded."""
    by_name = {r.strategy: r for r in reports}
    return [
        by_name.get(s) or StrategyReport.of(degraded(s, "no result came back from the strategy task"))
        for s in ALL_STRATEGIES
    ]


def strategy_timings(reports: list[StrategyReport], sent_at: float) -> tuple[dict[str, float], float]:
    """Each strategy's queue wait and run time, the header's span, and when its last report came."""
    out: dict[str, float] = {}
    for r in reports:
        out[f"queue.strategy.{r.strategy.value}"] = r.queue_ms
        out[f"strategy.{r.strategy.value}"] = r.elapsed_ms
    last = max((r.finished_at for r in reports), default=sent_at)
    out["strategies"] = ms(last - sent_at)
    return out, last


def _for_finish(report: StrategyReport, *, trace: bool) -> StrategyReport:
    """What the steps after fusion need of a strategy: its hits only for a trace, else its error."""
    return report if trace else report.model_copy(update={"hits": [], "detail": {}})


@app.task(name="tempr.fuse.collect", bind=True, base=RecallStep)
def collect(self: RecallStep, results: list[dict[str, Any]], state: dict[str, Any]) -> dict[str, Any]:
    """The chord's callback: ``StrategyReport`` ×3–4 and a ``FuseState`` in; answer or ``RerankState`` out."""
    began = time.time()
    msg = FuseState.receive(state)
    received = [StrategyReport.receive(r) for r in results if isinstance(r, dict)] + msg.settled
    spans, last_finished_at = strategy_timings(received, msg.sent_at)
    timings = {**msg.timings, **spans, "queue.fuse": ms(began - last_finished_at)}
    check_deadline(msg.env, "fusion")
    reports = ordered_reports(received)
    ordered = [r.result() for r in reports]
    settings = get_resources().settings
    if not settings.reranker_model:  # nothing for the rerank queue's model: finish here, no more hops
        return succeed_job(
            job_ends(), msg.env, fuse_rerank_finish(msg.plan, ordered, recall_context(embedder=False), timings)
        )
    if (failure := all_failed(ordered)) is not None:
        raise AllStrategiesFailed(failure)
    started = time.perf_counter()
    candidates = fuse(msg.plan, ordered, settings)
    timings["fuse"] = ms_since(started)
    trace = msg.plan.request.trace
    nxt = RerankState(
        env=msg.env,
        plan=msg.plan,
        timings=timings,
        sent_at=time.time(),
        candidates=candidates,
        strategies=[_for_finish(r, trace=trace) for r in reports],
    )
    raise self.replace(
        chain(app.signature("tempr.rerank.score", args=(nxt.send(),)), app.signature("tempr.fuse.finish"))
    )


@app.task(name="tempr.fuse.finish", bind=True, base=RecallStep)
def finish(self: RecallStep, state: dict[str, Any]) -> dict[str, Any]:
    """``FinishState`` in: boosts, packing, the answer; the job ends here."""
    msg = enter_step(state, FinishState, "finish")
    results: list[StrategyResult] = [r.result() for r in msg.strategies]
    response = finish_response(
        msg.plan, results, msg.candidates, msg.outcome, recall_context(embedder=False), msg.timings
    )
    return succeed_job(job_ends(), msg.env, response)
