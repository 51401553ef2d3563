"""The worker's broker consumer: quick reconnects, and a connection loss that never kills the worker.

Celery's consumer retries a lost broker with kombu's defaults (sleep 2, 4, 6 ... up to 30 s
between attempts), so after an outage of half a minute a worker could take another 30 s to
notice the broker is back. tempr's target is to resume within seconds, so the retry interval is
capped at ``RETRY_INTERVAL_MAX_S``; ``broker_connection_max_retries=None`` keeps it retrying for
as long as the outage lasts (config/celery.py).

Celery 5.7, on a lost connection, first ``collect()``s the broken connection and then closes it.
With the Redis transport, everything that later touches the old channel builds a client from that
connection's info, which ``collect()`` cleared: closing it (which restores the unacknowledged
messages), and the ack of a task that was running across the loss and finishes after the
reconnect. Each raised ``AttributeError``, which is not a connection error, so it escaped into the
worker's event loop and the worker exited ("Unrecoverable error"). ``make faults``' Redis
stop+start hit it in about half the runs: no recall was answered for the next two minutes.
``guard_closed_redis_channels`` makes the old channel raise the transport's own connection error
instead, which Celery and kombu already handle (the ack is logged as lost). The messages are in
Redis' unacked set and return after the visibility timeout; recalls among them are past their
deadline by then and are dropped unrun, and ingests are idempotent by fact id.
"""

from __future__ import annotations

import functools
from typing import Any

from celery.worker.consumer import Consumer

RETRY_INTERVAL_START_S = 0.5
RETRY_INTERVAL_STEP_S = 0.5
RETRY_INTERVAL_MAX_S = 2.0


def guard_closed_redis_channels() -> None:
    """Patch kombu's Redis ``Channel._connparams`` (idempotent): a channel whose connection was
    collected raises ``redis.ConnectionError`` instead of ``AttributeError``."""
    import redis
    from kombu.transport import redis as kombu_redis

    original = kombu_redis.Channel._connparams
    if getattr(original, "_tempr_guard", False):
        return

    @functools.wraps(original)
    def _connparams(self: Any, asynchronous: bool = False) -> Any:
        if getattr(self.connection, "client", None) is None:
            raise redis.exceptions.ConnectionError("this channel's broker connection was closed after a loss")
        return original(self, asynchronous=asynchronous)

    _connparams._tempr_guard = True  # type: ignore[attr-defined]
    kombu_redis.Channel._connparams = _connparams  # type: ignore[method-assign]


class QuickReconnectConsumer(Consumer):
    def ensure_connected(self, conn: Any) -> Any:
        conn.ensure_connection = functools.partial(
            conn.ensure_connection,
            interval_start=RETRY_INTERVAL_START_S,
            interval_step=RETRY_INTERVAL_STEP_S,
            interval_max=RETRY_INTERVAL_MAX_S,
        )
        return super().ensure_connected(conn)


guard_closed_redis_channels()  # the worker loads this module (worker_consumer) before it connects
