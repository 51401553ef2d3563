"""Shared helpers for the execution tests: extra worker processes with their own env, a shared
sample bank, a tiny cross-encoder, and a local webhook receiver.

An extra worker gets its own broker (another Redis database of the session's Redis, or RabbitMQ)
so the session worker never takes its tasks; results still go to the session's result backend.
Everything started here is stopped by pid when its context ends.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tempr.services.workers import DEFAULT_QUEUES, worker_command

_SAMPLE_BANKS: dict[str, str] = {}


def sample_bank(resources: Any, sample_facts: Path) -> str:
    """The sample bank, ingested once per test process and shared by read-only tests (also the
    ``sample_bank`` fixture)."""
    if "bank" not in _SAMPLE_BANKS:
        from tempr.ingest.facts import parse_jsonl
        from tempr.ingest.pipeline import IngestDeps, ingest_facts

        bank = "sample"  # fixed: memory ids derive from the bank id, and RRF ties are broken by id
        facts = list(parse_jsonl(sample_facts.read_text().splitlines()))
        ingest_facts(
            bank, facts, IngestDeps(resources.engine, resources.embedder, resources.extractor, resources.settings)
        )
        _SAMPLE_BANKS["bank"] = bank
    return _SAMPLE_BANKS["bank"]


@dataclass
class ExtraWorker:
    name: str
    app: Any
    process: subprocess.Popen[bytes]
    log: Path

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


@contextmanager
def extra_worker(
    name: str,
    tmp: Path,
    *,
    env: dict[str, str],
    broker_url: str,
    result_backend: str,
    queues: str = DEFAULT_QUEUES,
    pool: str = "threads",
    concurrency: int = 4,
    ready_timeout: float = 180.0,
    loglevel: str = "INFO",
) -> Iterator[ExtraWorker]:
    from workers.app import make_app

    tmp.mkdir(parents=True, exist_ok=True)
    log = tmp / f"{name}.log"
    child_env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TEMPR_BROKER_URL": broker_url,
        "TEMPR_RESULT_BACKEND": result_backend,
        **env,
    }
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            worker_command(queues, concurrency=concurrency, pool=pool, name=name, loglevel=loglevel),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=child_env,
            cwd=Path(__file__).resolve().parents[2],
        )
    app = make_app(broker_url, result_backend)
    worker = ExtraWorker(name, app, proc, log)
    try:
        deadline = time.monotonic() + ready_timeout
        while not app.control.ping(destination=[f"{name}@{socket.gethostname()}"], timeout=0.5):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"extra worker {name} did not start:\n{worker.log_tail()}")
        yield worker
    finally:
        stop_process(proc)
        app.close()


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def ask(ctx: Any, bank: str, query: str, when: str = "2024-09-15T12:00:00+00:00", **kw: object) -> Any:
    """An in-process recall of ``query`` over ``bank`` as of ``when``."""
    from tempr.recall.models import RecallRequest
    from tempr.recall.pipeline import recall

    return recall(bank, RecallRequest.model_validate({"query": query, "query_timestamp": when, **kw}), ctx)


def entry_context(resources: Any, bank: str) -> Any:
    """The in-process RecallContext a worker builds for ``bank`` (the learned ranker, the row
    cache, the query embedded in the bank's own vector space), so an answer through the fleet can
    be compared with the entry point's exactly."""
    from tempr.store.banks_repo import bank_space
    from workers.resources import recall_context

    with resources.engine.connect() as conn:
        space = bank_space(conn, bank)
    return recall_context(embedder=True, resources=resources, space=space)


def redis_db_url(redis_url: str, db: int) -> str:
    return f"{redis_url.rstrip('/')}/{db}"


@dataclass
class Receiver:
    """A webhook receiver on 127.0.0.1: records every POST; can answer failures first."""

    port: int
    fail_first: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    _event: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.calls.append({"headers": dict(self.headers), "body": body})
                failing = len(receiver.calls) <= receiver.fail_first
                self.send_response(503 if failing else 200)
                self.end_headers()
                if not failing:
                    receiver._event.set()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def wait(self, timeout: float) -> dict[str, Any]:
        if not self._event.wait(timeout):
            raise AssertionError(f"no successful delivery within {timeout} s (calls: {len(self.calls)})")
        return self.calls[-1]

    def payload(self, call: dict[str, Any]) -> dict[str, Any]:
        return dict(json.loads(call["body"]))

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@contextmanager
def serve_api(resources: Any) -> Iterator[str]:
    """The gateway (create_app over the session's resources) on a free port in a thread; yields its URL."""
    import uvicorn

    from tempr.api.app import create_app
    from tempr.services.process import free_port

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(resources=resources), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for(lambda: server.started, timeout=30, what="uvicorn")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def ensure_bank(resources: Any, *banks: str) -> None:
    """Create the banks (one fact each): recall on a bank that does not exist is a 404."""
    from tempr.ingest.facts import parse_array
    from tempr.ingest.pipeline import IngestDeps, ingest_facts

    deps = IngestDeps(resources.engine, resources.embedder, resources.extractor, resources.settings)
    for bank in banks:
        ingest_facts(bank, parse_array([{"id": "seed", "text": "Ann likes green tea."}]), deps)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def wait_for(check: Any, *, timeout: float, interval: float = 0.05, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
