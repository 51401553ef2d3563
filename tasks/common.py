"""What the recall tasks share: this process's job layer, step entry, and the failure hook.

A job ends exactly once, through ``tempr.jobs.outcome`` (``succeed_job`` / ``fail_job``): the
job record is written, the answer cached, the webhook dispatched and the metrics counted there.
``job_ends()`` hands it this process's Redis, Celery app and Prometheus metrics.

``RecallStep`` is the base class of every step: when a step raises, the job ends with that error.
For a step whose task id is not the job id (rerank), the failure is also stored under the job id,
so a caller waiting on ``AsyncResult(job_id)`` wakes with the real error instead of waiting for
its deadline.
"""

from __future__ import annotations

import logging
import time
from typing import Any, TypeVar

from celery import Task
from celery.exceptions import TaskPredicate

from config.errors import ServiceUnavailable, TemprError, outage_message
from tasks.messages import RerankState
from tempr.core.timeutil import ms
from tempr.jobs.cache import RecallCache
from tempr.jobs.envelope import JobEnvelope
from tempr.jobs.outcome import JobEnds, check_deadline, fail_job
from tempr.jobs.records import JobStore
from tempr.jobs.redis_client import cache_redis
from workers import metrics
from workers.app import app
from workers.resources import get_resources

log = logging.getLogger(__name__)

S = TypeVar("S", bound=RerankState)


def job_store() -> JobStore:
    res = get_resources()
    client, breaker = cache_redis(res.endpoints.cache_url)
    return JobStore(client, res.settings.job_result_ttl_s, breaker)


def recall_cache() -> RecallCache:
    res = get_resources()
    client, breaker = cache_redis(res.endpoints.cache_url)
    return RecallCache(client, res.settings.cache_ttl_s, breaker)


def job_ends() -> JobEnds:
    """How jobs end in this process: its job store and cache, its Celery app, its metrics."""
    return JobEnds(job_store(), recall_cache(), app, metrics.OUTCOMES)


def enter_step(data: Any, model: type[S], step: str) -> S:
    """Start a chained recall step: read its message, record its queue wait, refuse it past the deadline."""
    state = model.receive(data)
    state.timings[f"queue.{step}"] = ms(time.time() - state.sent_at)
    drop_if_stale(state.env, step)
    return state


def drop_if_stale(env: JobEnvelope, task: str) -> None:
    """Refuse a message taken from its queue past the job's deadline (e.g. redelivered after a
    worker died): counted in ``tempr_stale_messages_total{task}`` and dropped unrun."""
    if time.time() > env.deadline:
        metrics.STALE_MESSAGES.labels(task).inc()
    check_deadline(env, task)


def as_tempr_error(exc: Exception) -> Exception:
    """A driver's connection error (PostgreSQL or Redis down) as ``ServiceUnavailable``: callers
    then get a 503 with Retry-After (a class Celery can rebuild on their side), and the message
    names the service, not its address."""
    outage = outage_message(exc)
    if outage and not isinstance(exc, TemprError):
        return ServiceUnavailable(f"{outage}; retry shortly")
    return exc


class RecallStep(Task):
    """Base of the recall steps: a raised error ends the job (record, webhook, waiter woken).

    This runs inside ``__call__``, before Celery stores the failure, so a caller woken by the
    failed result already finds the job record terminal.

    No STARTED state (``track_started``, on for the app): the job record says a recall is running
    (``JobStore.mark_running``), and a stored STARTED under the job id cost every miss three Redis
    round trips before its fusion began (Celery reads the key, writes it, publishes it) and woke
    the waiting gateway once for nothing (it decodes the message, then waits on)."""

    track_started = False

    def envelope(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> JobEnvelope | None:
        for value in (*args, *kwargs.values()):
            if isinstance(value, dict) and isinstance(value.get("env"), dict):
                return JobEnvelope.model_validate(value["env"])
        return None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except TaskPredicate:  # replace() / retry(): control flow, not failure
            raise
        except Exception as exc:  # record, notify, then let Celery store the failure as usual
            error = as_tempr_error(exc)
            env = self.envelope(args, kwargs)
            if env is None:
                log.warning("recall step %s failed without a job envelope: %s", self.name, exc)
            else:
                fail_job(job_ends(), env, error, store_under_job_id=self.request.id != env.job_id)
            if error is exc:
                raise
            raise error from exc
