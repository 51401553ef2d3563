"""A dedicated rerank pool with a (tiny, randomly initialised) cross-encoder.

Two workers on their own broker: one for retrieve/fuse/webhooks, one for the `rerank` queue alone
with a threads pool, so concurrent rerank tasks share one process, one model and one batcher.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import ExtraWorker, extra_worker, redis_db_url, sample_bank

from tasks.messages import RerankState
from tempr.client import recall_async
from tempr.jobs.envelope import JobEnvelope
from tempr.providers.reranker import make_reranker
from tempr.recall.context import RecallContext
from tempr.recall.models import RecallRequest
from tempr.recall.pipeline import recall, run_strategies
from tempr.recall.plan import analyse
from tempr.recall.scoring import fuse

pytestmark = pytest.mark.integration
WHEN = datetime(2024, 6, 1, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def model_dir(tiny_cross_encoder: Path) -> Path:
    return tiny_cross_encoder


@pytest.fixture(scope="module")
def fleet(
    resources: Any, stack: Any, model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ExtraWorker, Path]]:
    tmp = tmp_path_factory.mktemp("rerank-fleet")
    metrics_dir = tmp / "metrics"
    metrics_dir.mkdir()
    env = {
        "TEMPR_RERANKER_MODEL": str(model_dir),
        "TEMPR_RERANK_BATCH_WAIT_MS": "250",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
    }
    common = {
        "env": env,
        "broker_url": redis_db_url(stack.redis_url, 8),
        "result_backend": resources.endpoints.result_backend,
    }
    with (
        extra_worker("rerank-pool", tmp, queues="rerank", pool="threads", concurrency=8, **common) as rerank_pool,
        extra_worker("retrieve-fuse", tmp, queues="retrieve,fuse,webhooks", pool="threads", concurrency=4, **common),
    ):
        yield rerank_pool, metrics_dir


def test_recall_through_the_rerank_pool(
    resources: Any, sample_facts: Path, model_dir: Path, fleet: tuple[ExtraWorker, Path]
) -> None:
    pool, _ = fleet
    bank = sample_bank(resources, sample_facts)
    request = RecallRequest(query="Where does Alice work now?", query_timestamp=WHEN)
    got = recall_async(bank, request, app=pool.app).get(timeout=90)
    assert got.reranker == f"cross-encoder:{model_dir}"
    assert got.results and all(r.scores.reranker is not None for r in got.results)
    for stage in ("fuse", "queue.rerank", "rerank", "queue.finish", "finish", "total"):
        assert stage in got.timings_ms, stage
    ctx = RecallContext(
        resources.engine, resources.embedder, resources.settings, reranker=make_reranker(str(model_dir), device="cpu")
    )
    expected = recall(bank, request, ctx)
    assert {r.id for r in got.results} == {r.id for r in expected.results}
    want = {r.id: r.scores.final for r in expected.results}
    assert {r.id: r.scores.final for r in got.results} == pytest.approx(want, abs=1e-4)


def _rerank_state(resources: Any, bank: str, n: int) -> dict[str, Any]:
    ctx = RecallContext(resources.engine, resources.embedder, resources.settings)
    plan = analyse(bank, RecallRequest(query=f"What happened to Bob? {n}", query_timestamp=WHEN), ctx)
    candidates = fuse(plan, run_strategies(plan, ctx), resources.settings)
    now = time.time()
    env = JobEnvelope(job_id=f"batch-test-{n}-{now}", bank_id=bank, deadline=now + 60, enqueued_at=now)
    plan = plan.model_copy(update={"embedding": []})
    return RerankState(env=env, plan=plan, sent_at=now, candidates=candidates, strategies=[]).send()


def _batch_request_counts(metrics_dir: Path) -> tuple[float, float]:
    """(model calls, model calls that merged more than one request) from the worker's metric files."""
    from prometheus_client.multiprocess import MultiProcessCollector

    total = single = 0.0
    for family in MultiProcessCollector(None, path=str(metrics_dir)).collect():
        if family.name == "tempr_rerank_batch_requests":
            for sample in family.samples:
                if sample.name.endswith("_count"):
                    total += sample.value
                elif sample.name.endswith("_bucket") and float(sample.labels["le"]) == 1.0:
                    single += sample.value
    return total, total - single


def test_concurrent_rerank_requests_share_a_batch(
    resources: Any, sample_facts: Path, fleet: tuple[ExtraWorker, Path]
) -> None:
    pool, metrics_dir = fleet
    bank = sample_bank(resources, sample_facts)
    states = [_rerank_state(resources, bank, n) for n in range(6)]
    _, merged_before = _batch_request_counts(metrics_dir)
    results = [pool.app.send_task("tempr.rerank.score", args=[s]) for s in states]  # all at once
    outcomes = [r.get(timeout=60)["outcome"] for r in results]
    assert all(o["reranker"].startswith("cross-encoder:") and o["scores"] for o in outcomes)
    calls, merged = _batch_request_counts(metrics_dir)
    assert merged > merged_before, f"no model call merged requests ({calls} calls)"

    # and whole recalls in parallel through the pool all succeed
    with ThreadPoolExecutor(4) as ex:
        answers = list(ex.map(lambda i: recall_async(bank, app=pool.app, query=f"Who is Alice? {i}").get(90), range(4)))
    assert all(a.reranker.startswith("cross-encoder:") for a in answers)
