"""The real stack the fault matrix breaks: embedded PostgreSQL and Redis, two detached workers
(recall queues on a prefork pool, webhooks on a threads pool, as `tempr services up` starts them),
the HTTP gateway, and optionally a private RabbitMQ node as the broker.

Everything lives in its own state folder and is stopped by the pids this module started; the
machine's own RabbitMQ (if any) is never touched: the broker fault runs against a node of its own
on a free port, started with the Debian ``rabbitmq-server`` script.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from config.errors import ServiceError
from config.settings import Settings
from tempr.services import manager, process
from tempr.services.workers import RECALL_QUEUES, WEBHOOK_POOL, WEBHOOK_QUEUES, DetachedWorkers

REPO = Path(__file__).resolve().parents[1]
SAMPLE_BANK = REPO / "tempr" / "data" / "sample_bank.jsonl"


def sample_facts() -> list[dict[str, object]]:
    """The sample bank's facts (what `make demo` ingests), as the ingest route takes them."""
    return [json.loads(line) for line in SAMPLE_BANK.read_text().splitlines() if line.strip()]


children = process.children


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@dataclass
class PrivateRabbit:
    """A RabbitMQ node of our own (its own name, port, data), for stopping and starting at will."""

    root: Path
    port: int = field(default_factory=process.free_port)
    name: str = field(default_factory=lambda: f"tempr-faults-{os.getpid()}@localhost")

    @property
    def url(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.port}//"

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            "RABBITMQ_NODENAME": self.name,
            "RABBITMQ_CONFIG_FILE": str(self.root / "rabbitmq.conf"),
            "RABBITMQ_CONF_ENV_FILE": str(self.root / "env.conf"),
            "RABBITMQ_MNESIA_BASE": str(self.root / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.root / "log"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.root / "enabled_plugins"),
            "RABBITMQ_DIST_PORT": str(process.free_port()),
        }

    def start(self, timeout: float = 90.0) -> None:
        server = shutil.which("rabbitmq-server")
        if not server:
            raise ServiceError("no rabbitmq-server on PATH")
        for sub in ("mnesia", "log"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.root / "rabbitmq.conf").write_text(f"listeners.tcp.local = 127.0.0.1:{self.port}\n")
        (self.root / "enabled_plugins").write_text("[].\n")
        if process.running_as_root():  # Debian's script runs the node as the rabbitmq user
            subprocess.run(["chown", "-R", "rabbitmq:rabbitmq", str(self.root)], check=False)
        with open(self.root / "server.out", "ab") as out:
            subprocess.Popen([server], env=self._env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        process.wait_until(lambda: process.port_answers(self.port), timeout=timeout, what="the private RabbitMQ")

    def ctl(self, *args: str) -> None:
        subprocess.run(["rabbitmqctl", "-n", self.name, *args], capture_output=True, timeout=120, check=False)

    def stop_app(self) -> None:
        self.ctl("stop_app")

    def start_app(self) -> None:
        self.ctl("start_app")

    def shutdown(self) -> None:
        self.ctl("stop")


@dataclass
class FaultStack:
    state: Path
    api_port: int = field(default_factory=process.free_port)
    broker_url: str | None = None
    gateway: subprocess.Popen[bytes] | None = None

    @property
    def settings(self) -> Settings:
        return Settings(state_dir=self.state)

    @property
    def workers(self) -> DetachedWorkers:
        return DetachedWorkers(self.state / "workers")

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def env(self) -> None:
        """This process's environment is what every child inherits.

        The fault matrix measures outages, not authentication: its private stack runs with
        TEMPR_AUTH=off (warned at every start) and a webhook secret for its tenant-less jobs."""
        os.environ["TEMPR_STATE_DIR"] = str(self.state)
        os.environ["TEMPR_AUTH"] = "off"
        os.environ.setdefault("TEMPR_WEBHOOK_SECRET", "fault-matrix-webhook-secret")
        if self.broker_url:
            os.environ["TEMPR_BROKER_URL"] = self.broker_url
        else:
            os.environ.pop("TEMPR_BROKER_URL", None)

    # -- lifecycle -----------------------------------------------------------------------
    def up(self) -> None:
        self.env()
        manager.up(self.settings)
        self.start_workers()
        self.start_gateway()

    def start_workers(self) -> None:
        self.workers.start("default", RECALL_QUEUES, concurrency=2)
        pool, size = WEBHOOK_POOL
        self.workers.start("webhooks", WEBHOOK_QUEUES, concurrency=size, pool=pool)
        self.wait_workers()

    def wait_workers(self, timeout: float = 120.0) -> None:
        from workers.app import make_app

        app = make_app(self.broker_url or manager.resolve_endpoints(self.settings).broker_url)
        host = socket.gethostname()
        wanted = {f"default@{host}", f"webhooks@{host}"}
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                replies = app.control.ping(destination=sorted(wanted), timeout=1.0) or []
                if wanted <= {k for r in replies for k in r}:
                    return
                time.sleep(0.5)
        finally:
            app.close()
        raise ServiceError(f"workers did not answer within {timeout:.0f} s; see {self.workers.root}/*.log")

    def start_gateway(self, timeout: float = 120.0) -> None:
        log = open(self.state / "gateway.log", "ab")  # noqa: SIM115 - handed to the child
        cmd = [sys.executable, "-m", "tempr.cli.main", "api", "--port", str(self.api_port), "--log-level", "warning"]
        self.gateway = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=REPO, env=os.environ.copy()
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.api}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.3)
        raise ServiceError("the gateway did not come up")

    def stop_gateway(self) -> None:
        if self.gateway is not None and self.gateway.poll() is None:
            os.killpg(self.gateway.pid, signal.SIGTERM)
            try:
                self.gateway.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.gateway.pid, signal.SIGKILL)
        self.gateway = None

    def down(self) -> None:
        self.stop_gateway()
        self.workers.stop_all()
        manager.purge(self.settings)

    # -- faults --------------------------------------------------------------------------
    def worker_pid(self, name: str = "default") -> int:
        return self.workers.running()[name]

    def kill_worker_child(self) -> int:
        kids = children(self.worker_pid())
        if not kids:
            raise ServiceError("the worker has no pool children")
        os.kill(kids[0], signal.SIGKILL)
        return kids[0]

    def kill_worker_parent(self) -> list[int]:
        parent = self.worker_pid()
        kids = children(parent)
        os.kill(parent, signal.SIGKILL)
        return kids

    def restart_worker(self, leftovers: list[int]) -> None:
        """What a supervisor does after the parent died: clear its orphans, start it again."""
        for pid in leftovers:
            if process.pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
        self.workers.pidfile("default").unlink(missing_ok=True)
        self.workers.start("default", RECALL_QUEUES, concurrency=2)

    def stop_redis(self) -> None:
        manager.local_redis(self.settings).down()

    def start_redis(self) -> None:
        manager.local_redis(self.settings).up()

    def stop_postgres(self) -> None:
        manager.embedded_postgres(self.settings).down()

    def start_postgres(self) -> None:
        manager.embedded_postgres(self.settings).up()


@contextmanager
def private_stack(prefix: str, stack_cls: type[FaultStack] = FaultStack) -> Iterator[FaultStack]:
    """A private stack in a fresh state folder, up for the block, then down and its folder removed.

    This process's environment is pointed at the folder first, so what it imports afterwards
    (settings, resources) talks to this stack."""
    state = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.update({"TEMPR_STATE_DIR": str(state), "PROMETHEUS_MULTIPROC_DIR": str(state / "metrics")})
    stack = stack_cls(state)
    try:
        stack.up()
        yield stack
    finally:
        stack.down()
        shutil.rmtree(state, ignore_errors=True)
