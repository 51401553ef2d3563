"""The CLI and the worker fleet, for real: `tempr recall` uses a running worker by default and falls
back to this process (one stderr line) when none answers; the worker logs one INFO line per job.

The session worker (``worker`` fixture) runs at ``--loglevel INFO`` and writes its log to a file;
the fallback case points the CLI at a Redis database no worker consumes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
QUERY = "Where does Alice work?"


def _tempr(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tempr.cli.main", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_recall_uses_the_running_fleet_by_default(worker: Path, sample_bank: str) -> None:
    done = _tempr("recall", "--bank", sample_bank, QUERY, "--json")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no fallback notice
    response = json.loads(done.stdout)
    assert response["results"]
    assert "queue.start" in response["timings_ms"]  # waited in the start queue: a worker answered
    assert response["cache"] in ("hit", "miss")  # set only where a job ends (succeed_job)


def test_without_a_worker_recall_runs_in_process_and_says_so(resources: Any, sample_bank: str) -> None:
    idle_broker = f"{resources.endpoints.redis_url}/9"  # same Redis, a database no worker consumes
    done = _tempr("recall", "--bank", sample_bank, QUERY, "--json", TEMPR_BROKER_URL=idle_broker)
    assert done.returncode == 0, done.stderr
    notice = [line for line in done.stderr.splitlines() if line.startswith("tempr recall:")]
    assert (
        len(notice) == 1
        and "no worker consuming the 'fuse' queue answered" in notice[0]
        and "`tempr services up`" in notice[0]
    )
    response = json.loads(done.stdout)
    assert response["results"] and "queue.start" not in response["timings_ms"]

    refused = _tempr("recall", "--bank", sample_bank, QUERY, "--via-workers", TEMPR_BROKER_URL=idle_broker)
    assert refused.returncode == 1 and "`tempr services up`" in refused.stderr
    assert "Traceback" not in refused.stderr


def _lines_of(log: Path, job_id: str, *, wait_s: float = 10.0) -> list[str]:
    deadline = time.monotonic() + wait_s
    while True:
        lines = [line for line in log.read_text(errors="replace").splitlines() if f"job={job_id} " in line]
        if any(": INFO/" in line for line in lines) or time.monotonic() > deadline:
            return lines
        time.sleep(0.2)


def test_the_worker_logs_one_info_line_per_job_and_no_answers(
    resources: Any, worker: Path, sample_bank: str, bank_id: str
) -> None:
    from tempr.auth import local_key
    from tempr.client import recall_async
    from workers.app import app

    queries = [QUERY, "Who attended Alice's thesis defense?", QUERY]  # the third: a cache hit unless degraded
    jobs = []
    for query in queries:
        job = recall_async(sample_bank, {"query": query})
        job.get(timeout=60)
        jobs.append(job.id)
    ingest = app.send_task(
        "tempr.ingest.facts",
        kwargs={
            "bank_id": bank_id,
            "facts": [{"text": "Dana moved to Lisbon in 2021."}],
            "api_key": local_key(resources.settings),
        },
    )
    ingest.get(timeout=120)

    line_format = rf"recall succeeded bank={sample_bank} cache=(hit|miss) total_ms=\d+( degraded=[a-z,]+)?$"
    for job_id in jobs:
        info = [line for line in _lines_of(worker, job_id) if ": INFO/" in line]
        assert len(info) == 1, info
        assert re.search(line_format, info[0]), info[0]
    (line,) = [line for line in _lines_of(worker, ingest.id) if ": INFO/" in line]
    assert re.search(rf"ingest succeeded bank={bank_id} facts=1 total_ms=\d+$", line), line

    log = worker.read_text(errors="replace")
    assert " succeeded in " not in log  # Celery's per-task success line, with the return value
    assert "] received" not in log and "'results':" not in log
