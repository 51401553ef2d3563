"""Failure semantics: degraded strategies, all strategies failing, deadlines.

A worker started here with ``TEMPR_FAULT_STRATEGIES`` (test-only fault injection) makes the
semantic strategy raise and the graph strategy hang past its 1 s soft time limit; for banks named
``allfail-*`` every strategy raises. It has its own broker database so the session worker never
takes its tasks.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import ExtraWorker, entry_context, extra_worker, redis_db_url, sample_bank

from config.errors import AllStrategiesFailed, RecallTimeout
from tempr.client import recall_async
from tempr.core.types import Strategy
from tempr.recall.models import RecallRequest
from tempr.recall.pipeline import fuse_rerank_finish
from tempr.recall.plan import analyse
from tempr.recall.strategies import degraded, run_strategy
from tempr.store import banks_repo
from tempr.store.ingest_repo import lock_bank
from workers.app import make_app

pytestmark = pytest.mark.integration
WHEN = datetime(2024, 6, 1, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def faulty(resources: Any, stack: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExtraWorker]:
    env = {"TEMPR_FAULT_STRATEGIES": "semantic,graph:slow,*@allfail-", "TEMPR_STRATEGY_TIMEOUT_S": "1"}
    with extra_worker(
        "faulty",
        tmp_path_factory.mktemp("faulty"),
        env=env,
        pool="prefork",
        concurrency=2,
        broker_url=redis_db_url(stack.redis_url, 5),
        result_backend=resources.endpoints.result_backend,
    ) as worker:
        yield worker


def test_failed_and_timed_out_strategies_degrade_the_answer(
    resources: Any, sample_facts: Path, faulty: ExtraWorker
) -> None:
    bank = sample_bank(resources, sample_facts)
    request = RecallRequest(query="Where does Alice work these days?", query_timestamp=WHEN)
    started = time.perf_counter()
    job = recall_async(bank, request, app=faulty.app)
    got = job.get(timeout=60)
    elapsed = time.perf_counter() - started
    assert sorted(got.degraded) == ["graph", "semantic"]
    assert got.results, "keyword and temporal still answer"
    assert elapsed < 15, "the hanging strategy is cut by its 1 s soft limit, not the 30 s deadline"
    assert job.status()["status"] == "succeeded"

    # The same fusion of the surviving strategies, in process.
    ctx = entry_context(resources, bank)
    with resources.engine.connect() as conn:
        version = banks_repo.bank_state(conn, bank)[0]
    plan = analyse(bank, request, ctx, version=version)
    results = [
        degraded(s, "down") if s in (Strategy.SEMANTIC, Strategy.GRAPH) else run_strategy(s, plan, ctx)
        for s in Strategy
    ]
    expected = fuse_rerank_finish(plan, results, ctx, {})
    assert [(r.id, r.scores) for r in got.results] == [(r.id, r.scores) for r in expected.results]

    again = recall_async(bank, request, app=faulty.app).get(timeout=60)
    assert again.cache == "miss", "a degraded answer is never cached"


def test_all_strategies_failing_fails_the_job_clearly(faulty: ExtraWorker, resources: Any) -> None:
    bank = f"allfail-{uuid.uuid4().hex[:8]}"
    with resources.engine.begin() as conn:  # the bank exists (an unknown one is NotFound, before any strategy)
        lock_bank(conn, bank, "english", resources.embedder.space)
    job = recall_async(bank, app=faulty.app, query="Where does Alice work?")
    with pytest.raises(AllStrategiesFailed) as info:
        job.get(timeout=60)
    message = str(info.value)
    assert all(name in message for name in ("semantic", "keyword", "graph", "temporal"))
    assert "injected fault" in message
    status = job.status()
    assert status["status"] == "failed" and status["error"]["error"] == "AllStrategiesFailed"


def test_deadline_exceeded_is_a_timeout_error(resources: Any, worker: Path, sample_facts: Path) -> None:
    bank = sample_bank(resources, sample_facts)
    started = time.perf_counter()
    job = recall_async(bank, query="Where does Alice work?", timeout_s=0.001)
    with pytest.raises(RecallTimeout, match="deadline"):
        job.get()
    assert time.perf_counter() - started < 10
    status = job.status()
    assert status["status"] == "failed" and status["error"]["error"] == "RecallTimeout"


def test_waiting_is_bounded_even_when_no_worker_answers(resources: Any, stack: Any) -> None:
    nobody = make_app(redis_db_url(stack.redis_url, 9), resources.endpoints.result_backend)
    started = time.perf_counter()
    job = recall_async("t-nobody-home", app=nobody, query="anything", timeout_s=0.5)
    with pytest.raises(RecallTimeout, match="deadline"):
        job.get()
    assert time.perf_counter() - started < 0.5 + resources.settings.recall_deadline_grace_s + 2
    assert job.status()["status"] == "failed"  # a status poll past the deadline records the timeout
    nobody.close()
