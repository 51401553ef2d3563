"""How a recall job ends, exactly once: ``succeed_job`` (an answer) or ``fail_job`` (an error).

The job record is written, the answer cached, the webhook dispatched and the outcome observed
(metrics) and logged (the job's one INFO line, ``tempr.jobs.joblog``) here, so no task repeats that logic. The Celery app and the metrics are passed in
(``JobEnds``): this package imports neither ``workers`` nor ``tasks``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from config.codec import EncodedAnswer
from config.errors import RecallTimeout
from tempr.core.timeutil import ms
from tempr.jobs.cache import RecallCache, stamp
from tempr.jobs.envelope import JobEnvelope
from tempr.jobs.joblog import log_job_end
from tempr.jobs.records import JobStore, error_dict
from tempr.recall.models import RecallResponse


class OutcomeObserver(Protocol):
    """Counts outcomes (the workers pass their Prometheus metrics)."""

    def succeeded(self, response: RecallResponse, *, cached: bool) -> None: ...

    def failed(self, exc: BaseException) -> None: ...


class _Quiet:
    def succeeded(self, response: RecallResponse, *, cached: bool) -> None:
        return None

    def failed(self, exc: BaseException) -> None:
        return None


class Backend(Protocol):
    def mark_as_failure(self, task_id: str, exc: BaseException) -> Any: ...


class Sender(Protocol):
    """The part of a Celery app ending a job needs."""

    backend: Backend

    def send_task(self, name: str, args: Any = None, **options: Any) -> Any: ...


@dataclass
class JobEnds:
    store: JobStore
    cache: RecallCache
    app: Sender  # a Celery app: send_task, and backend.mark_as_failure for steps not run under the job id
    observer: OutcomeObserver = field(default_factory=_Quiet)

    def dispatch_webhook(self, env: JobEnvelope, payload: dict[str, Any]) -> None:
        self.app.send_task("tempr.webhooks.deliver", args=[env.job_id, env.callback_url, payload])


def check_deadline(env: JobEnvelope, step: str) -> None:
    over = time.time() - env.deadline
    if over > 0:
        raise RecallTimeout(f"recall {env.job_id} passed its deadline before {step} ({ms(over):.0f} ms over)")


def loads_answer(raw: bytes) -> dict[str, Any]:
    """An answer's JSON back to a dict: orjson (3x the standard library), or ``json.loads`` where
    the answer holds a NaN or an infinity (``RecallResponse`` writes them as the standard library
    does, and orjson refuses them)."""
    try:
        out: dict[str, Any] = orjson.loads(raw)
    except orjson.JSONDecodeError:
        out = json.loads(raw)
    return out


def succeed_job(ends: JobEnds, env: JobEnvelope, response: RecallResponse, *, cached: bool = False) -> dict[str, Any]:
    """Refuse a late answer; else stamp, cache, record, notify; return the response as JSON."""
    check_deadline(env, "returning the result")
    response.cache = "hit" if cached else "miss"
    response.timings_ms["total"] = ms(time.time() - env.enqueued_at)
    # Serialised once (pydantic's serialiser, ~5x the standard library's speed on a 40 KB answer):
    # the cache stores these bytes, the job record and the return value add this job's stamps, and
    # the Celery result reuses them (``EncodedAnswer``: kombu does not encode the answer again).
    stored = response.model_dump_json(exclude={"cache", "timings_ms"}).encode()
    full = stamp(stored, response.cache, response.timings_ms)
    assert full is not None  # a model always serialises to an object
    out = EncodedAnswer(loads_answer(full), full.decode())
    if not cached and not response.degraded:  # a degraded answer is not worth pinning for the TTL
        ends.cache.set(env.cache_key, stored)
    ends.observer.succeeded(response, cached=cached)
    if not ends.store.record_outcome(env.job_id, result_json=full):
        return out  # the job had already ended (e.g. failed by the watchdog): that end was logged
    log_job_end(
        "recall",
        "succeeded",
        bank_id=env.bank_id,
        cache=response.cache,
        total_ms=response.timings_ms["total"],
        degraded=response.degraded,
    )
    if env.callback_url:
        ends.dispatch_webhook(
            env, {"job_id": env.job_id, "bank_id": env.bank_id, "status": "succeeded", "result": out, "error": None}
        )
    return out


def fail_job(ends: JobEnds, env: JobEnvelope, exc: BaseException, *, store_under_job_id: bool = False) -> None:
    """End the job with an error (idempotent: only the first outcome is recorded and sent).

    ``store_under_job_id``: for a step whose task id is not the job id, the failure is also stored
    under the job id, so a caller waiting on ``AsyncResult(job_id)`` wakes with the real error."""
    error = error_dict(exc)
    if store_under_job_id:
        ends.app.backend.mark_as_failure(env.job_id, exc)
    if not ends.store.record_outcome(env.job_id, error=error):
        return  # another outcome was recorded (and sent) first
    log_job_end("recall", "failed", bank_id=env.bank_id, error=exc, total_ms=ms(time.time() - env.enqueued_at))
    ends.observer.failed(exc)
    if env.callback_url:
        ends.dispatch_webhook(
            env, {"job_id": env.job_id, "bank_id": env.bank_id, "status": "failed", "result": None, "error": error}
        )
