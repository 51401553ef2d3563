"""The job id on every log line and every task message of a recall (Celery signals, no task code).

Only the start task's id is the job id; the strategies, the fusion callback, rerank, finish and
the webhook have task ids of their own. So the job id travels as a message header
(``tempr_job_id``), added whenever a task is published from inside a job (the chord callback too:
the last strategy publishes it) and read back when the task starts. While a task runs, a
ContextVar holds the id; a log-record factory stamps every record with ``job_id`` ("-" outside a
job), so any formatter can print ``%(job_id)s`` (the worker's formats do, see ``LOG_FORMATS``).
The same handlers time each task per queue for the metrics (``workers.metrics``).

Logging policy (``install_worker_logging``): at ``--loglevel INFO`` a worker writes one line per
job (``tempr.jobs.joblog``: recalls from ``tempr.jobs.outcome``, ingests and imports from the
post-run handler here) and nothing per task. Celery's per-task INFO lines ("received",
"succeeded in …: <return value>", "ignored" for ``replace()``) go to DEBUG (``--loglevel DEBUG``
shows them); its "retry" and "Discarding revoked task" lines, and a failure Celery counts as
expected, go up to WARNING; unexpected failures stay at ERROR.
"""

from __future__ import annotations

import logging
import time
from contextvars import ContextVar, Token
from typing import Any

from celery.app import trace as celery_trace
from celery.signals import before_task_publish, task_failure, task_postrun, task_prerun, task_retry, task_revoked

from tempr.jobs.joblog import log_job_end

JOB_HEADER = "tempr_job_id"
SENT_HEADER = "tempr_sent_at"
# the first argument is the job id (an import's id for its chunks and publish)
_JOB_ARG_TASKS = (
    "tempr.webhooks.deliver",
    "tempr.webhooks.watchdog",
    "tempr.ingest.stage_chunk",
    "tempr.ingest.publish",
)
_OWN_ID_TASKS = ("tempr.recall.start", "tempr.ingest.facts")  # the task id is the job id
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


_TO_DEBUG = frozenset({celery_trace.LOG_RECEIVED, celery_trace.LOG_SUCCESS, celery_trace.LOG_IGNORED})
_TO_WARNING = frozenset(
    {
        celery_trace.LOG_RETRY,
        celery_trace.LOG_FAILURE.strip(),  # logged at INFO only for exceptions a task declares expected
        "Task %s[%s] retry: %s",  # celery.worker.request, a retry decided in the pool
        "Discarding revoked task: %s[%s]",  # a message past its deadline (``expires``), dropped unrun
    }
)
TASK_LINE_LOGGERS = ("celery.app.trace", "celery.worker.strategy", "celery.worker.request")


class TaskLineLevels(logging.Filter):
    """Re-levels Celery's per-task lines (matched by their format strings, Celery's public
    ``LOG_*`` constants): chatty ones to DEBUG, kept only when that logger is enabled for DEBUG
    (``--loglevel DEBUG``); retries and drops to WARNING. Every other record passes unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or not isinstance(record.msg, str):
            return True
        if record.msg in _TO_DEBUG:
            _relevel(record, logging.DEBUG)
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        if record.msg in _TO_WARNING:
            _relevel(record, logging.WARNING)
        return True


def _relevel(record: logging.LogRecord, level: int) -> None:
    record.levelno, record.levelname = level, logging.getLevelName(level)


def install_worker_logging() -> None:
    """The worker's logging: ``job_id`` on every record, Celery's per-task lines re-levelled
    (idempotent; the filters sit on Celery's own loggers, which its log set-up leaves alone)."""
    install_log_records()
    for name in TASK_LINE_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, TaskLineLevels) for f in logger.filters):
            logger.addFilter(TaskLineLevels())


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
    if name in _OWN_ID_TASKS:
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
def _on_postrun(
    task_id: str | None = None,
    task: Any = None,
    args: Any = None,
    retval: Any = None,
    state: str | None = None,
    **_: Any,
) -> None:
    from workers import metrics

    held = _tokens.pop(task_id or "", None)
    if held is None:
        return
    token, began = held
    if task is not None:
        elapsed = time.perf_counter() - began
        metrics.TASK_SECONDS.labels(queue_of(task), task.name).observe(elapsed)
        _log_ingest_end(task.name, args, retval, state, elapsed)
    try:
        _current.reset(token)
    except ValueError:  # set in another context (should not happen); clear instead
        _current.set(None)


def _log_ingest_end(name: str, args: Any, retval: Any, state: str | None, elapsed_s: float) -> None:
    """The job line of an ingest (one ``tempr.ingest.facts`` task) or an import (its publish, or
    a chunk or publish that failed for good: either fails the import). Retries log nothing here."""
    if name not in ("tempr.ingest.facts", "tempr.ingest.publish", "tempr.ingest.stage_chunk"):
        return
    kind = "ingest" if name == "tempr.ingest.facts" else "import"
    report = retval if isinstance(retval, dict) else {}
    bank = report.get("bank_id") or (args[1] if name == "tempr.ingest.stage_chunk" and len(args or ()) > 1 else None)
    if name == "tempr.ingest.facts" and args:
        bank = bank or args[0]
    if state == "FAILURE":
        log_job_end(kind, "failed", bank_id=bank, error=retval, total_ms=elapsed_s * 1000)
    elif state == "SUCCESS" and report.get("error") and name != "tempr.ingest.stage_chunk":  # refused input
        log_job_end(kind, "failed", bank_id=bank, error=str(report["error"]), total_ms=elapsed_s * 1000)
    elif state == "SUCCESS" and name != "tempr.ingest.stage_chunk":
        log_job_end(kind, "succeeded", bank_id=bank, facts=report.get("inserted"), total_ms=elapsed_s * 1000)


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
