"""This process's Redis client for the job layer (job records, the recall cache), with a breaker.

Fork-safe (one client per pid), no retries and short timeouts: redis-py's default (3 retries with
backoff up to 10 s) would turn a dead cache into seconds of latency per operation. After a failure
the ``Breaker`` skips Redis for a few seconds, so a dead Redis costs one failed call per cooldown.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry


class Breaker:
    """After a Redis failure, skip Redis for ``cooldown_s``: a dead cache costs one failed call
    per cooldown, not one (connect timeout) per operation of every recall."""

    def __init__(self, cooldown_s: float = 5.0) -> None:
        self.cooldown_s = cooldown_s
        self.open_until = 0.0

    def allows(self) -> bool:
        return time.monotonic() >= self.open_until

    def trip(self) -> None:
        self.open_until = time.monotonic() + self.cooldown_s

    def reset(self) -> None:
        self.open_until = 0.0


_clients: dict[tuple[int, str], tuple[Any, Breaker]] = {}
_clients_lock = threading.Lock()


def cache_redis(url: str | None, *, timeout_s: float = 0.5) -> tuple[Any, Breaker]:
    """This process's client for the cache/job Redis (fork-safe: one per pid), with its breaker.

    No retries and short timeouts: redis-py's default (3 retries with backoff up to 10 s) would
    turn a dead cache into seconds of latency per operation."""
    if not url:
        return None, Breaker()
    key = (os.getpid(), url)
    if key not in _clients:
        with _clients_lock:
            if key not in _clients:
                client = redis.Redis.from_url(
                    url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s, retry=Retry(NoBackoff(), 0)
                )
                _clients[key] = (client, Breaker())
    return _clients[key]
