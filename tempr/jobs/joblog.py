"""The one INFO line a worker writes per job, when the job ends (succeeded or failed).

A worker at ``--loglevel INFO`` writes one line per recall or ingest job and nothing per task
(Celery's per-task "received" / "succeeded: <return value>" lines are moved to DEBUG by
``workers.job_context``), so the log grows with the number of jobs, not with their answers::

    [...: INFO/ForkPoolWorker-1] job=6c1e... recall succeeded bank=demo cache=miss total_ms=129
    [...: INFO/ForkPoolWorker-2] job=9f0a... recall succeeded bank=demo cache=miss total_ms=812 degraded=graph
    [...: INFO/ForkPoolWorker-1] job=77b2... recall failed bank=demo error=RecallTimeout total_ms=30012
    [...: INFO/ForkPoolWorker-2] job=e41d... ingest succeeded bank=alice facts=250 total_ms=3120

The job id comes from the log format (``job=%(job_id)s``, set while a task of the job runs). The
same fields travel on the record as ``record.tempr_job`` (a dict) for structured log handlers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

log = logging.getLogger("tempr.jobs")


def log_job_end(
    kind: str,
    outcome: str,
    *,
    bank_id: str | None,
    total_ms: float | None,
    error: BaseException | str | None = None,
    cache: str | None = None,
    degraded: Iterable[str] = (),
    **counts: Any,
) -> None:
    """Write the job's line: ``<kind> <outcome> bank=… [cache=…] [error=Class] [k=v…] total_ms=… [degraded=…]``."""
    fields: dict[str, Any] = {"kind": kind, "outcome": outcome, "bank": bank_id or "-"}
    if cache:
        fields["cache"] = cache
    if error is not None:
        fields["error"] = error if isinstance(error, str) else type(error).__name__
    fields.update({k: v for k, v in counts.items() if v is not None})
    if total_ms is not None:
        fields["total_ms"] = round(total_ms)
    slow = sorted(degraded)
    if slow:
        fields["degraded"] = ",".join(slow)
    text = " ".join(f"{k}={v}" for k, v in fields.items() if k not in ("kind", "outcome"))
    log.info("%s %s %s", kind, outcome, text, extra={"tempr_job": fields})
