"""`tempr services status` shows, per worker, its queues, pool, concurrency, pid and ping."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def _status(*extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tempr.cli.main", "services", "status", *extra],
        env={**os.environ},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_status_describes_the_session_worker(worker: Path) -> None:
    done = _status("--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    row = next(w for w in report["workers"] if w["name"] == "test")
    assert row["ping"] is True and row["started_here"] is True and row["pid"] > 0
    assert row["pool"] == "prefork" and row["concurrency"] == 2
    assert {"retrieve", "fuse", "rerank", "ingest", "webhooks"} <= set(row["queues"])
    table = _status()
    assert table.returncode == 0, table.stderr
    line = next(ln for ln in table.stdout.splitlines() if ln.startswith("test "))
    assert str(row["pid"]) in line and " ok " in line and "prefork" in line and "retrieve" in line
