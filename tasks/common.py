"""What the recall tasks share: the job envelope, deadlines, and how a job ends.

The *envelope* is the small dict every step of one recall carries (job id, bank, absolute
deadline, enqueue time, callback URL, cache key). A job ends exactly once, through
``finish_job`` (success) or ``fail_job`` (error): the job record is written, the answer cached,
the webhook dispatched and the metrics counted there, so no task repeats that logic.

``RecallStep`` is the base class of every step: when a step raises, the job ends with that error.
For a step whose task id is not the job id (rerank), the failure is also stored under the job id,
so a caller waiting on ``AsyncResult(job_id)`` wakes with the real error instead of waiting for
its deadline.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import Task
from celery.exceptions import TaskPredicate

from config.errors import RecallTimeout
from tempr.cache import RecallCache, cache_redis
from tempr.jobs import JobStore, error_dict
from tempr.recall.context import RecallContext
from tempr.recall.models import RecallResponse
from tempr.recall.plan import QueryPlan
from workers import metrics
from workers.resources import get_resources

log = logging.getLogger(__name__)


def ms(seconds: float) -> float:
    return round(max(seconds, 0.0) * 1000, 2)


def job_store() -> JobStore:
    res = get_resources()
    client, breaker = cache_redis(res.endpoints.cache_url)
    return JobStore(client, res.settings.job_result_ttl_s, breaker)


def recall_cache() -> RecallCache:
    res = get_resources()
    client, breaker = cache_redis(res.endpoints.cache_url)
    return RecallCache(client, res.settings.cache_ttl_s, breaker)


def context(*, embedder: bool = False, reranker: Any = None) -> RecallContext:
    """A RecallContext for this process; the embedder is only loaded where analysis runs."""
    res = get_resources()
    return RecallContext(res.engine, res.embedder if embedder else None, res.settings, reranker=reranker)  # type: ignore[arg-type]


def check_deadline(env: dict[str, Any], step: str) -> None:
    over = time.time() - float(env["deadline"])
    if over > 0:
        raise RecallTimeout(f"recall {env['job_id']} passed its deadline before {step} ({ms(over):.0f} ms over)")


def enter_step(state: dict[str, Any], step: str) -> tuple[dict[str, Any], dict[str, float], QueryPlan]:
    """Start a chained recall step: record its queue wait, refuse it past the deadline.

    Returns the job envelope, a copy of the timings so far, and the query plan.
    """
    env = state["env"]
    timings = dict(state["timings"])
    timings[f"queue.{step}"] = ms(time.time() - float(state["sent_at"]))
    check_deadline(env, step)
    return env, timings, QueryPlan.from_dict(state["plan"])


def _dispatch_webhook(env: dict[str, Any], payload: dict[str, Any]) -> None:
    from workers.app import app

    app.send_task("tempr.webhooks.deliver", args=[env["job_id"], env["callback_url"], payload])


def finish_job(env: dict[str, Any], response: RecallResponse, *, cached: bool = False) -> dict[str, Any]:
    """Refuse a late answer; else stamp, cache, record, notify; return the response as JSON."""
    check_deadline(env, "returning the result")
    response.cache = "hit" if cached else "miss"
    response.timings_ms["total"] = ms(time.time() - float(env["enqueued_at"]))
    out = response.model_dump(mode="json")
    if not cached and not response.degraded:  # a degraded answer is not worth pinning for the TTL
        recall_cache().set(env.get("cache_key"), out)
    metrics.CACHE_REQUESTS.labels("hit" if cached else "miss").inc()
    metrics.RECALLS.labels("succeeded").inc()
    metrics.observe_timings(response.timings_ms)
    if job_store().finish(env["job_id"], result=out) and env.get("callback_url"):
        _dispatch_webhook(
            env,
            {"job_id": env["job_id"], "bank_id": env["bank_id"], "status": "succeeded", "result": out, "error": None},
        )
    return out


def fail_job(env: dict[str, Any], exc: BaseException, *, store_under_job_id: bool = False) -> None:
    """End the job with an error (idempotent: only the first outcome is recorded and sent)."""
    error = error_dict(exc)
    if store_under_job_id:
        from workers.app import app

        app.backend.mark_as_failure(env["job_id"], exc)
    if not job_store().finish(env["job_id"], error=error):
        return  # another outcome was recorded (and sent) first
    metrics.RECALLS.labels("timeout" if isinstance(exc, RecallTimeout) else "failed").inc()
    if env.get("callback_url"):
        _dispatch_webhook(
            env,
            {
                "job_id": env["job_id"],
                "bank_id": env.get("bank_id"),
                "status": "failed",
                "result": None,
                "error": error,
            },
        )


class RecallStep(Task):
    """Base of the recall steps: a raised error ends the job (record, webhook, waiter woken).

    This runs inside ``__call__``, before Celery stores the failure, so a caller woken by the
    failed result already finds the job record terminal."""

    def envelope(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
        for value in (*args, *kwargs.values()):
            if isinstance(value, dict) and isinstance(value.get("env"), dict):
                return dict(value["env"])
        return None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except TaskPredicate:  # replace() / retry(): control flow, not failure
            raise
        except Exception as exc:  # record, notify, then let Celery store the failure as usual
            env = self.envelope(args, kwargs)
            if env is None:
                log.warning("recall step %s failed without a job envelope: %s", self.name, exc)
            else:
                fail_job(env, exc, store_under_job_id=self.request.id != env["job_id"])
            raise
