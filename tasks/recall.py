"""The recall start task (queue ``fuse``): cache lookup, query analysis, then the chord.

``tempr.recall.start(bank_id, request, deadline=None, enqueued_at=None, tenant=None, api_key=None)``
— the task id IS the job id. With authentication on, the caller's ``api_key`` (or the ``tenant`` a
trusted enqueuer such as the gateway vouches for) must hold the recall role over the bank, else the
job fails with AuthError/Forbidden before anything is read; the job record carries the tenant.
A cache hit returns the answer at once. A miss analyses the query once (embedding, time windows,
budget) and then *replaces itself* with::

    chord(group(tempr.retrieve.strategy x 4) on `retrieve`, tempr.fuse.collect on `fuse`)

(x 3 when the query has no time window: the temporal strategy's empty answer rides in the body.)

``Task.replace`` freezes the chord's body with this task's id, so ``AsyncResult(job_id).get()``
resolves with the final response whatever path the job took (hit, fallback, cross-encoder).
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from celery import Celery, chord, group

from config.settings import Settings
from tasks.common import RecallStep, drop_if_stale, job_ends, job_store
from tasks.messages import FuseState, StrategyCall, StrategyReport
from tempr.auth import task_principal
from tempr.bank_ids import check_bank_id
from tempr.core.timeutil import ms, ms_since
from tempr.core.types import ALL_STRATEGIES
from tempr.jobs.cache import cache_key
from tempr.jobs.envelope import JobEnvelope
from tempr.jobs.outcome import check_deadline, succeed_job
from tempr.jobs.webhooks import check_callback_url
from tempr.recall.models import RecallResponse, parse_request
from tempr.recall.plan import QueryPlan, analyse
from tempr.recall.strategies import settled as settled_result
from tempr.store import banks_repo
from workers.app import app
from workers.resources import get_resources, recall_context

_ARG_NAMES = ("bank_id", "request", "deadline", "enqueued_at")


class StartStep(RecallStep):
    def envelope(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> JobEnvelope | None:
        given = {**dict(zip(_ARG_NAMES, args, strict=False)), **kwargs}
        raw = given.get("request")
        request: dict[str, Any] = raw if isinstance(raw, dict) else {}
        return JobEnvelope(
            job_id=self.request.id,
            bank_id=given.get("bank_id"),
            deadline=float(given.get("deadline") or time.time()),
            enqueued_at=float(given.get("enqueued_at") or time.time()),
            callback_url=request.get("callback_url"),
        )


@app.task(name="tempr.recall.start", bind=True, base=StartStep)
def start(
    self: StartStep,
    bank_id: str,
    request: dict[str, Any],
    deadline: float | None = None,
    enqueued_at: float | None = None,
    tenant: str | None = None,
    api_key: str | None = None,
) -> dict[str, Any]:
    began = time.time()
    res = get_resources()
    settings = res.settings
    req = parse_request(request)  # the edge: the request is validated here, once per recall
    deadline = float(deadline or began + (req.timeout_s or settings.recall_timeout_s))
    env = JobEnvelope(
        job_id=self.request.id,
        bank_id=bank_id,
        deadline=deadline,
        enqueued_at=float(enqueued_at or began),
        callback_url=req.callback_url,
    )
    check_bank_id(bank_id)
    who = task_principal(res.engine, settings, api_key=api_key, tenant=tenant, role="recall", bank_id=bank_id)
    job_store().mark_running(
        env.job_id, bank_id=bank_id, deadline=deadline, callback_url=req.callback_url, tenant=who.tenant or ""
    )
    timings = {"queue.start": ms(began - env.enqueued_at)}
    if req.callback_url:
        check_callback_url(
            req.callback_url,
            allow_link_local=settings.webhook_allow_link_local,
            allow_networks=settings.webhook_allow_networks,
        )
    drop_if_stale(env, "start")

    t_cache = time.perf_counter()
    with res.engine.connect() as conn:
        version, space = banks_repo.bank_state(conn, bank_id)  # NotFound ends the job: "bank 'x' does not exist"
    env.cache_key = cache_key(bank_id, version, req, settings)
    ends = job_ends()
    hit = ends.cache.get(env.cache_key)
    timings["cache_lookup"] = ms_since(t_cache)
    if hit is not None:
        response = RecallResponse.model_validate({**hit, "timings_ms": timings})
        return succeed_job(ends, env, response, cached=True)

    ctx = recall_context(embedder=True, space=space)  # the query in the bank's space
    plan = analyse(bank_id, req, ctx, version=version)
    check_deadline(env, "retrieval")
    raise self.replace(build_chord(env, plan, timings))


def build_chord(
    env: JobEnvelope,
    plan: QueryPlan,
    timings: dict[str, float],
    settings: Settings | None = None,
    celery_app: Celery | None = None,
) -> Any:
    """A strategy signature per strategy the plan leaves to run (expiring at the deadline,
    soft-limited), and the fusion callback carrying the ones it settled (no time window: no
    temporal task). The start task replaces itself with it; the gateway sends it itself on a
    cache miss (``tempr.api.miss``), with the job id as the callback's task id."""
    settings = settings or get_resources().settings
    sender = celery_app or app
    now = time.time()
    settled = {s: r for s in ALL_STRATEGIES if (r := settled_result(s, plan)) is not None}
    soft = max(0.05, min(settings.strategy_timeout_s, env.deadline - now))
    expires = dt.datetime.fromtimestamp(env.deadline, tz=dt.UTC)
    # Only the learned ranker reads the focus vector and the token vectors: the four strategy
    # messages go without them.
    ranker_only = {"focus": None, "tokens": None, "focus_tokens": None}
    strategy_plan = plan if all(getattr(plan, k) is None for k in ranker_only) else plan.model_copy(update=ranker_only)
    header = group(
        sender.signature(
            "tempr.retrieve.strategy",
            args=(StrategyCall(strategy=s.value, plan=strategy_plan, deadline=env.deadline, sent_at=now).send(),),
            expires=expires,
            soft_time_limit=soft,
            time_limit=soft + 5,
            # The report reaches the callback through the chord's own list; a stored copy (and
            # its STARTED state) would be two Redis writes per strategy that nothing reads.
            ignore_result=True,
        )
        for s in ALL_STRATEGIES
        if s not in settled
    )
    # The strategies need the embedding, and so does the learned ranker (cosine of every candidate);
    # the seed profile's steps after the strategies do not, so its payloads drop it.
    body_plan = plan if settings.recall_profile != "seed" else plan.model_copy(update={"embedding": [], **ranker_only})
    reports = [StrategyReport.of(r, finished_at=now) for r in settled.values()]
    state = FuseState(env=env, plan=body_plan, timings=timings, sent_at=now, settled=reports)
    return chord(header, sender.signature("tempr.fuse.collect", args=(state.send(),)), app=sender)
