"""`tempr services up|down|status` against real processes, in a private state folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from tempr.services.redis_server import LocalRedis

pytestmark = pytest.mark.integration


def _tempr(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TEMPR_STATE_DIR": str(state)}
    return subprocess.run(
        [sys.executable, "-m", "tempr.cli.main", *args], env=env, capture_output=True, text=True, timeout=180
    )


def test_up_twice_is_harmless_and_down_stops_only_its_own(tmp_path: Path) -> None:
    state = tmp_path / "state"
    bystander = LocalRedis(tmp_path / "bystander")  # a Redis tempr did not start
    bystander.up()
    try:
        first = _tempr(state, "services", "up", "--no-worker")
        assert first.returncode == 0, first.stderr
        status1 = json.loads(_tempr(state, "services", "status").stdout)
        second = _tempr(state, "services", "up", "--no-worker")
        assert second.returncode == 0, second.stderr
        status2 = json.loads(_tempr(state, "services", "status").stdout)
        assert status1["postgres"]["running"] and status1["redis"]["running"]
        assert status1["postgres"]["pid"] == status2["postgres"]["pid"]  # not restarted
        assert status1["redis"]["pid"] == status2["redis"]["pid"]
        down = _tempr(state, "services", "down")
        assert down.returncode == 0 and "postgres" in down.stdout and "redis" in down.stdout
        status3 = json.loads(_tempr(state, "services", "status").stdout)
        assert not status3["postgres"]["running"] and not status3["redis"]["running"]
        assert redis.Redis.from_url(bystander.status().url).ping()  # untouched
        again = _tempr(state, "services", "down")
        assert again.returncode == 0 and "nothing was running" in again.stdout
    finally:
        _tempr(state, "services", "down")
        bystander.down()
