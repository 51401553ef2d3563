"""Outages ridden out without a restart (the light cases of `make faults`, which runs them all).

A private Redis (broker, results, jobs; cache off) and a prefork worker on it, with a gateway in a
thread over the session's database: Redis is stopped (the gateway answers a 503 with Retry-After
and a JSON body naming no host or port) and started again on the same port (the gateway and the
worker resume by themselves); a pool child is SIGKILLed mid-load (its recall is redelivered).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import ExtraWorker, extra_worker, sample_bank, wait_for

from tempr.services import manager, process
from tempr.services.redis_server import LocalRedis
from workers.resources import Resources

pytestmark = pytest.mark.integration
BODY = {"query": "Where does Alice work?", "query_timestamp": "2024-06-01T12:00:00+00:00", "timeout_s": 30}


@dataclass
class Private:
    redis: LocalRedis
    api: httpx.Client
    worker: ExtraWorker
    bank: str

    def recall(self) -> httpx.Response:
        return self.api.post(f"/v1/default/banks/{self.bank}/memories/recall", json=BODY)


@pytest.fixture(scope="module")
def private(
    resources: Any, stack: Any, sample_facts: Path, tmp_path_factory: pytest.TempPathFactory, make_key: Any
) -> Iterator[Private]:
    import uvicorn

    from tempr.api.app import create_app

    root = tmp_path_factory.mktemp("outage")
    redis = LocalRedis(root / "redis")
    url = redis.up().url
    assert url is not None
    db = resources.endpoints.database_url
    endpoints = manager.Endpoints(db, url, f"{url}/0", f"{url}/1", f"{url}/2")
    res = Resources(resources.settings.model_copy(update={"redis_url": url, "cache_ttl_s": 0}), endpoints)
    env = {"TEMPR_DATABASE_URL": db, "TEMPR_REDIS_URL": url, "TEMPR_CACHE_URL": f"{url}/2", "TEMPR_CACHE_TTL_S": "0"}
    bank = sample_bank(resources, sample_facts)
    with extra_worker(
        "outage", root, env=env, broker_url=f"{url}/0", result_backend=f"{url}/1", pool="prefork", concurrency=2
    ) as worker:
        port = process.free_port()
        server = uvicorn.Server(
            uvicorn.Config(create_app(celery_app=worker.app, resources=res), port=port, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        wait_for(lambda: server.started, timeout=30, what="uvicorn")
        key = {"Authorization": f"Bearer {make_key('outages', ['*'], ['recall']).key}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=90, trust_env=False, headers=key) as api:
            here = Private(redis, api, worker, bank)
            wait_for(lambda: here.recall().status_code == 200, timeout=180, interval=1, what="a warm worker")
            yield here
        server.should_exit = True
        thread.join(10)
    redis.down()


def test_redis_outage_is_a_fast_503_then_recovers_without_restart(private: Private) -> None:
    import time

    port = private.redis.status().port
    before = private.recall()
    assert before.status_code == 200, before.text
    private.redis.down()
    started = time.monotonic()
    during = private.recall()
    elapsed = time.monotonic() - started
    assert during.status_code == 503, during.text
    assert int(during.headers["Retry-After"]) > 0
    payload = during.json()
    assert payload["error"] == "ServiceUnavailable" and "unavailable" in payload["message"]
    assert "127.0.0.1" not in during.text and str(port) not in during.text
    assert elapsed < 15, f"the outage took {elapsed:.1f} s to answer (Celery's retry loop is ~19 s)"

    private.redis.up()
    assert private.redis.status().port == port  # same port: clients find it again
    after = wait_for(
        lambda: (r := private.recall()).status_code == 200 and r, timeout=60, interval=0.5, what="recovery"
    )
    assert [x["id"] for x in after.json()["results"]] == [x["id"] for x in before.json()["results"]]
    assert private.worker.process.poll() is None  # the same worker, never restarted


def test_worker_child_sigkill_mid_load_loses_no_answer(private: Private) -> None:
    expected = [x["id"] for x in private.recall().json()["results"]]
    answers: list[httpx.Response] = []

    def one() -> None:
        answers.append(private.recall())

    threads = [threading.Thread(target=one) for _ in range(6)]
    for thread in threads:
        thread.start()
    victim = wait_for(lambda: process.children(private.worker.process.pid), timeout=30, what="pool children")[0]
    os.kill(victim, signal.SIGKILL)
    for thread in threads:
        thread.join(120)
    assert len(answers) == 6
    for answer in answers:
        assert answer.status_code != 500, answer.text
        if answer.status_code == 200:
            assert [x["id"] for x in answer.json()["results"]] == expected
        else:  # only a clean, JSON error is acceptable (e.g. 504 if the redelivery missed the deadline)
            assert "error" in answer.json()
    assert sum(a.status_code == 200 for a in answers) >= 5
    assert private.recall().status_code == 200
