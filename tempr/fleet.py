"""What the fleet looks like right now: workers (queues, pool, concurrency, pid, ping), queue
depths and the most recent jobs. Read by `tempr services status` and ``GET /v1/fleet``.

Workers are asked over Celery's control channel (a broadcast ``ping`` / ``stats`` /
``active_queues`` with a short timeout), so a worker that does not answer shows as not
responding rather than hanging the caller. Recent jobs come from the job records in Redis
(``tempr:job:*``), scanned a bounded number of keys at a time: a console view, not an index.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from kombu.exceptions import OperationalError as KombuOperationalError
from redis.exceptions import RedisError

from tempr.jobs.keys import job_key

log = logging.getLogger(__name__)
_JOB_FIELDS = ("job_id", "status", "bank_id", "tenant", "created_at", "started_at", "finished_at", "deadline", "error")


def inspect_workers(celery_app: Any, *, timeout: float = 1.0) -> dict[str, dict[str, Any]]:
    """Per answering node: pid, pool, concurrency, queues, ping. Empty when none answers."""
    try:
        inspector = celery_app.control.inspect(timeout=timeout)
        pings = inspector.ping() or {}
        stats = inspector.stats() or {}
        queues = inspector.active_queues() or {}
    except (OSError, RedisError, KombuOperationalError) as exc:  # broker down: nobody answers
        log.warning("workers could not be asked: %s", exc)
        return {}
    out: dict[str, dict[str, Any]] = {}
    for node in sorted(set(pings) | set(stats) | set(queues)):
        st = stats.get(node) or {}
        pool = st.get("pool") or {}
        out[node] = {
            "node": node,
            "pid": st.get("pid"),
            "pool": _pool_name(pool.get("implementation")),
            "concurrency": pool.get("max-concurrency"),
            "queues": sorted(q.get("name") for q in queues.get(node) or [] if q.get("name")),
            "ping": (pings.get(node) or {}).get("ok") == "pong",
        }
    return out


def _pool_name(implementation: str | None) -> str | None:
    """'celery.concurrency.prefork:TaskPool' -> 'prefork'."""
    if not implementation:
        return None
    return implementation.split(":")[0].rsplit(".", 1)[-1]


def merge_local(nodes: dict[str, dict[str, Any]], local: dict[str, int]) -> list[dict[str, Any]]:
    """Join the workers `services up` started here (name -> pid) with the nodes that answered."""
    by_pid = {n["pid"]: n for n in nodes.values() if n.get("pid")}
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name, pid in sorted(local.items()):
        node = by_pid.get(pid)
        if node is not None:
            seen.add(node["node"])
        rows.append({"name": name, "started_here": True, "pid": pid, **(node or {"ping": False, "node": None})})
    for node_name, node in nodes.items():
        if node_name not in seen:
            rows.append({"name": node_name.split("@")[0], "started_here": False, **node})
    return rows


def recent_jobs(client: Any, *, limit: int = 20, scan_keys: int = 2000) -> list[dict[str, Any]]:
    """The newest job records (by created_at), at most ``limit``, from at most ``scan_keys`` keys."""
    if client is None:
        return []
    pattern = job_key("*").replace("%2A", "*")
    jobs: list[dict[str, Any]] = []
    try:
        for i, key in enumerate(client.scan_iter(match=pattern, count=500)):
            if i >= scan_keys:
                break
            raw = client.hmget(key, *_JOB_FIELDS)
            record = dict(zip(_JOB_FIELDS, (v.decode() if isinstance(v, bytes) else v for v in raw), strict=True))
            if not record.get("job_id"):
                continue
            for name in ("created_at", "started_at", "finished_at", "deadline"):
                record[name] = float(record[name]) if record.get(name) else None
            record["error"] = json.loads(record["error"]) if record.get("error") else None
            jobs.append(record)
    except (RedisError, OSError) as exc:
        log.warning("recent jobs unavailable: %s", exc)
        return []
    jobs.sort(key=lambda j: -(j.get("created_at") or 0.0))
    return jobs[:limit]


def fleet_report(
    celery_app: Any, cache_client: Any, depths: dict[str, float], local: dict[str, int] | None = None
) -> dict[str, Any]:
    """Workers, queue depths (-1: broker unreachable) and recent jobs, as one JSON-able dict.

    ``depths`` comes from the caller (the process that assembled the app knows its broker)."""
    return {
        "workers": merge_local(inspect_workers(celery_app), local or {}),
        "queues": {q: int(d) for q, d in depths.items()},
        "recent_jobs": recent_jobs(cache_client),
    }


def wait_until_ready(
    celery_app: Any, names: list[str], *, timeout: float, alive: Any = None, interval: float = 0.3
) -> list[str]:
    """Block until every named worker (``name@host``) says all its pool processes are up; return
    those that never did.

    Not ``ping``: a worker answers that before its prefork children have loaded their models; it
    answers ``tempr_pool_ready`` (``workers/control.py``) only once they have, so the first task
    after this returns runs warm. ``alive`` (optional: name -> bool) stops the wait early for a
    worker whose process has died.
    """
    import socket
    import time

    host = socket.gethostname()
    waiting = {f"{n}@{host}": n for n in names}
    deadline = time.monotonic() + timeout
    while waiting and time.monotonic() < deadline:
        try:
            replies = (
                celery_app.control.broadcast(
                    "tempr_pool_ready", destination=sorted(waiting), reply=True, timeout=interval
                )
                or []
            )
        except (OSError, RedisError, KombuOperationalError):
            replies = []
        for reply in replies:
            for node, answer in reply.items():
                if isinstance(answer, dict) and answer.get("ready"):
                    waiting.pop(node, None)
        if alive is not None:
            dead = [node for node, n in waiting.items() if not alive(n)]
            if dead:
                return [waiting[node] for node in dead]
    return sorted(waiting.values())
