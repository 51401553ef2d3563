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


def cpu_by_process(before: dict[int, float], after: dict[int, float], roles: dict[int, str]) -> dict[str, float]:
    """CPU seconds between two snapshots, summed per role (``tempr_processes``/``peer_processes``)."""
    out: dict[str, float] = {}
    for pid, v in after.items():
        role = roles.get(pid, "other")
        out[role] = out.get(role, 0.0) + v - before.get(pid, 0.0)
    return out


def tempr_processes(gateway_pid: int) -> dict[int, str]:
    """pid -> role for every process serving tempr's recalls: the gateway, each worker's parent and
    its pool children apart (a prefork parent only relays messages), PostgreSQL and Redis."""
    from config.settings import get_settings
    from tempr.services import manager
    from tempr.services.workers import DetachedWorkers

    settings = get_settings()
    roles = {pid: "gateway" for pid in _tree(gateway_pid)}
    for name, root in DetachedWorkers(settings.state_dir.resolve() / "workers").running().items():
        tree = _tree(root)
        roles.update({pid: f"{name} children" for pid in tree[1:]})
        roles.update({pid: f"{name} parent" for pid in tree[:1]})
    status = manager.status(settings)
    for service in ("postgres", "redis"):
        if status[service].get("pid"):
            roles.update({pid: service for pid in _tree(status[service]["pid"])})
    return roles


def peer_processes() -> dict[int, str]:
    """pid -> role for the Hindsight peer: its server (and children) and its embedded PostgreSQL."""
    root = Path(ingest_peer.PEER_ENV["HS_ROOT"])
    pidfile = root / f"server-{ingest_peer.PEER_ENV['API_PORT']}.pid"
    roles: dict[int, str] = {}
    if pidfile.exists():
        roles.update({pid: "server" for pid in _tree(int(pidfile.read_text().strip()))})
    marker = str(root)
    for proc in psutil.process_iter(["pid", "cmdline", "exe"]):
        info = proc.info
        text = " ".join(info.get("cmdline") or []) + " " + (info.get("exe") or "")
        if "postgres" in text and marker in text and info["pid"] != os.getpid():
            roles[info["pid"]] = "postgres"
    return roles
