"""RabbitMQ as the broker (results still in Redis): a recall through an AMQP-fed worker.

Skipped, with the reason shown, when no RabbitMQ answers on 127.0.0.1:5672 as guest/guest.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import ExtraWorker, entry_context, extra_worker, sample_bank

from tempr.client import recall_async
from tempr.recall.models import RecallRequest
from tempr.recall.pipeline import recall

pytestmark = pytest.mark.integration
AMQP_URL = "amqp://guest:guest@127.0.0.1:5672//"


def _rabbit_unavailable() -> str | None:
    from kombu import Connection

    try:
        with Connection(AMQP_URL, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # noqa: BLE001 - any failure to connect means "skip", with the reason
        return f"no RabbitMQ at {AMQP_URL} ({type(exc).__name__}: {exc})"
    return None


@pytest.fixture(scope="module")
def rabbit_worker(resources: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExtraWorker]:
    reason = _rabbit_unavailable()
    if reason:
        pytest.skip(reason)
    with extra_worker(
        "rabbit",
        tmp_path_factory.mktemp("rabbit"),
        env={},
        broker_url=AMQP_URL,
        result_backend=resources.endpoints.result_backend,
    ) as worker:
        yield worker


def test_recall_through_rabbitmq(resources: Any, sample_facts: Path, rabbit_worker: ExtraWorker) -> None:
    bank = sample_bank(resources, sample_facts)
    request = RecallRequest(query="Which city did Bob move to?", query_timestamp=datetime(2024, 6, 1, tzinfo=UTC))
    got = recall_async(bank, request, app=rabbit_worker.app).get(timeout=90)
    assert rabbit_worker.app.conf.broker_url.startswith("amqp://")
    ctx = entry_context(resources, bank)
    expected = recall(bank, request, ctx)
    assert [(r.id, r.scores) for r in got.results] == [(r.id, r.scores) for r in expected.results]
    assert got.cache == "miss" and got.results
