"""The job id on every log line and every task message of a recall (Celery signals, no task code).

Only the start task's id is the job id; the strategies, the fusion callback, rerank, finish and
the webhook have task ids of their own. So the job id travels as a message header
(``tempr_job_id``), added whenever a task is published from inside a job (the chord callback too:
the last strategy publishes it) and read back when the task starts. While a task runs, a
ContextVar holds the id; a log-record factory stamps every record with ``job_id`` ("-" outside a
job), so any formatter can print ``%(job_id)s`` (the worker's formats do, see ``LOG_FORMATS``).
The same handlers time each task per queue for the metrics (``workers.metrics``).
"""

from __future__ import annotations

import logging
import time
from contextvars import ContextVar, Token
from typing import Any

from celery.signals import before_task_publish, task_failure, task_postrun, task_prerun, task_retry, task_revoked

JOB_HEADER = "tempr_job_id"
SENT_HEADER = "tempr_sent_at"
_JOB_ARG_TASKS = ("tempr.webhooks.deliver", "tempr.webhooks.watchdog")  # first argument is the job id
LOG_FORMATS = {
    "worker_log_format": "[%(asctime)s: %(levelname)s/%(processName)s] job=%(job_id)s %(message)s",
    "worker_task_log_format": (
        "[%(asctime)s: %(levelname)s/%(processName)s] job=%(job_id)s %(task_name)s[%(task_id)s]: %(message)s"
    ),
}

_current: ContextVar[str | None] = ContextVar("tempr_job_id", default=None)
_tokens: dict[str, tuple[Token[str | None], float]] = {}


def current_job_id() -> str | None:
    return _current.get()


def install_log_records() -> None:
    """Give every log record a ``job_id`` attribute (idempotent)."""
    factory = logging.getLogRecordFactory()
    if getattr(factory, "_tempr_job_id", False):
        return

    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        record.job_id = _current.get() or "-"
        return record

    make._tempr_job_id = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(make)


class JobIdFilter(logging.Filter):
    """For handlers built elsewhere: sets ``record.job_id`` if the factory did not."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "job_id"):
            record.job_id = _current.get() or "-"
        return True


def job_id_of(task: Any, task_id: str | None, args: Any) -> str | None:
    """The job a running task belongs to: its header, else what its name and arguments say."""
    found = task.request.get(JOB_HEADER) if task is not None else None
    if found:
        return str(found)
    name = getattr(task, "name", "")
    if name == "tempr.recall.start":
        return task_id
    if name in _JOB_ARG_TASKS and args:
        return str(args[0])
    return None


def queue_of(task: Any) -> str:
    if task is None:
        return "unknown"
    info = getattr(task.request, "delivery_info", None) or {}
    return str(info.get("routing_key") or "unknown")


@before_task_publish.connect
def _on_publish(sender: str | None = None, headers: dict[str, Any] | None = None, **_: Any) -> None:
    if headers is None:
        return
    job = _current.get() or (headers.get("id") if sender == "tempr.recall.start" else None)
    if job:
        headers[JOB_HEADER] = job
        _tag_current_span(job)
    headers.setdefault(SENT_HEADER, time.time())


@task_prerun.connect
def _on_prerun(task_id: str | None = None, task: Any = None, args: Any = None, **_: Any) -> None:
    from workers import metrics

    started = time.time()
    sent = task.request.get(SENT_HEADER) if task is not None else None
    if sent and not task.request.get("eta"):  # a countdown (retry backoff, watchdog) is not a queue wait
        metrics.TASK_WAIT.labels(queue_of(task)).observe(max(0.0, started - float(sent)))
    token = _current.set(job_id_of(task, task_id, args))
    if task_id:
        _tokens[task_id] = (token, time.perf_counter())


@task_postrun.connect
def _on_postrun(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    from workers import metrics

    held = _tokens.pop(task_id or "", None)
    if held is None:
        return
    token, began = held
    if task is not None:
        metrics.TASK_SECONDS.labels(queue_of(task), task.name).observe(time.perf_counter() - began)
    try:
        _current.reset(token)
    except ValueError:  # set in another context (should not happen); clear instead
        _current.set(None)


@task_failure.connect
def _on_failure(sender: Any = None, **_: Any) -> None:
    from workers import metrics

    metrics.TASK_EVENTS.labels(queue_of(sender), getattr(sender, "name", "unknown"), "failure").inc()


@task_retry.connect
def _on_retry(sender: Any = None, **_: Any) -> None:
    from workers import metrics

    metrics.TASK_EVENTS.labels(queue_of(sender), getattr(sender, "name", "unknown"), "retry").inc()


@task_revoked.connect
def _on_revoked(sender: Any = None, request: Any = None, expired: bool = False, **_: Any) -> None:
    """A message past its ``expires`` (the recall's deadline) is dropped unrun: count it."""
    from workers import metrics

    info = getattr(request, "delivery_info", None) or {}
    queue = str(info.get("routing_key") or "unknown")
    metrics.TASK_EVENTS.labels(queue, getattr(sender, "name", "unknown"), "expired" if expired else "revoked").inc()


def _tag_current_span(job: str) -> None:
    try:
        from opentelemetry import trace
    except ImportError:  # pragma: no cover - opentelemetry-api is a dependency
        return
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attribute("tempr.job_id", job)
