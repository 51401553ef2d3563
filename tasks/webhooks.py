"""Webhook delivery and the deadline watchdog (queue ``webhooks``).

``tempr.webhooks.deliver(job_id, url, payload)`` POSTs the job's outcome, signed (see
``tempr.jobs.webhooks``), and retries with exponential backoff (``TEMPR_WEBHOOK_BACKOFF_BASE_S``,
doubling, capped) on connection errors, timeouts, 5xx, 408 and 429, up to
``TEMPR_WEBHOOK_MAX_ATTEMPTS`` attempts. Any other 4xx is the receiver refusing: not retried.
The URL is re-checked before every attempt (DNS can change after enqueue), and the attempt
connects to the very address that passed the check (Host header and TLS SNI carry the name), so
a DNS answer that changes between check and connect cannot redirect it. The body is signed with
the job's tenant's secret (made with its first API key), or TEMPR_WEBHOOK_SECRET for jobs with no
tenant; with no secret at all the delivery is refused and recorded, never signed with a default.
Each attempt is recorded in the job (``GET /v1/jobs/{id}`` -> ``webhook.deliveries``).

``tempr.webhooks.watchdog(job_id)`` is scheduled at enqueue for jobs with a ``callback_url``, to
run just after the deadline: a job that has not ended by then is failed with ``RecallTimeout`` and
the error webhook goes out, so a receiver is never left waiting.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from config.errors import RecallTimeout, ValidationError
from tasks.common import job_ends, job_store
from tempr.auth import webhook_secret_for
from tempr.core.timeutil import ms_since
from tempr.jobs.envelope import JobEnvelope
from tempr.jobs.outcome import fail_job
from tempr.jobs.records import TERMINAL
from tempr.jobs.webhooks import CallbackTarget, backoff_s, resolve_callback, signed_headers
from workers import metrics
from workers.app import app
from workers.resources import get_resources


def _post(target: CallbackTarget, body: bytes, headers: dict[str, str], timeout: float) -> httpx.Response:
    """POST to the checked address itself; Host and SNI keep the name (certificates still verify).

    trust_env=False: a proxy from the environment would bypass the callback-host check."""
    extensions = {"sni_hostname": target.host} if target.url.startswith("https:") else {}
    with httpx.Client(trust_env=False, follow_redirects=False, timeout=timeout) as client:
        return client.post(
            target.pinned_url(),
            content=body,
            headers={**headers, "Host": target.host_header()},
            extensions=extensions,
        )


@app.task(name="tempr.webhooks.deliver", bind=True, acks_late=True, max_retries=None)
def deliver(self: Any, job_id: str, url: str, payload: dict[str, Any]) -> dict[str, Any]:
    res = get_resources()
    s = res.settings
    attempt = int(self.request.retries) + 1
    record: dict[str, Any] = {"attempt": attempt, "at": time.time(), "ok": False, "status_code": None, "error": None}
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    retryable = False
    try:
        secret = webhook_secret_for(res.engine, s, (job_store().get(job_id) or {}).get("tenant"))
        if not secret:
            raise ValidationError(
                "no webhook secret: the job has no tenant and TEMPR_WEBHOOK_SECRET is unset", field="callback_url"
            )
        target = resolve_callback(
            url, allow_link_local=s.webhook_allow_link_local, allow_networks=s.webhook_allow_networks
        )
        headers = signed_headers(body, secret, job_id=job_id, attempt=attempt)
        started = time.perf_counter()
        try:
            response = _post(target, body, headers, s.webhook_timeout_s)
            record["status_code"] = response.status_code
            record["ok"] = 200 <= response.status_code < 300
            retryable = response.status_code >= 500 or response.status_code in (408, 429)
            if not record["ok"]:
                record["error"] = f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:
            record["error"] = f"{type(exc).__name__}: {exc}"
            retryable = True
        record["elapsed_ms"] = ms_since(started)
    except ValidationError as exc:
        record["error"] = exc.message
        record["delivery"] = "refused"
    final = record["ok"] or not retryable or attempt >= s.webhook_max_attempts
    record.setdefault("delivery", "delivered" if record["ok"] else ("failed" if final else "retrying"))
    job_store().add_delivery(job_id, record)
    metrics.WEBHOOKS.labels(record["delivery"] if final else "retry").inc()
    if not final:
        raise self.retry(
            countdown=backoff_s(attempt, base=s.webhook_backoff_base_s, cap=s.webhook_backoff_max_s),
            max_retries=s.webhook_max_attempts - 1,
        )
    return record


@app.task(name="tempr.webhooks.watchdog", acks_late=True)
def watchdog(job_id: str) -> str:
    job = job_store().get(job_id)
    if job is None or job["status"] in TERMINAL:
        return "ended" if job else "unknown"
    env = JobEnvelope(
        job_id=job_id,
        bank_id=job.get("bank_id"),
        deadline=float(job.get("deadline") or time.time()),
        enqueued_at=float(job.get("created_at") or time.time()),
        callback_url=job.get("callback_url"),
    )
    timeout = RecallTimeout(f"recall {job_id} did not finish before its deadline")
    fail_job(job_ends(), env, timeout, store_under_job_id=True)
    return "timed out"
