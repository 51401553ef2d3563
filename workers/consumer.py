"""The worker's broker consumer: quick reconnects, and a connection loss that never kills the worker.

Celery's consumer retries a lost broker with kombu's defaults (sleep 2, 4, 6 ... up to 30 s
between attempts), so after an outage of half a minute a worker could take another 30 s to
notice the broker is back. tempr's target is to resume within seconds, so the retry interval is
capped at ``RETRY_INTERVAL_MAX_S``; ``broker_connection_max_retries=None`` keeps it retrying for
as long as the outage lasts (config/celery.py).

Celery 5.7, on a lost connection, first ``collect()``s the broken connection and then closes it.
With the Redis transport, closing restores the messages this worker had not acknowledged yet,
through a client that ``collect()`` already cleared: an ``AttributeError`` that is not a
connection error, so it escaped and the worker exited ("Unrecoverable error"; seen in
``make faults``' Redis stop+start: no recall answered for the next two minutes). The close is
wrapped here so the consumer reconnects as it should. The same cleared client fails again when a
task that was running across the loss finishes and acknowledges its message on the old channel
(the worker exited a few seconds after reconnecting): the acks and rejects of the requests held at
the moment of the loss are wrapped too. The messages that could not be put back or acknowledged
stay in Redis' unacked set and return after the visibility timeout; recalls among them are past
their deadline by then and are dropped unrun, and ingests are idempotent by fact id.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from celery.worker import state as worker_state
from celery.worker.consumer import Consumer

RETRY_INTERVAL_START_S = 0.5
RETRY_INTERVAL_STEP_S = 0.5
RETRY_INTERVAL_MAX_S = 2.0
log = logging.getLogger(__name__)


def _survive_cleared_client(what: str, call: Any) -> Any:
    @functools.wraps(call)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except AttributeError as exc:  # the collected client; see the module docstring
            log.warning("%s on the lost broker connection skipped: %r", what, exc)
            return None

    return wrapped


class QuickReconnectConsumer(Consumer):
    def ensure_connected(self, conn: Any) -> Any:
        conn.ensure_connection = functools.partial(
            conn.ensure_connection,
            interval_start=RETRY_INTERVAL_START_S,
            interval_step=RETRY_INTERVAL_STEP_S,
            interval_max=RETRY_INTERVAL_MAX_S,
        )
        return super().ensure_connected(conn)

    def on_connection_error_after_connected(self, exc: Any) -> None:
        if self.connection is not None:
            self.connection.close = _survive_cleared_client("restoring unacked messages", self.connection.close)
        for request in (*worker_state.active_requests, *worker_state.reserved_requests):
            if not request.acknowledged:
                request._on_ack = _survive_cleared_client("an ack", request._on_ack)
                request._on_reject = _survive_cleared_client("a reject", request._on_reject)
        super().on_connection_error_after_connected(exc)
