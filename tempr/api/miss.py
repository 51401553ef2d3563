"""A cache miss started at the gateway: the start task's work, without its queue hop.

Through the start task a miss costs a queue hop (the task waits for an analyse process), a second
bank read and cache lookup (the gateway has just made both), and Celery's ``Task.replace``, whose
``Ignore`` Celery turns into two formatted tracebacks. Here the gateway, which already holds the
cache key and the bank's vector space from its lookup, analyses the query (embedding, time windows)
in its own process and sends the same chord ``tasks.recall.build_chord`` builds, with the job id as
the fusion callback's task id: ``AsyncResult(job_id)`` resolves with the answer exactly as after
``Task.replace``, and the job record, cache entry and answer are written by the same steps.

Only for the waiting route, and only for requests without a callback_url or an Idempotency-Key
(their webhook watchdog and job reuse live in ``tempr.client.recall_async``), with
``TEMPR_GATEWAY_ANALYSE`` on (the default). A query the analysis rejects (a time outside the
supported range) is a 422, and its job is recorded as failed, as through the start task.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from config.errors import RecallError
from tempr.api.errors import JobError
from tempr.client import RecallJob, enqueueing, job_request_hash
from tempr.jobs.cache import RecallCache
from tempr.jobs.envelope import JobEnvelope
from tempr.jobs.outcome import JobEnds, check_deadline, fail_job
from tempr.jobs.records import RUNNING
from tempr.recall.models import RecallRequest
from tempr.recall.plan import analyse

if TYPE_CHECKING:
    from tempr.api.gateway import CacheLookup, Gateway

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChordParts:
    """The worker side's pieces a gateway needs to start a chord, handed in by ``tempr.api.app``
    (the library does not import ``workers`` or ``tasks``): ``tasks.recall.build_chord``,
    ``workers.resources.recall_context`` and ``workers.result_waiters.sending_only``."""

    build_chord: Callable[..., Any]
    recall_context: Callable[..., Any]
    sending_only: Callable[[Any], AbstractContextManager[None]]


def start_miss(gw: Gateway, bank_id: str, request: RecallRequest, tenant: str | None, miss: CacheLookup) -> RecallJob:
    """Analyse the query here and send the strategy chord; the job handle to wait on.

    An analysis that fails ends the job here as the start task would have (record, log): a
    ``RecallError`` (the deadline passed) comes back as ``JobError`` naming the job (a 504 with its
    id), any other error as it is (a query outside the supported dates: 422; the database down: 503)."""
    parts = gw.chord_parts
    assert parts is not None  # gw.analyses is False without them
    began = time.time()
    settings = gw.settings
    job_id = str(uuid.uuid4())
    deadline = began + (request.timeout_s or settings.recall_timeout_s)
    env = JobEnvelope(job_id=job_id, bank_id=bank_id, deadline=deadline, enqueued_at=began, cache_key=miss.key)
    store = gw.store
    digest = job_request_hash(bank_id, request)
    store.create(job_id, bank_id=bank_id, deadline=deadline, request_hash=digest, status=RUNNING, tenant=tenant)
    try:
        ctx = parts.recall_context(embedder=True, space=miss.space, resources=gw.resources)
        plan = analyse(bank_id, request, ctx, version=miss.version)
        check_deadline(env, "retrieval")
    except Exception as exc:  # the job ends failed whatever went wrong; the route maps the error
        fail_job(JobEnds(store, RecallCache(None, 0), gw.celery_app), env, exc)
        if isinstance(exc, RecallError):
            raise JobError(exc, job_id) from exc
        raise
    signature = parts.build_chord(env, plan, {"cache_lookup": miss.lookup_ms}, settings, gw.celery_app)
    with (
        enqueueing(gw.celery_app, job_id, store, release=None, tenant=tenant or ""),
        parts.sending_only(gw.celery_app.backend),  # the answer is waited on, not each strategy
    ):
        signature.apply_async(task_id=job_id)
    return RecallJob(job_id, bank_id, deadline, gw.celery_app, store, settings.recall_deadline_grace_s)


def warm_up(gw: Gateway) -> None:
    """Load the query embedder and the temporal tables before the gateway serves, so its first miss
    is as fast as the hundredth (``tempr services up`` returns once the gateway answers). A gateway
    that cannot load them says so and sends its misses to the start task instead: recall works."""
    from tempr.temporal import warm_up as warm_temporal

    started = time.perf_counter()
    try:
        warm_temporal(gw.settings.temporal_languages)
        gw.resources.embedder.embed_tokens(["warm up"])  # tokens too: their masks are built on first use
    except Exception as exc:  # noqa: BLE001 - a missing model or a broken runtime: the start task analyses
        gw.analyses = False
        log.warning("the gateway cannot analyse queries (%s: %s); misses go to the start task", type(exc).__name__, exc)
        return
    log.info("gateway query analysis warm in %.0f ms", (time.perf_counter() - started) * 1000)
