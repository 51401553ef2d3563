"""The processes of each stack a benchmark compares, and their CPU time (psutil).

CPU per recall is summed over every process that serves it: for tempr the gateway, the workers
(parents and pool children), Redis and PostgreSQL (postmaster and backends); for the Hindsight
peer its server and its embedded PostgreSQL. A snapshot maps pid -> CPU seconds so far; a process
born between two snapshots counts in full, one that died is lost (short-lived: small).
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil

from bench import ingest_peer


def _tree(pid: int) -> list[int]:
    try:
        proc = psutil.Process(pid)
        return [pid, *(c.pid for c in proc.children(recursive=True))]
    except psutil.Error:
        return []


def cpu_snapshot(pids: list[int]) -> dict[int, float]:
    out = {}
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            out[pid] = t.user + t.system
        except psutil.Error:
            continue
    return out


def cpu_delta(before: dict[int, float], after: dict[int, float]) -> float:
    return sum(v - before.get(pid, 0.0) for pid, v in after.items())


def tempr_pids(gateway_pid: int) -> list[int]:
    from config.settings import get_settings
    from tempr.services import manager
    from tempr.services.workers import DetachedWorkers

    settings = get_settings()
    roots = [gateway_pid, *DetachedWorkers(settings.state_dir.resolve() / "workers").running().values()]
    status = manager.status(settings)
    roots += [status[s]["pid"] for s in ("postgres", "redis") if status[s].get("pid")]
    return [p for root in roots for p in _tree(root)]


def peer_pids() -> list[int]:
    root = Path(ingest_peer.PEER_ENV["HS_ROOT"])
    pidfile = root / f"server-{ingest_peer.PEER_ENV['API_PORT']}.pid"
    pids: list[int] = []
    if pidfile.exists():
        pids += _tree(int(pidfile.read_text().strip()))
    marker = str(root)
    for proc in psutil.process_iter(["pid", "cmdline", "exe"]):
        info = proc.info
        text = " ".join(info.get("cmdline") or []) + " " + (info.get("exe") or "")
        if "postgres" in text and marker in text and info["pid"] != os.getpid():
            pids.append(info["pid"])
    return sorted(set(pids))
