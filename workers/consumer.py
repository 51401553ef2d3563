"""The worker's broker consumer, reconnecting every second or two instead of kombu's 2..30 s.

Celery's consumer retries a lost broker with kombu's defaults (sleep 2, 4, 6 ... up to 30 s
between attempts), so after an outage of half a minute a worker could take another 30 s to
notice the broker is back. tempr's target is to resume within seconds, so the retry interval is
capped at ``RETRY_INTERVAL_MAX_S``; ``broker_connection_max_retries=None`` keeps it retrying for
as long as the outage lasts (config/celery.py).
"""

from __future__ import annotations

import functools
from typing import Any

from celery.worker.consumer import Consumer

RETRY_INTERVAL_START_S = 0.5
RETRY_INTERVAL_STEP_S = 0.5
RETRY_INTERVAL_MAX_S = 2.0


class QuickReconnectConsumer(Consumer):
    def ensure_connected(self, conn: Any) -> Any:
        conn.ensure_connection = functools.partial(
            conn.ensure_connection,
            interval_start=RETRY_INTERVAL_START_S,
            interval_step=RETRY_INTERVAL_STEP_S,
            interval_max=RETRY_INTERVAL_MAX_S,
        )
        return super().ensure_connected(conn)
