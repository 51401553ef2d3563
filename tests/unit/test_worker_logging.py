"""The worker's log policy: Celery's per-task lines at DEBUG, retries up to WARNING, one line per ingest.

Driven through Celery's own logging calls (``celery.app.trace.info``, the strategy's logger), so
the test breaks if a Celery upgrade renames the format strings the filter matches."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from celery.app import trace

from workers import job_context

_CTX = {"id": "t1", "name": "tempr.fuse.finish", "return_value": "{'results': [...]}", "runtime": 0.01}


@pytest.fixture(autouse=True)
def _installed() -> Iterator[None]:
    job_context.install_worker_logging()
    job_context.install_worker_logging()  # idempotent: one filter per logger
    for name in job_context.TASK_LINE_LOGGERS:
        assert sum(isinstance(f, job_context.TaskLineLevels) for f in logging.getLogger(name).filters) == 1
    yield


def _celery_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("celery.")]


def test_success_and_received_lines_are_dropped_at_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    trace.info(trace.LOG_SUCCESS, _CTX)
    logging.getLogger("celery.worker.strategy").info(trace.LOG_RECEIVED, _CTX)
    trace.info(trace.LOG_IGNORED, {**_CTX, "description": "ignored"})  # replace(): control flow
    assert _celery_lines(caplog) == []


def test_at_debug_they_are_kept_as_debug_lines(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    trace.info(trace.LOG_SUCCESS, _CTX)
    (line,) = _celery_lines(caplog)
    assert line.levelname == "DEBUG" and "succeeded in" in line.getMessage()


def test_retries_and_drops_go_up_to_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    trace.info(trace.LOG_RETRY, {**_CTX, "exc": "Retry in 1s"})
    logging.getLogger("celery.worker.request").info("Discarding revoked task: %s[%s]", "tempr.recall.start", "t1")
    logging.getLogger("celery.app.trace").info("something else")
    levels = [r.levelname for r in _celery_lines(caplog)]
    assert levels == ["WARNING", "WARNING", "INFO"]


def test_an_ingest_logs_one_line_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tempr.jobs")
    report = {"bank_id": "b", "inserted": 3, "received": 3}
    job_context._log_ingest_end("tempr.ingest.facts", ("b", []), report, "SUCCESS", 0.25)
    job_context._log_ingest_end("tempr.ingest.facts", ("b", []), None, "RETRY", 0.1)  # not the end
    job_context._log_ingest_end("tempr.ingest.facts", ("b", []), {"error": "ValidationError"}, "SUCCESS", 0.1)
    job_context._log_ingest_end("tempr.ingest.stage_chunk", ("i1", "b", 0, []), {"staged": 1}, "SUCCESS", 0.1)
    job_context._log_ingest_end("tempr.ingest.publish", ("i1",), RuntimeError("x"), "FAILURE", 0.1)
    lines = [r.getMessage() for r in caplog.records if r.name == "tempr.jobs"]
    assert lines == [
        "ingest succeeded bank=b facts=3 total_ms=250",
        "ingest failed bank=b error=ValidationError total_ms=100",
        "import failed bank=- error=RuntimeError total_ms=100",
    ]


def test_the_job_of_an_ingest_is_its_task_or_its_import() -> None:
    class Task:
        def __init__(self, name: str) -> None:
            self.name, self.request = name, {}

    assert job_context.job_id_of(Task("tempr.ingest.facts"), "t9", ()) == "t9"
    assert job_context.job_id_of(Task("tempr.ingest.publish"), "t8", ("imp-1",)) == "imp-1"
