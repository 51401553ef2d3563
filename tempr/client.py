"""The Python client: enqueue a recall on the fleet and wait for it (or don't).

    from tempr.client import recall_async
    job = recall_async("my-bank", query="What did Alice do in 2023?", budget="mid")
    response = job.get(timeout=10)      # RecallResponse; raises RecallTimeout / RecallError
    job.status()                        # the job record (status, result, error, webhook deliveries)

Apps that do not import tempr enqueue with Celery's ``send_task`` by name (see docs/execution.md);
they get the same job id, job record and webhooks.

Every job has a deadline (``TEMPR_RECALL_TIMEOUT_S``, or the request's ``timeout_s``), fixed here
at enqueue; waiting is bounded by it, so a recall never hangs.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from celery import Celery
from celery.exceptions import TimeoutError as CeleryTimeoutError

from config.celery import celery_config, make_celery
from config.errors import RecallError, RecallTimeout, ServiceUnavailable, TemprError, ValidationError, outage_message
from config.settings import Settings, get_settings
from tempr.bank_ids import check_bank_id
from tempr.endpoints import Endpoints, resolve_endpoints
from tempr.jobs.records import JobStore
from tempr.jobs.redis_client import cache_redis
from tempr.jobs.status import job_status
from tempr.jobs.webhooks import check_callback_url
from tempr.recall.models import RecallRequest, RecallResponse, parse_request

if TYPE_CHECKING:
    from sqlalchemy import Engine

_SENDERS: dict[tuple[str | None, str | None], Celery] = {}


def sender_app(settings: Settings, endpoints: Endpoints) -> Celery:
    """This process's enqueue-only Celery app for these endpoints (sends tasks by name)."""
    key = (endpoints.broker_url, endpoints.result_backend)
    if key not in _SENDERS:
        _SENDERS[key] = make_celery(lambda: celery_config(settings, *key))
    return _SENDERS[key]


def _defaults(
    app: Celery | None, store: JobStore | None, settings: Settings | None
) -> tuple[Celery, JobStore, Settings]:
    s = settings or get_settings()
    if app is None or store is None:
        endpoints = resolve_endpoints(s, database=False)  # Redis only: no database driver to import
        if app is None:
            app = sender_app(s, endpoints)
        if store is None:
            client, breaker = cache_redis(endpoints.cache_url)
            store = JobStore(client, s.job_result_ttl_s, breaker)
    return app, store, s


def job_request_hash(bank_id: str, request: RecallRequest) -> str:
    """The ``request_hash`` of a job record: an Idempotency-Key is honoured only for the same hash.

    Unlike the cache key's ``request_hash`` it covers the bank and the callback URL too."""
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
        return RecallResponse.model_validate(self.get_json(timeout))

    def get_json(self, timeout: float | None = None) -> dict[str, Any]:
        """``get`` without building the model: the answer as the workers serialised it (the gateway
        sends it on as it is)."""
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
                raise RecallTimeout(f"recall job {self.id} did not finish before its deadline") from exc
            outage = outage_message(exc)
            if outage:
                forget_result_backend(self.app)
                raise ServiceUnavailable(f"recall job {self.id}: {outage}; retry shortly") from exc
            raise RecallError(f"recall job {self.id} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            try:
                result.backend.remove_pending_result(result)
            except Exception as exc:
                if outage_message(exc) is None:
                    raise
        return dict(value)

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
    tenant: str | None = None,
    api_key: str | None = None,
    engine: Engine | None = None,
    check_key: bool = True,
    **fields: Any,
) -> RecallJob:
    """Validate, fix the deadline, enqueue ``tempr.recall.start``; return the job handle at once.

    ``request`` is a RecallRequest or its fields as a dict (or pass the fields as keywords). The
    same ``idempotency_key`` (argument or request field) for the same bank and tenant returns the
    same job. The job belongs to ``tenant`` (the gateway passes the caller's), or to the tenant of
    ``api_key`` or, without one, of this machine's key (TEMPR_API_KEY or <state_dir>/api_key),
    checked here; the start task checks the tenant again. Raises
    ``config.errors.ValidationError`` (naming the field) for bad input, ``AuthError`` for a bad key,
    and ``NotFound`` for an unknown bank when given the database ``engine`` (the gateway and the CLI
    pass theirs). Without it, the start task finds out: the job fails with that same ``NotFound``.
    ``check_key=False``: the key is not checked here (no database connection, no SQLAlchemy
    import: the CLI's fleet path) but sent with the job; the start task checks it, and a bad key
    fails the job with ``AuthError``.
    """
    app, store, s = _defaults(app, store, settings)
    req = parse_request(request if request is not None else fields)
    check_bank_id(bank_id)
    key_for_worker = None
    if not tenant and s.auth != "off":
        if check_key:
            tenant = _tenant_of(api_key, bank_id, s)
        else:
            key_for_worker = api_key or _local_key(s)
    if req.callback_url:
        check_callback_url(
            req.callback_url,
            allow_link_local=s.webhook_allow_link_local,
            allow_networks=s.webhook_allow_networks,
        )
    if engine is not None:  # bad input first (422), then: a caller with a database answers an unknown bank now
        from tempr.store.banks_repo import require_bank

        with engine.connect() as conn:
            require_bank(conn, bank_id)
    key = idempotency_key or req.idempotency_key
    now = time.time()
    deadline = now + (req.timeout_s or s.recall_timeout_s)
    job_id = str(uuid.uuid4())
    digest = job_request_hash(bank_id, req)
    if key:
        earlier = store.claim_idempotency(bank_id, key, job_id, digest, tenant=tenant or "")
        if earlier:
            return _reattach(*earlier, bank_id, digest, app, store, s, tenant or "")
    store.create(
        job_id, bank_id=bank_id, deadline=deadline, callback_url=req.callback_url, request_hash=digest, tenant=tenant
    )
    kwargs: dict[str, Any] = {
        "bank_id": bank_id,
        "request": req.model_dump(mode="json"),
        "deadline": deadline,
        "enqueued_at": now,
    }
    if tenant:
        kwargs["tenant"] = tenant
    elif key_for_worker:
        kwargs["api_key"] = key_for_worker
    with enqueueing(app, job_id, store, release=(bank_id, key) if key else None, tenant=tenant or ""):
        app.send_task(
            "tempr.recall.start", task_id=job_id, kwargs=kwargs, expires=datetime.fromtimestamp(deadline, tz=UTC)
        )
        if req.callback_url:
            wait = deadline - now + s.recall_deadline_grace_s
            app.send_task("tempr.webhooks.watchdog", args=[job_id], countdown=wait)
    return RecallJob(job_id, bank_id, deadline, app, store, s.recall_deadline_grace_s)


