"""The chord path end to end (real worker, Redis, PostgreSQL), and the Redis result cache.

The chord must answer exactly what the in-process entry point answers: same ids, order, scores,
entities, chunks and trace (timings, the cache marker and where the graph's seeds came from aside:
whether the other strategies posted theirs in time depends on the scheduling, not on the answer,
which ``test_seed_handoff`` pins as the same either way).
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import entry_context, extra_worker, redis_db_url, sample_bank

from tempr.client import recall_async
from tempr.ingest.backfill import embed_missing_chunks
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.recall.models import RecallRequest, RecallResponse
from tempr.recall.pipeline import recall
from tempr.services.redis_server import LocalRedis

pytestmark = pytest.mark.integration
WHEN = datetime(2024, 6, 1, 12, tzinfo=UTC)


def comparable(response: RecallResponse) -> dict[str, Any]:
    data = response.model_dump(mode="json", exclude={"cache", "timings_ms"})
    if data.get("trace"):  # timings and the seeds' provenance are the only things allowed to differ
        data["trace"].pop("timings_ms", None)
        for strategy in data["trace"]["strategies"].values():
            strategy.pop("elapsed_ms", None)
            strategy.get("detail", {}).pop("seeds_from", None)
    return data


def _direct(resources: Any, bank: str, request: RecallRequest) -> RecallResponse:
    ctx = entry_context(resources, bank)
    return recall(bank, request, ctx)


@pytest.mark.parametrize(
    "fields",
    [
        {"query": "Which company does Alice work for now?"},
        {"query": "What happened to the team in 2023?", "budget": "low", "include": {"chunks": {}}, "trace": True},
        {"query": "Why did Bob leave his job?", "budget": "high", "types": ["world", "experience"], "max_tokens": 300},
    ],
)
def test_chord_answers_exactly_like_the_entry_point(
    resources: Any, worker: Path, sample_facts: Path, fields: dict[str, Any]
) -> None:
    bank = sample_bank(resources, sample_facts)
    request = RecallRequest(query_timestamp=WHEN, **fields)
    job = recall_async(bank, request)
    got = job.get(timeout=60)
    expected = _direct(resources, bank, request)
    assert got.results, "the sample bank answers these"
    assert comparable(got) == comparable(expected)
    assert got.cache == "miss" and got.degraded == []
    for stage in (
        "queue.start",
        "embed",
        "analyse",
        "strategies",
        "queue.strategy.semantic",
        "strategy.graph",
        "queue.fuse",
        "fuse",
        "rerank",
        "finish",
        "total",
    ):
        assert stage in got.timings_ms, stage
    status = job.status()
    assert status["status"] == "succeeded" and status["result"]["results"][0]["id"] == got.results[0].id


def test_strategy_results_are_not_stored_beside_the_chord(resources: Any, worker: Path, sample_facts: Path) -> None:
    """The strategies' reports reach the callback through the chord's own list; a stored copy of
    each (and its STARTED state) was a Redis write per strategy and, at saturation, hundreds of
    MB nobody read (BENCHMARKS.md, "Strategy results not stored"). Only the job's answer is."""
    import json

    import redis

    client = redis.Redis.from_url(resources.endpoints.result_backend)
    before = set(client.scan_iter("celery-task-meta-*"))
    bank = sample_bank(resources, sample_facts)
    job = recall_async(bank, RecallRequest(query="Who is Carol, and when did she join?", query_timestamp=WHEN))
    assert job.get(timeout=60).results
    stored = {
        k.decode(): json.loads(client.get(k) or b"{}") for k in set(client.scan_iter("celery-task-meta-*")) - before
    }
    assert f"celery-task-meta-{job.id}" in stored
    strategies = [
        k for k, meta in stored.items() if isinstance(meta.get("result"), dict) and "strategy" in meta["result"]
    ]
    assert strategies == []
    client.close()


def test_a_recall_publishes_its_answer_alone_under_its_job_id(resources: Any, worker: Path, sample_facts: Path) -> None:
    """The job record says a recall is running; a STARTED state under the job id as well cost each
    miss three Redis round trips before fusion and woke the waiting caller for nothing."""
    import redis

    client = redis.Redis.from_url(resources.endpoints.result_backend)
    bank = sample_bank(resources, sample_facts)
    watch = client.pubsub()
    watch.psubscribe("celery-task-meta-*")
    assert watch.get_message(timeout=5)["type"] == "psubscribe"
    job = recall_async(bank, RecallRequest(query="Where did Carol travel?", query_timestamp=WHEN))
    assert job.get(timeout=60).results
    states = []
    deadline = time.monotonic() + 2.0  # anything published for the job has arrived by now
    while time.monotonic() < deadline:
        message = watch.get_message(timeout=max(0.0, deadline - time.monotonic()))
        if message and message["channel"].decode() == f"celery-task-meta-{job.id}":
            states.append(json.loads(message["data"])["status"])
    assert states == ["SUCCESS"]
    assert job.status()["status"] == "succeeded"
    watch.close()
    client.close()


