"""Detached Celery workers that `tempr services up` starts (and `down` stops).

Each worker gets a pidfile and a log under ``<state>/workers``; ``down``
only signals pids from those files, so it never touches workers it did
not start.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from config.errors import ServiceError
from tempr.services import process

DEFAULT_QUEUES = "retrieve,fuse,rerank,ingest,webhooks"
"""Every queue: what `tempr worker` consumes unless told otherwise."""
RECALL_QUEUES = "retrieve,fuse,rerank,ingest"
"""One worker for all of recall and ingest (the fault benchmark's small stack)."""
WEBHOOK_QUEUES = "webhooks"
WEBHOOK_POOL = ("threads", 8)
"""Webhook deliveries run in a worker of their own (I/O-bound: a threads pool), so slow receivers
never take the slots recalls need."""


@dataclass(frozen=True)
class PoolSpec:
    """One detached worker of the layout `tempr services up` starts."""

    name: str
    queues: str
    pool: str
    concurrency: int
    why: str


def fleet_layout(
    *, retrieve: int = 4, analyse: int = 2, ingest: int = 2, cross_encoder: bool = False
) -> list[PoolSpec]:
    """The pools `tempr services up` starts: one per kind of work, so no kind queues behind another.

    Measured on a 2-core host (BENCHMARKS.md, "Latency"): with one prefork×2 worker for every
    queue, a recall's four strategies ran in two waves and waited 7–35 ms in the queue; a
    strategy pool of its own lets the four of one recall (and of a second one) run at once.
    Strategies stay on prefork — it is the only pool where their soft time limit
    (``TEMPR_STRATEGY_TIMEOUT_S``) interrupts them — and its children are small (no model).
    The analyse pool (query embedding, fusion, learned ranker, packing) is CPU-bound: one child
    per core. A cross-encoder gets a threads pool of its own so concurrent requests share one
    model and one batch; ingest has its own processes so a large import never delays a recall.
    """
    pools = [
        PoolSpec("retrieve", "retrieve", "prefork", retrieve, "strategies (PostgreSQL-bound)"),
        PoolSpec(
            "analyse",
            "fuse" if cross_encoder else "fuse,rerank",
            "prefork",
            analyse,
            "query analysis, fusion, learned ranker, finish (CPU-bound)",
        ),
    ]
    if cross_encoder:
        pools.append(PoolSpec("rerank", "rerank", "threads", 8, "cross-encoder, batched (GPU if any)"))
    pools += [
        PoolSpec("ingest", "ingest", "prefork", ingest, "imports (embedding, entities)"),
        PoolSpec("webhooks", WEBHOOK_QUEUES, *WEBHOOK_POOL, "result callbacks (I/O-bound)"),
    ]
    return pools


def pool_env(queues: str, concurrency: int, *, environ: dict[str, str] | None = None) -> dict[str, str]:
    """Settings a pool's processes get on top of the caller's environment.

    The pools that embed (ingest: a chunk of an import per process; analyse, on ``fuse``: the
    query) run several processes, and ONNX Runtime gives each session one thread per core, which
    keeps spinning after a run: two processes on two cores ran four, and the analyse pool's spun
    while the recall's strategies wanted the cores. Each process gets cores / processes threads
    instead (BENCHMARKS.md, "One embedding thread per process"), unless
    ``TEMPR_EMBEDDER_THREADS`` is set already."""
    env = os.environ if environ is None else environ
    if not {"ingest", "fuse"} & set(queues.split(",")) or "TEMPR_EMBEDDER_THREADS" in env:
        return {}
    return {"TEMPR_EMBEDDER_THREADS": str(max(1, (os.cpu_count() or 1) // max(1, concurrency)))}


def worker_command(queues: str, *, concurrency: int, pool: str, name: str, loglevel: str = "INFO") -> list[str]:
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "workers.app",
        "worker",
        "-Q",
        queues,
        "--concurrency",
        str(concurrency),
        "--pool",
        pool,
        "-n",
        f"{name}@%h",
        "--loglevel",
        loglevel,
        "--without-gossip",
        "--without-mingle",
    ]


class DetachedWorkers:
    def __init__(self, root: Path) -> None:
        self.root = root

    def pidfile(self, name: str) -> Path:
        return self.root / f"{name}.pid"

    def running(self) -> dict[str, int]:
        out = {}
        for pidfile in sorted(self.root.glob("*.pid")):
            pid = process.read_pid(pidfile)
            if pid and process.pid_alive(pid):
                out[pidfile.stem] = pid
        return out

    def start(self, name: str, queues: str, *, concurrency: int = 2, pool: str = "prefork") -> int:
        current = self.running()
        if name in current:
            return current[name]
        self.root.mkdir(parents=True, exist_ok=True)
        log = open(self.root / f"{name}.log", "ab")  # noqa: SIM115 - handed to the child
        child = subprocess.Popen(
            worker_command(queues, concurrency=concurrency, pool=pool, name=name),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1", **pool_env(queues, concurrency)},
        )
        self.pidfile(name).write_text(str(child.pid))
        return child.pid

    def stop_all(self, timeout: float = 30) -> list[str]:
        stopped = []
        for name, pid in self.running().items():
            os.kill(pid, signal.SIGTERM)
            try:
                process.wait_until(partial(_gone, pid), timeout=timeout, what=f"worker {name}")
            except ServiceError:
                os.kill(pid, signal.SIGKILL)
            self.pidfile(name).unlink(missing_ok=True)
            stopped.append(f"worker:{name}")
        return stopped


def _gone(pid: int) -> bool:
    return not process.pid_alive(pid)