@contextmanager
def enqueueing(
    app: Celery, job_id: str, store: JobStore, *, release: tuple[str, str] | None, tenant: str = ""
) -> Iterator[None]:
    """Turn a broker (or result store) outage while sending into ``ServiceUnavailable`` (a fast
    503 at the gateway) and undo what the failed enqueue claimed: the job is marked failed and the
    Idempotency-Key released, so the caller's retry with the same key starts afresh."""
    try:
        yield
    except Exception as exc:
        outage = outage_message(exc)
        if outage is None:
            raise
        forget_result_backend(app)
        store.record_outcome(job_id, error={"error": "ServiceUnavailable", "message": outage, "field": None})
        if release:
            store.release_idempotency(*release, job_id, tenant=tenant)
        raise ServiceUnavailable(f"could not enqueue the recall: {outage}; retry shortly") from exc


def forget_result_backend(app: Celery) -> None:
    """Drop this thread's Celery result backend after an outage; the next use builds a fresh one.

    Celery's Redis result consumer that once gave up reconnecting ("Retry limit exceeded ... must
    be restarted") could keep failing after Redis returned (the gateway answered 503 for a minute
    in `make faults`); a new backend object starts from new connections. Celery keeps the backend
    per thread (or one shared, for thread-safe backends), so this touches only what Celery rebuilds
    on demand."""
    if getattr(app, "_backend_cache", None) is not None:
        app._backend_cache = None
    local = getattr(app, "_local", None)
    if local is not None:
        local.__dict__.pop("backend", None)


def _local_key(s: Settings) -> str | None:
    from tempr.auth import require_local_key

    return require_local_key(s)


def _tenant_of(api_key: str | None, bank_id: str, s: Settings) -> str | None:
    """The tenant of ``api_key``, else of this machine's key (TEMPR_API_KEY or <state_dir>/api_key),
    checked for the recall role over ``bank_id``; AuthError when there is no key at all."""
    from tempr.auth import authenticate, default_engine, require_local_key

    key = api_key or require_local_key(s)
    return authenticate(default_engine(s), key).require("recall", bank_id).tenant


def _reattach(
    job_id: str,
    earlier_digest: str,
    bank_id: str,
    digest: str,
    app: Celery,
    store: JobStore,
    s: Settings,
    tenant: str,
) -> RecallJob:
    """Hand back the job an Idempotency-Key already names, if it was made for this very request.

    The hash came with the claim itself (one atomic write), so a racing caller with another body
    is refused, never handed the first caller's job; the job's own bank is checked once more."""
    if not job_id or earlier_digest != digest:
        raise ValidationError("this Idempotency-Key was used for a different request", field="idempotency_key")
    record = store.get(job_id) or {}
    owner_ok = not record or (record.get("tenant") or "") == tenant
    if record.get("bank_id") not in (None, bank_id) or not owner_ok:
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