def test_send_task_by_name_without_the_client(resources: Any, worker: Path, sample_facts: Path) -> None:
    """What an app that does not import tempr does: send_task by name, AsyncResult.get()."""
    from celery import Celery

    from config.celery import celery_config

    bank = sample_bank(resources, sample_facts)
    plain = Celery("someapp", set_as_current=False)
    plain.conf.update(
        celery_config(resources.settings, resources.endpoints.broker_url, resources.endpoints.result_backend)
    )
    request = {"query": "Who is Carol?", "query_timestamp": WHEN.isoformat()}
    from tempr.auth import local_key

    key = local_key(resources.settings)  # an app passes its API key; the start task checks it
    result = plain.send_task("tempr.recall.start", kwargs={"bank_id": bank, "request": request, "api_key": key})
    answer = result.get(timeout=60)
    expected = _direct(resources, bank, RecallRequest.model_validate(request))
    assert comparable(RecallResponse.model_validate(answer)) == comparable(expected)
    # The stored result as any reader sees it (the worker writes the answer's own JSON into it:
    # config.codec.EncodedAnswer), read with the standard library, not this process's decoder.
    raw = plain.backend.client.get(plain.backend.get_key_for_task(result.id))
    stored = json.loads(raw)
    assert stored["status"] == "SUCCESS" and stored["result"] == answer
    plain.close()


@pytest.fixture(scope="module")
def cache_redis(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = LocalRedis(tmp_path_factory.mktemp("cache-redis"))
    status = server.up()
    yield server, f"{status.url}/0"
    server.down()


def test_cache_miss_hit_bank_write_and_redis_down(
    resources: Any, stack: Any, bank_id: str, tmp_path: Path, cache_redis: Any
) -> None:
    server, cache_url = cache_redis
    deps = IngestDeps(resources.engine, resources.embedder, resources.extractor, resources.settings)
    ingest_facts(
        bank_id,
        parse_array(
            [
                {"id": "1", "text": "Alice works at Google as a research engineer.", "entities": ["Alice", "Google"]},
                {"id": "2", "text": "Bob moved to Lisbon in 2022.", "entities": ["Bob", "Lisbon"]},
            ]
        ),
        deps,
    )
    env = {"TEMPR_CACHE_URL": cache_url}
    with extra_worker(
        "cache",
        tmp_path,
        env=env,
        broker_url=redis_db_url(stack.redis_url, 6),
        result_backend=resources.endpoints.result_backend,
    ) as w:
        ask = {"query": "Where does Alice work?", "query_timestamp": WHEN}
        first = recall_async(bank_id, app=w.app, **ask).get(60)
        second = recall_async(bank_id, app=w.app, **ask).get(60)
        assert (first.cache, second.cache) == ("miss", "hit")
        assert comparable(first) == comparable(second)
        assert "cache_lookup" in second.timings_ms and "strategies" not in second.timings_ms
        # a different request is a different key
        assert recall_async(bank_id, app=w.app, query="Where does Alice work?", budget="low").get(60).cache == "miss"

        now = {"id": "3", "text": "Alice now works at OpenAI.", "entities": ["Alice", "OpenAI"]}
        ingest_facts(bank_id, parse_array([{**now, "chunk": {"id": "t3", "text": "Alice: I'm at OpenAI now."}}]), deps)
        third = recall_async(bank_id, app=w.app, **ask).get(60)
        assert third.cache == "miss", "a write to the bank must bypass every cached answer"
        assert any("OpenAI" in r.text for r in third.results)
        assert recall_async(bank_id, app=w.app, **ask).get(60).cache == "hit"
        assert embed_missing_chunks(deps, bank_id) == {bank_id: 1}  # the ranker reads chunk vectors
        fourth = recall_async(bank_id, app=w.app, **ask).get(60)
        assert fourth.cache == "miss", "chunk vectors bypass it too"

        server.down()
        started = time.perf_counter()
        down1 = recall_async(bank_id, app=w.app, **ask).get(60)
        down2 = recall_async(bank_id, app=w.app, **ask).get(60)
        assert (down1.cache, down2.cache) == ("miss", "miss")
        assert comparable(down1) == comparable(fourth)
        assert time.perf_counter() - started < 30
