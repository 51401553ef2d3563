"""The Python client: enqueue a recall on the fleet and wait for it (or don't).

    from tempr.client import recall_async
    job = recall_async("my-bank", query="What did Alice do in 2023?", budget="mid")
    response = job.get(timeout=10)      # RecallResponse; raises RecallTimeout / RecallError
    job.status()                        # the job record (status, result, error, webhook deliveries)

Apps that do not import tempr enqueue with Celery's ``send_task`` by name (see ``SEND_TASK_API``
and docs/execution.md); they get the same job id, job record and webhooks.

Every job has a deadline (``TEMPR_RECALL_TIMEOUT_S``, or the request's ``timeout_s``), fixed here
at enqueue; waiting is bounded by it, so a recall never hangs.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from celery import Celery
from celery.exceptions import TimeoutError as CeleryTimeoutError
from pydantic import ValidationError as PydanticValidationError

from config.errors import NotFound, RecallError, RecallTimeout, TemprError, ValidationError
from config.settings import Settings
from tempr.cache import cache_redis
from tempr.ingest.pipeline import check_bank_id
from tempr.jobs import FAILED, TERMINAL, JobStore, error_dict
from tempr.recall.models import RecallRequest, RecallResponse
from tempr.webhooks import check_callback_url

SEND_TASK_API: dict[str, dict[str, Any]] = {
    "tempr.recall.start": {
        "queue": "fuse",
        "kwargs": {
            "bank_id": "str",
            "request": "RecallRequest fields as JSON (query, budget, max_tokens, types, "
            "tags, tags_match, query_timestamp, temporal_window, include, trace, callback_url, timeout_s)",
            "deadline": "float unix seconds (optional; default now + timeout_s or TEMPR_RECALL_TIMEOUT_S)",
            "enqueued_at": "float unix seconds (optional; for the queue.start timing)",
        },
        "task_id": "optional: becomes the job id",
        "returns": "RecallResponse as JSON (AsyncResult(job_id).get())",
    },
    "tempr.ingest.facts": {
        "queue": "ingest",
        "kwargs": {"bank_id": "str", "facts": "list of fact objects (same schema as JSONL lines)"},
        "returns": "ingest report, or {error, message, line, field} for bad input",
    },
    "tempr.webhooks.deliver": {"queue": "webhooks", "internal": True},
    "tempr.webhooks.watchdog": {"queue": "webhooks", "internal": True},
    "tempr.retrieve.strategy": {"queue": "retrieve", "internal": True},
    "tempr.fuse.collect": {"queue": "fuse", "internal": True},
    "tempr.rerank.score": {"queue": "rerank", "internal": True},
    "tempr.fuse.finish": {"queue": "fuse", "internal": True},
}


def _defaults(
    app: Celery | None, store: JobStore | None, settings: Settings | None
) -> tuple[Celery, JobStore, Settings]:
    from workers.resources import get_resources

    res = get_resources()
    s = settings or res.settings
    if app is None:
        from workers.app import app as default_app

        app = default_app
    if store is None:
        client, breaker = cache_redis(res.endpoints.cache_url)
        store = JobStore(client, s.job_result_ttl_s, breaker)
    return app, store, s


def parse_request(request: Any) -> RecallRequest:
    """Validate a raw payload; errors name the field, as over HTTP and in the start task."""
    if isinstance(request, RecallRequest):
        return request
    try:
        return RecallRequest.model_validate(request)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise ValidationError(err["msg"].removeprefix("Value error, "), field=field) from None


def request_hash(bank_id: str, request: RecallRequest) -> str:
    body = json.dumps(
        {"bank_id": bank_id, **request.cache_fields(), "callback_url": request.callback_url},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(body.encode()).hexdigest()


@dataclass
class RecallJob:
    """A handle on one recall job: ``.id``, ``.get(timeout)``, ``.status()``."""

    id: str
    bank_id: str
    deadline: float
    app: Celery
    store: JobStore
    grace_s: float = 2.0
    reused: bool = False

    def get(self, timeout: float | None = None) -> RecallResponse:
        """Wait for the answer: at most ``timeout`` s, and never past the deadline (+ grace)."""
        remaining = max(0.0, self.deadline + self.grace_s - time.time())
        wait = remaining if timeout is None else min(timeout, remaining)
        result = self.app.AsyncResult(self.id)
        try:
            value = result.get(timeout=wait, propagate=True, disable_sync_subtasks=False)
        except CeleryTimeoutError:
            past = time.time() > self.deadline
            raise RecallTimeout(
                f"recall job {self.id} "
                + ("did not finish before its deadline" if past else f"not ready after {wait:.1f} s")
            ) from None
        except TemprError:
            raise
        except Exception as exc:
            if time.time() > self.deadline:
                raise RecallTimeout(f"recall job {self.id} did not finish before its deadline ({exc})") from exc
            raise RecallError(f"recall job {self.id} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            result.backend.remove_pending_result(result)
        return RecallResponse.model_validate(value)

    def status(self) -> dict[str, Any]:
        return job_status(self.id, app=self.app, store=self.store, grace_s=self.grace_s)


def recall_async(
    bank_id: str,
    request: RecallRequest | dict[str, Any] | None = None,
    *,
    app: Celery | None = None,
    store: JobStore | None = None,
    settings: Settings | None = None,
    idempotency_key: str | None = None,
    **fields: Any,
) -> RecallJob:
    """Validate, fix the deadline, enqueue ``tempr.recall.start``; return the job handle at once.

    ``request`` is a RecallRequest or its fields as a dict (or pass the fields as keywords). The
    same ``idempotency_key`` (argument or request field) for the same bank returns the same job.
    Raises ``config.errors.ValidationError`` (naming the field) for bad input.
    """
    app, store, s = _defaults(app, store, settings)
    req = parse_request(request if request is not None else fields)
    check_bank_id(bank_id)
    if req.callback_url:
        check_callback_url(req.callback_url, allow_link_local=s.webhook_allow_link_local)
    key = idempotency_key or req.idempotency_key
    now = time.time()
    deadline = now + (req.timeout_s or s.recall_timeout_s)
    job_id = str(uuid.uuid4())
    digest = request_hash(bank_id, req)
    if key:
        earlier = store.claim_idempotency(bank_id, key, job_id, digest)
        if earlier:
            return _reattach(*earlier, bank_id, digest, app, store, s)
    store.create(job_id, bank_id=bank_id, deadline=deadline, callback_url=req.callback_url, request_hash=digest)
    app.send_task(
        "tempr.recall.start",
        task_id=job_id,
        kwargs={"bank_id": bank_id, "request": req.model_dump(mode="json"), "deadline": deadline, "enqueued_at": now},
        expires=datetime.fromtimestamp(deadline, tz=UTC),
    )
    if req.callback_url:
        app.send_task("tempr.webhooks.watchdog", args=[job_id], countdown=deadline - now + s.recall_deadline_grace_s)
    return RecallJob(job_id, bank_id, deadline, app, store, s.recall_deadline_grace_s)


def _reattach(
    job_id: str, earlier_digest: str, bank_id: str, digest: str, app: Celery, store: JobStore, s: Settings
) -> RecallJob:
    """Hand back the job an Idempotency-Key already names, if it was made for this very request.

    The hash came with the claim itself (one atomic write), so a racing caller with another body
    is refused, never handed the first caller's job; the job's own bank is checked once more."""
    if not job_id or earlier_digest != digest:
        raise ValidationError("this Idempotency-Key was used for a different request", field="idempotency_key")
    record = store.get(job_id) or {}
    if record.get("bank_id") not in (None, bank_id):
        raise ValidationError("this Idempotency-Key was used for a different request", field="idempotency_key")
    deadline = float(record.get("deadline") or time.time() + s.recall_timeout_s)
    return RecallJob(job_id, bank_id, deadline, app, store, s.recall_deadline_grace_s, reused=True)


def recall(
    bank_id: str, request: RecallRequest | dict[str, Any] | None = None, *, timeout: float | None = None, **kwargs: Any
) -> RecallResponse:
    """Enqueue and wait: the synchronous form of ``recall_async``."""
    return recall_async(bank_id, request, **kwargs).get(timeout)


def get_job(job_id: str, *, app: Celery | None = None, store: JobStore | None = None) -> RecallJob:
    """Re-attach to a job by id (e.g. from another process)."""
    app, store, s = _defaults(app, store, None)
    record = store.get(job_id) or {}
    deadline = float(record.get("deadline") or time.time())
    return RecallJob(job_id, str(record.get("bank_id") or ""), deadline, app, store, s.recall_deadline_grace_s)


def job_status(
    job_id: str, *, app: Celery | None = None, store: JobStore | None = None, grace_s: float | None = None
) -> dict[str, Any]:
    """The job record; falls back to Celery's state when the record is gone. Raises NotFound.

    An open record is reconciled with what no tempr code got to write down: a start message that
    expired in its queue, a chord whose strategy message expired (both end the Celery result), or
    a job still open past its deadline + grace (a worker died). Those are recorded as failed, so a
    status poll never shows "running" forever.
    """
    app, store, s = _defaults(app, store, None)
    grace = s.recall_deadline_grace_s if grace_s is None else grace_s
    record = store.get(job_id)
    if record is None:
        return _from_celery(job_id, app)
    if record["status"] not in TERMINAL:
        deadline = record.get("deadline") or 0.0
        celery_view = _from_celery(job_id, app, missing_ok=True)
        if celery_view["status"] == FAILED or (deadline and time.time() > deadline + grace):
            past = bool(deadline) and time.time() > deadline
            error = (
                error_dict(RecallTimeout(f"recall {job_id} did not finish before its deadline"))
                if past
                else celery_view["error"]
            )
            store.finish(job_id, error=error)
            record = store.get(job_id) or {**record, "status": FAILED, "error": error}
    return record


def _from_celery(job_id: str, app: Celery, *, missing_ok: bool = False) -> dict[str, Any]:
    result = app.AsyncResult(job_id)
    state = result.state
    if state == "PENDING" and not missing_ok:
        raise NotFound(f"no job {job_id!r}")
    status = {"SUCCESS": "succeeded", "FAILURE": "failed", "REVOKED": "failed"}.get(state, "running")
    out: dict[str, Any] = {"job_id": job_id, "status": status, "result": None, "error": None}
    if state == "SUCCESS":
        out["result"] = result.result
    elif status == "failed":
        out["error"] = error_dict(
            result.result if isinstance(result.result, BaseException) else RecallError(str(result.result))
        )
    return out
