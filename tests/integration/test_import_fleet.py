"""Imports through the ingest workers: the CLI (fleet by default, --via-workers, --in-process, the
in-process fallback when no ingest worker answers), the HTTP route, progress, a worker killed mid-import."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import extra_worker, redis_db_url, serve_api
from sqlalchemy import text

from bench import synthetic
from tempr.ingest import fleet

pytestmark = pytest.mark.integration
_CLI = [sys.executable, "-m", "tempr.cli.main", "ingest", "--bank"]


def _write(path: Path, n: int, *, bad_line: int | None = None) -> Path:
    with path.open("w") as out:
        for i in range(n):
            fact = synthetic.fact(i)
            fact["id"] = f"f{i}"
            out.write(json.dumps(fact) + "\n" if i + 1 != bad_line else '{"text": "x", "occurred_start": "soon"}\n')
    return path


def _count(resources: Any, sql: str, **params: object) -> int:
    with resources.engine.connect() as conn:
        return int(conn.execute(text(sql), params).scalar_one())


def _units(resources: Any, bank: str) -> int:
    return _count(resources, "SELECT count(*) FROM memory_units WHERE bank_id = :b", b=bank)


def test_cli_via_workers_imports_in_chunks(resources: Any, worker: Path, bank_id: str, tmp_path: Path) -> None:
    path = _write(tmp_path / "f.jsonl", 250)
    done = subprocess.run(
        [*_CLI, bank_id, str(path), "--via-workers", "--chunk-facts", "100", "--json"],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["inserted"] == 250 and report["import_id"].startswith("import-")
    assert _units(resources, bank_id) == 250
    assert _count(resources, "SELECT chunks_total FROM import_jobs WHERE id = :i", i=report["import_id"]) == 3


def test_cli_via_workers_bad_line_queues_nothing(resources: Any, worker: Path, bank_id: str, tmp_path: Path) -> None:
    path = _write(tmp_path / "f.jsonl", 120, bad_line=117)
    done = subprocess.run(
        [*_CLI, bank_id, str(path), "--via-workers"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "line 117" in done.stderr and "occurred_start" in done.stderr
    assert "Traceback" not in done.stderr
    assert _count(resources, "SELECT count(*) FROM import_jobs WHERE bank_id = :b", b=bank_id) == 0


def test_cli_uses_the_fleet_by_default(resources: Any, worker: Path, bank_id: str, tmp_path: Path) -> None:
    """No flag, an ingest worker answering: the file goes through the workers (an import job, split
    over the cores), nothing is said on stderr about running in-process; stdin works too."""
    path = _write(tmp_path / "f.jsonl", 150)
    done = subprocess.run([*_CLI, bank_id, str(path), "--json"], capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["import_id"].startswith("import-") and report["inserted"] == 150
    assert set(report["timeline"]) == {"probe", "submit", "staging", "publish", "chunks"}
    chunk = fleet.chunk_size(150, resources.settings.ingest_chunk_facts, os.cpu_count())
    assert report["timeline"]["chunks"] == -(-150 // chunk)
    assert "in this process" not in done.stderr
    assert _units(resources, bank_id) == 150
    more = _write(tmp_path / "g.jsonl", 160).read_text()  # f0..f149 again (skipped) and 10 new facts
    piped = subprocess.run([*_CLI, bank_id, "-", "--json"], input=more, capture_output=True, text=True, timeout=280)
    assert piped.returncode == 0, piped.stderr[-3000:]
    again = json.loads(piped.stdout.strip().splitlines()[-1])
    assert again["import_id"].startswith("import-") and (again["inserted"], again["skipped"]) == (10, 150)
    assert _units(resources, bank_id) == 160


def test_cli_in_process_skips_the_fleet(resources: Any, worker: Path, bank_id: str, tmp_path: Path) -> None:
    path = _write(tmp_path / "f.jsonl", 30)
    done = subprocess.run(
        [*_CLI, bank_id, str(path), "--in-process", "--json"], capture_output=True, text=True, timeout=280
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "import_id" not in report and report["inserted"] == 30
    assert _count(resources, "SELECT count(*) FROM import_jobs WHERE bank_id = :b", b=bank_id) == 0


def test_cli_without_an_ingest_worker_falls_back_or_refuses(
    resources: Any, stack: Any, worker: Path, bank_id: str, tmp_path: Path
) -> None:
    """A broker no worker listens on (another Redis database): the default ingests in this process
    and says so in one stderr line; --via-workers refuses, naming `tempr services up`, and leaves nothing."""
    env = {**os.environ, "TEMPR_BROKER_URL": redis_db_url(stack.redis_url, 9)}
    os.utime(worker.parent / "test.pid", (0, 0))  # the session's worker is not one that is starting up
    path = _write(tmp_path / "f.jsonl", 30)
    forced = subprocess.run(
        [*_CLI, bank_id, str(path), "--via-workers"], capture_output=True, text=True, timeout=120, env=env
    )
    assert forced.returncode == 1, forced.stdout + forced.stderr
    assert "tempr services up" in forced.stderr and "ingest" in forced.stderr and "Traceback" not in forced.stderr
    assert "waiting for" not in forced.stderr
    assert _count(resources, "SELECT count(*) FROM import_jobs WHERE bank_id = :b", b=bank_id) == 0
    assert _units(resources, bank_id) == 0
    done = subprocess.run([*_CLI, bank_id, str(path), "--json"], capture_output=True, text=True, timeout=280, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    said = [ln for ln in done.stderr.splitlines() if "in this process" in ln]
    assert len(said) == 1 and "tempr services up" in said[0], done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert "import_id" not in report and report["inserted"] == 30
    assert _units(resources, bank_id) == 30


@pytest.fixture(scope="module")
def api(resources: Any, worker: Path, make_key: Any) -> Iterator[httpx.Client]:
    key = make_key("t-http").key
    with (
        serve_api(resources) as url,
        httpx.Client(base_url=url, timeout=60, trust_env=False, headers={"Authorization": f"Bearer {key}"}) as client,
    ):
        yield client


def test_http_import_reports_progress_and_publishes(
    api: httpx.Client, resources: Any, bank_id: str, tmp_path: Path
) -> None:
    body = _write(tmp_path / "f.jsonl", 120).read_bytes()
    r = api.post(f"/v1/default/banks/{bank_id}/imports", content=body, headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 202, r.text
    job = r.json()["job_id"]
    deadline = time.monotonic() + 240
    while True:
        status = api.get(f"/v1/jobs/{job}").json()
        assert status["progress"]["facts_total"] == 120
        if status["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert status["status"] == "succeeded", status
    assert status["progress"]["facts_done"] == 120 and status["result"]["inserted"] == 120
    assert _units(resources, bank_id) == 120
    bad = _write(tmp_path / "g.jsonl", 10, bad_line=4).read_bytes()
    r = api.post(f"/v1/default/banks/{bank_id}-bad/imports", content=bad)
    assert r.status_code == 422 and r.json()["line"] == 4 and r.json()["field"] == "occurred_start"
    assert api.get("/v1/jobs/import-nosuchthing").status_code == 404


def _pool_children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def test_killed_worker_mid_import_completes_after_redelivery(
    resources: Any, stack: Any, bank_id: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The pool process staging a chunk is SIGKILLed: its chunk is redelivered (late acks), the import
    then completes, and the bank holds the whole file (or, had it failed, none of it)."""
    path = _write(tmp_path / "f.jsonl", 600)
    with extra_worker(
        "ingest-kill",
        tmp_path_factory.mktemp("ingest-kill"),
        env={},
        queues="ingest",
        pool="prefork",
        concurrency=1,
        broker_url=redis_db_url(stack.redis_url, 7),
        result_backend=resources.endpoints.result_backend,
    ) as w:
        import_id = fleet.submit_file(
            path, bank_id, resources.engine, w.app, chunk_facts=100, space=resources.embedder.space
        )
        killed_while_open = False
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            status = fleet.import_status(import_id, resources.engine)
            assert status is not None
            if status["progress"]["chunks_done"] >= 1:
                for child in _pool_children(w.process.pid):
                    os.kill(child, signal.SIGKILL)
                killed_while_open = status["status"] == "running"
                break
            time.sleep(0.2)
        assert _units(resources, bank_id) == 0, "nothing is visible before publish"
        final = fleet.wait(import_id, resources.engine, poll_s=0.5)
    assert killed_while_open, "the import finished before the kill: nothing was tested"
    if final["status"] == "succeeded":
        assert _units(resources, bank_id) == 600
    else:
        assert _units(resources, bank_id) == 0
    assert final["status"] == "succeeded", final
