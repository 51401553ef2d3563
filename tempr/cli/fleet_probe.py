"""Does a worker answer? The CLI's quick check before it sends a recall to the fleet.

A Celery broadcast ``ping`` with ``limit=1`` returns at the first reply: on a warm fleet it costs
a few milliseconds (the worker's main process answers, even while its pool is busy). Before it,
a plain Redis ``PING`` with a short connect timeout tells "no broker" apart from "no worker"
without Celery's connection retries (which would wait seconds on a stopped Redis).
Queue bindings or heartbeats left in Redis are not used: they outlive a killed worker.
"""

from __future__ import annotations

from typing import Any

from config.errors import outage_message
from config.settings import Settings
from tempr.endpoints import Endpoints

PING_TIMEOUT_S = 1.0
"""How long to wait for the first reply when no worker answers (a warm fleet answers in ms)."""


def no_worker_reason(settings: Settings, endpoints: Endpoints, *, timeout_s: float = PING_TIMEOUT_S) -> str | None:
    """None when a worker answers a ping; else why not, in a few words."""
    broker = endpoints.broker_url
    if not broker:
        return "Redis (the broker) is not running"
    if broker.startswith(("redis://", "rediss://")) and not _redis_answers(broker, timeout_s):
        return "the broker (Redis) does not answer"
    from tempr.client import sender_app

    try:
        replies = sender_app(settings, endpoints).control.ping(timeout=timeout_s, limit=1)
    except Exception as exc:
        outage = outage_message(exc)  # a broker that refuses the connection: no fleet to talk to
        if outage is None:
            raise
        return outage
    return None if replies else f"no worker answered a ping within {timeout_s:g} s"


def _redis_answers(url: str, timeout_s: float) -> bool:
    import redis

    client: Any = redis.Redis.from_url(url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s)
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()
