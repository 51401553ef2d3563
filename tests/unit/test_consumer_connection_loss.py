"""A lost broker connection never kills the worker: a collected Redis channel raises a connection error."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import redis
from kombu.transport import redis as kombu_redis

from workers.consumer import guard_closed_redis_channels


def test_a_collected_channel_raises_the_transports_connection_error() -> None:
    guard_closed_redis_channels()
    guard_closed_redis_channels()  # idempotent
    collected = SimpleNamespace(connection=SimpleNamespace(client=None))
    with pytest.raises(redis.exceptions.ConnectionError):
        kombu_redis.Channel._connparams(collected)
    assert redis.exceptions.ConnectionError in kombu_redis.Transport.connection_errors  # what Celery handles
