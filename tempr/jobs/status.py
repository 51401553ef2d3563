"""``job_status``: a job's record, reconciled with what no tempr code got to write down."""

from __future__ import annotations

import time
from typing import Any

from celery import Celery

from config.errors import NotFound, RecallError, RecallTimeout
from tempr.jobs.records import FAILED, TERMINAL, JobStore, error_dict


def job_status(job_id: str, *, app: Celery, store: JobStore, grace_s: float, reader: Any = None) -> dict[str, Any]:
    """The job record; falls back to Celery's state when the record is gone. Raises NotFound.

    ``reader`` (a ``tempr.auth.Principal`` with a tenant) sees only its tenant's jobs over banks
    in its scope: any other job is NotFound, exactly like an unknown id, so job ids of other
    tenants cannot even be confirmed. Without a record there is no owner to check: NotFound too.

    An open record is reconciled with what no tempr code got to write down: a start message that
    expired in its queue, a chord whose strategy message expired (both end the Celery result), or
    a job still open past its deadline + grace (a worker died). Those are recorded as failed, so a
    status poll never shows "running" forever.
    """
    record = store.get(job_id)
    tenant = getattr(reader, "tenant", None)
    if tenant is not None and (
        record is None or record.get("tenant") != tenant or not reader.can("recall", str(record.get("bank_id")))
    ):
        raise NotFound(f"no job {job_id!r}")
    if record is None:
        return _from_celery(job_id, app)
    if record["status"] not in TERMINAL:
        deadline = record.get("deadline") or 0.0
        celery_view = _from_celery(job_id, app, missing_ok=True)
        if celery_view["status"] == FAILED or (deadline and time.time() > deadline + grace_s):
            past = bool(deadline) and time.time() > deadline
            error = (
                error_dict(RecallTimeout(f"recall {job_id} did not finish before its deadline"))
                if past
                else celery_view["error"]
            )
            store.record_outcome(job_id, error=error)
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
