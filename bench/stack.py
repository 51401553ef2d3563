"""The services and Celery workers a benchmark runs against.

``services_up`` is ``tempr services up`` without its default worker (idempotent: a
running stack is reused). ``BenchWorkers`` starts detached workers under the state
folder's ``workers/`` with names of its own, waits until each answers a ping, and on
exit stops exactly those it started (by the pids it wrote), never anyone else's.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from config.errors import ServiceError
from config.settings import Settings, get_settings
from tempr.services import manager, process
from tempr.services.workers import DetachedWorkers


def services_up(settings: Settings | None = None) -> manager.Endpoints:
    """The services up, and with authentication on the local admin key too (as `make bench` runs
    `tempr keys local`), so `tempr bench latency|scale` work on a fresh state folder by themselves."""
    settings = settings or get_settings()
    endpoints = manager.up(settings)
    if settings.auth != "off":
        from tempr.auth import ensure_local_key
        from tempr.store.engine import make_engine

        assert endpoints.database_url is not None  # manager.up started or found the database
        engine = make_engine(endpoints.database_url)
        try:
            ensure_local_key(settings, engine)
        finally:
            engine.dispose()
    return endpoints


def workers_root(settings: Settings | None = None) -> Any:
    return (settings or get_settings()).state_dir.resolve() / "workers"


@dataclass
class WorkerSpec:
    name: str
    queues: str
    concurrency: int
    pool: str = "prefork"

    def describe(self) -> str:
        return f"{self.name}: {self.pool}×{self.concurrency} on {self.queues}"


@dataclass
class BenchWorkers:
    specs: list[WorkerSpec]
    settings: Settings = field(default_factory=get_settings)
    started: list[str] = field(default_factory=list)
    exclusive: bool = False
    """Be the only consumers of our queues: other workers on them would answer part of the run with
    their own settings (a quality run's fold models, say), so they pause while ours run."""
    paused: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.detached = DetachedWorkers(workers_root(self.settings))

    def start(self, timeout: float = 90.0) -> None:
        from workers.app import app

        running = self.detached.running()
        for spec in self.specs:
            if spec.name in running:
                raise ServiceError(
                    f"a worker named {spec.name!r} is already running (pid {running[spec.name]}); "
                    "stop it first (tempr services down)"
                )
            self.detached.start(spec.name, spec.queues, concurrency=spec.concurrency, pool=spec.pool)
            self.started.append(spec.name)
        host = socket.gethostname()
        wanted = {f"{s.name}@{host}" for s in self.specs}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            replies = app.control.ping(destination=sorted(wanted), timeout=1.0) or []
            answered = {k for r in replies for k in r}
            if wanted <= answered:
                if self.exclusive:
                    self._pause_foreign(app, wanted)
                return
            time.sleep(0.5)
        raise ServiceError(f"bench workers did not answer a ping within {timeout:.0f}s; see {self.detached.root}/*.log")

    def _pause_foreign(self, app: Any, ours: set[str]) -> None:
        """Other workers on our queues stop consuming them until ``stop`` (Celery's
        ``cancel_consumer``/``add_consumer``): `make bench` runs beside `services up`'s pools."""
        for name, queue in self.foreign_consumers(app, ours):
            app.control.cancel_consumer(queue, destination=[name], reply=True, timeout=2.0)
            self.paused.append((name, queue))
        left = self.foreign_consumers(app, ours)
        if left:
            self.stop()
            raise ServiceError(f"other workers still consume our queues: {left}; stop them (tempr services down)")
        if self.paused:
            print(
                "bench: paused " + ", ".join(f"{q} on {n}" for n, q in self.paused) + " for this run",
                file=sys.stderr,
            )

    def foreign_consumers(self, app: Any, ours: set[str]) -> list[tuple[str, str]]:
        """(worker, queue) for every worker not started here that consumes one of our queues."""
        queues = {q for s in self.specs for q in s.queues.split(",")}
        replies = app.control.inspect(timeout=1.0).active_queues() or {}
        return [
            (name, queue)
            for name, consumed in sorted(replies.items())
            if name not in ours
            for queue in sorted(queues & {q["name"] for q in consumed})
        ]

    def _resume_foreign(self) -> None:
        from workers.app import app

        for name, queue in self.paused:
            app.control.add_consumer(queue, destination=[name], reply=True, timeout=2.0)
        self.paused.clear()

    def stop(self, timeout: float = 30.0) -> None:
        if self.paused:
            self._resume_foreign()
        for name in reversed(self.started):
            pidfile = self.detached.pidfile(name)
            pid = process.read_pid(pidfile)
            if pid and process.pid_alive(pid):
                os.kill(pid, signal.SIGTERM)
                try:
                    process.wait_until(lambda p=pid: not process.pid_alive(p), timeout=timeout, what=f"worker {name}")
                except ServiceError:
                    os.kill(pid, signal.SIGKILL)
            pidfile.unlink(missing_ok=True)
        self.started.clear()

    def fleet(self) -> list[str]:
        """Every worker consuming the queues now: ours and any already running (e.g. `services up`'s)."""
        ours = {s.name for s in self.specs}
        paused = {n.split("@")[0] for n, _ in self.paused}
        others = [
            f"{n}: (started elsewhere, pid {p}{'; paused for this run' if n in paused else ''})"
            for n, p in self.detached.running().items()
            if n not in ours
        ]
        return [s.describe() for s in self.specs] + others


@contextmanager
def bench_workers(
    specs: list[WorkerSpec], settings: Settings | None = None, *, exclusive: bool = False
) -> Iterator[BenchWorkers]:
    fleet = BenchWorkers(specs, settings or get_settings(), exclusive=exclusive)
    try:
        fleet.start()
        yield fleet
    finally:
        fleet.stop()


def client_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("tempr.client") is not None


def clear_cache(bank_ids: list[str], settings: Settings | None = None) -> int:
    """Drop cached recall answers of the given (benchmark) banks only, so every timed recall is a miss."""
    import redis

    from tempr.jobs.keys import redis_key

    url = manager.resolve_endpoints(settings or get_settings()).cache_url
    if not url:
        return 0
    client = redis.Redis.from_url(url, socket_timeout=5)
    dropped = 0
    for bank in bank_ids:
        keys = list(client.scan_iter(match=redis_key("recall", bank) + ":*", count=1000))
        for lo in range(0, len(keys), 500):
            dropped += int(client.delete(*keys[lo : lo + 500]))
    return dropped


def default_fleet() -> list[WorkerSpec]:
    """The pools `tempr services up` starts (``fleet_layout``), named ``bench-*`` so a benchmark
    stops exactly the workers it started. Ingest and webhooks are left out: recall benchmarks do
    not use them (a fold's ingest runs in-process)."""
    from tempr.services.workers import fleet_layout

    return [
        WorkerSpec(f"bench-{p.name}", p.queues, p.concurrency, p.pool)
        for p in fleet_layout(cross_encoder=bool(get_settings().reranker_model))
        if p.name not in ("ingest", "webhooks")
    ]
