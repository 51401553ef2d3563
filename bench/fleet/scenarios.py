"""The fleet test's scenarios: load from the client host while the runner breaks things.

Each scenario runs a closed-loop sync load (``client load``) and, alongside it, a stream of async
recalls with a callback to the client host's receiver (``client async``), then counts outcomes:
sync requests by outcome, async jobs accepted / webhook received / duplicated. A job is *lost*
when it was accepted (202) and no webhook arrived for it by the end of the wait.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.fleet.hosts import Fleet

OUTCOMES = ("ok", "degraded", "clean", "e500", "hung", "wrong", "refused")
HOOK_WAIT_S = 45.0


@dataclass
class Result:
    name: str
    rows: list[dict[str, Any]]
    jobs: list[dict[str, Any]]
    hooks: list[dict[str, Any]]
    wall_s: float
    cpu_s: dict[str, float]
    notes: list[str] = field(default_factory=list)
    recovery_s: float | None = None
    rss_mib: dict[str, float] = field(default_factory=dict)

    def counts(self) -> Counter[str]:
        return Counter(r["outcome"] for r in self.rows)

    def answered(self) -> int:
        """Recalls the fleet computed in the window: sync answers and async jobs accepted."""
        sync = sum(1 for r in self.rows if r["outcome"] in ("ok", "degraded", "wrong"))
        return sync + sum(1 for j in self.jobs if j.get("job_id"))

    @property
    def rate(self) -> float:
        return self.answered() / self.wall_s if self.wall_s else 0.0

    def latency_ms(self, q: float) -> float | None:
        ms = sorted((r["done"] - r["sent"]) * 1000 for r in self.rows if r["outcome"] in ("ok", "degraded"))
        if not ms:
            return None
        return ms[round(q * (len(ms) - 1))]

    def late(self) -> int:
        return sum(1 for r in self.rows if r.get("late"))

    def async_counts(self) -> dict[str, int]:
        accepted = {j["job_id"] for j in self.jobs if j.get("job_id")}
        by_job = Counter(h["job_id"] for h in self.hooks if h.get("job_id") in accepted)
        # Several deliveries of one job all carry the job id (X-Tempr-Job-Id): the receiver's dedup key.
        unkeyed = sum(1 for h in self.hooks if h.get("job_id") in accepted and not h["headers"].get("x-tempr-job-id"))
        return {
            "sent": len(self.jobs),
            "accepted": len(accepted),
            "refused": sum(1 for j in self.jobs if j.get("outcome") == "refused"),
            "delivered": len(by_job),
            "lost": len(accepted - set(by_job)),
            "duplicates": sum(n - 1 for n in by_job.values()),
            "dup_without_id": unkeyed if any(n > 1 for n in by_job.values()) else 0,
            "failed_status": len({h["job_id"] for h in self.hooks if h.get("status") == "failed"} & accepted),
        }


def _client(fleet: Fleet, *args: str) -> list[str]:
    return [sys.executable, "-m", "bench.fleet.client", *args]


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_scenario(
    fleet: Fleet,
    name: str,
    *,
    duration: float,
    concurrency: int,
    ref: Path,
    timeline: Callable[[float], Any] | None = None,
    async_rate: float = 0.25,
    hosts: tuple[str, ...] = ("w1", "w2"),
    timeout_s: float = 20.0,
) -> Result:
    """Load for ``duration`` s; ``timeline(t0)`` runs the faults meanwhile (in this thread)."""
    out = fleet.root / "runs" / name
    out.mkdir(parents=True, exist_ok=True)
    cpu0 = {h: fleet.cpu_seconds(h) for h in (*hosts, "gw", "db")}
    t0 = time.time()
    sync = fleet.spawn(
        "cl",
        f"load-{name}",
        _client(
            fleet,
            "load",
            "--gateway",
            fleet.gateway_url,
            "--bank",
            "fleet",
            "--out",
            str(out / "sync.jsonl"),
            "--ref",
            str(ref),
            "--concurrency",
            str(concurrency),
            "--duration",
            str(duration),
            "--timeout-s",
            str(timeout_s),
            "--hang-s",
            str(timeout_s + 25),
        ),
    )
    side = None
    if async_rate:
        side = fleet.spawn(
            "cl",
            f"async-{name}",
            _client(
                fleet,
                "async",
                "--gateway",
                fleet.gateway_url,
                "--bank",
                "fleet",
                "--out",
                str(out / "async.jsonl"),
                "--callback",
                fleet.hook_url,
                "--rate",
                str(async_rate),
                "--duration",
                str(duration),
                "--timeout-s",
                str(timeout_s * 3),
            ),
        )
    recovery = timeline(t0) if timeline else None
    for proc in (sync, side):
        if proc is not None:
            proc.wait(duration + 120)
    wall = time.time() - t0
    cpu = {h: fleet.cpu_seconds(h) - cpu0[h] for h in cpu0}
    rss = {f"{h}/{pool}": mib for h in hosts for pool, mib in fleet.rss_mib(h).items()}
    jobs = _read(out / "async.jsonl")
    result = Result(name, _read(out / "sync.jsonl"), jobs, [], wall, cpu, recovery_s=recovery, rss_mib=rss)
    _wait_hooks(fleet, result)
    return result


def _wait_hooks(fleet: Fleet, result: Result) -> None:
    accepted = {j["job_id"] for j in result.jobs if j.get("job_id")}
    deadline = time.time() + HOOK_WAIT_S
    while True:
        hooks = _read(fleet.root / "hooks.jsonl")
        got = {h.get("job_id") for h in hooks}
        if accepted <= got or time.time() > deadline:
            break
        time.sleep(0.5)
    result.hooks = [h for h in hooks if h.get("job_id") in accepted]


def sleep_until(t0: float, at: float) -> None:
    time.sleep(max(0.0, t0 + at - time.time()))


def wait_rejoin(fleet: Fleet, host: str, timeout: float = 120) -> float:
    return fleet.wait_workers([host], timeout=timeout)


def summary_row(r: Result) -> list[Any]:
    c = r.counts()
    a = r.async_counts()
    p50, p95 = r.latency_ms(0.5), r.latency_ms(0.95)
    return [
        r.name,
        len(r.rows),
        c["ok"],
        c["degraded"],
        c["clean"],
        c["refused"],
        c["e500"],
        c["hung"],
        c["wrong"],
        r.late(),
        f"{r.rate:.1f}",
        f"{p50:.0f}" if p50 is not None else "–",
        f"{p95:.0f}" if p95 is not None else "–",
        f"{a['accepted']}/{a['sent']}",
        a["delivered"],
        a["lost"],
        f"{a['duplicates']} ({a['dup_without_id']} without id)",
        "–" if r.recovery_s is None else f"{r.recovery_s:.1f}",
    ]


HEADERS = [
    "scenario",
    "sync sent",
    "ok",
    "degraded",
    "clean error",
    "refused",
    "500",
    "hung",
    "wrong",
    "past deadline",
    "recalls/s",
    "p50 ms",
    "p95 ms",
    "async accepted",
    "webhooks",
    "lost",
    "duplicate deliveries",
    "recovery s",
]


def stop_after(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.terminate()
