"""Does a worker that consumes a given queue answer? The CLI's quick check before it uses the fleet.

`tempr recall` asks for a consumer of ``fuse`` (where a recall starts), `tempr ingest` for one of
``ingest``. A plain ``ping`` is not enough: the first reply may come from a worker that consumes
other queues only (`tempr services up` starts a webhooks-only worker beside the others), and a
message sent to a queue nobody consumes would wait until its deadline. So the check broadcasts
``active_queues`` and stops at the first reply that lists the queue: on a warm fleet that costs a
few milliseconds (each worker's main process answers, even while its pool is busy). Only when no
such worker answers does it wait the whole timeout. Before it, a Redis ``PING`` with a short
connect timeout tells "no broker" apart from "no worker", without Celery's connection retries
(which would wait seconds on a stopped Redis). Queue bindings or heartbeats left in Redis are not
used: they outlive a killed worker.
"""

from __future__ import annotations

import argparse
from typing import Any

from config.errors import outage_message

FLEET, AUTO, IN_PROCESS = "fleet", "auto", "in-process"


def where_to_run(args: argparse.Namespace) -> str:
    """``fleet`` (--via-workers), ``in-process`` (--in-process) or ``auto`` (the fleet if a consumer answers)."""
    if getattr(args, "via_workers", False):
        return FLEET
    if getattr(args, "in_process", False):
        return IN_PROCESS
    return AUTO


class _Found(Exception):
    """Raised from the reply callback to stop listening at the first ingest consumer."""


def no_consumer_reason(celery_app: Any, broker_url: str | None, queue: str, *, timeout_s: float) -> str | None:
    """None when a worker consuming ``queue`` answers; else why not, in a few words."""
    if not broker_url:
        return "Redis (the broker) is not running"
    if broker_url.startswith(("redis://", "rediss://")) and not _redis_answers(broker_url, timeout_s):
        return "the broker (Redis) does not answer"

    def on_reply(body: dict[str, Any]) -> None:
        for queues in body.values():
            if any(isinstance(q, dict) and q.get("name") == queue for q in queues or []):
                raise _Found

    try:
        # A connection of its own: on Redis, a reply consumer left from an earlier broadcast on a
        # shared connection can swallow the next broadcast's first replies (seen: every other call).
        # A short BRPOP (polling_interval) so closing it does not wait out a 1 s poll in flight.
        with celery_app.connection_for_write(transport_options={"polling_interval": 0.05}) as conn:
            celery_app.control.broadcast(
                "active_queues", reply=True, timeout=timeout_s, callback=on_reply, connection=conn
            )
    except _Found:
        return None
    except Exception as exc:
        outage = outage_message(exc)  # a broker that refuses the connection: no fleet to talk to
        if outage is None:
            raise
        return outage
    return f"no worker consuming the {queue!r} queue answered within {timeout_s:g} s"


def _redis_answers(url: str, timeout_s: float) -> bool:
    import redis

    client: Any = redis.Redis.from_url(url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s)
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()
