"""Idempotency-Key against a real Redis, under races: no key shared across banks, no job handed to
a caller whose request differs.

The jobs go to a broker database no worker reads (the test checks who gets which job id, not the
recall), so hundreds of racing rounds cost milliseconds each. ``TEMPR_RACE_ROUNDS`` sets the rounds
(200 in ``make test``, 1,000 in ``make fuzz``); each test prints what it counted.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from celery import Celery
from helpers import redis_db_url

from config.errors import ValidationError
from tempr.client import recall_async
from tempr.jobs.records import JobStore
from tempr.jobs.redis_client import cache_redis

pytestmark = pytest.mark.integration
ROUNDS = int(os.environ.get("TEMPR_RACE_ROUNDS", "200"))


@pytest.fixture()
def quiet_app(resources: Any) -> Iterator[Celery]:
    """A Celery app on a broker database that no worker consumes (flushed afterwards)."""
    url = redis_db_url(resources.endpoints.redis_url, 13)
    app = Celery("idem-race", broker=url, backend=url)
    yield app
    redis.Redis.from_url(url).flushdb()
    app.close()


@pytest.fixture()
def store(resources: Any) -> JobStore:
    client, breaker = cache_redis(resources.endpoints.cache_url)
    return JobStore(client, 600, breaker)


def _race(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls at once (released by one barrier); each outcome is a job or the exception."""
    barrier = threading.Barrier(len(calls))
    out: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        barrier.wait()
        try:
            out[i] = calls[i]()
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out


def test_a_colon_in_bank_or_key_never_shares_a_job_across_banks(
    quiet_app: Celery, store: JobStore, resources: Any
) -> None:
    body = {"query": "Where does Alice work?"}
    leaks = 0
    for r in range(ROUNDS):
        bank_a, bank_b = f"tA{r}-{uuid.uuid4().hex[:6]}", None
        bank_b = f"{bank_a}:rN"

        def enqueue(bank: str, key: str) -> Callable[[], Any]:
            return lambda: recall_async(
                bank, body, app=quiet_app, store=store, settings=resources.settings, idempotency_key=key
            )

        jobs = _race([enqueue(bank_a, "rN:k")] + [enqueue(bank_b, "k") for _ in range(5)])
        assert not [j for j in jobs if isinstance(j, Exception)], jobs
        first, rest = jobs[0], jobs[1:]
        leaks += sum(j.id == first.id for j in rest)
        assert len({j.id for j in rest}) == 1  # the five identical requests share one job
        assert sum(not j.reused for j in rest) == 1  # made by exactly one of them
        for job in jobs:
            assert (store.get(job.id) or {}).get("bank_id") == job.bank_id
    print(f"\nidempotency race: {ROUNDS} rounds x (1 call to bank A + 5 to the colliding bank): {leaks} leaks")
    assert leaks == 0


def test_different_bodies_racing_on_one_key_never_share_a_job(
    quiet_app: Celery, store: JobStore, resources: Any
) -> None:
    for r in range(ROUNDS // 4):
        bank, key = f"t-idem-{uuid.uuid4().hex[:8]}", f"key-{r}"
        calls = [
            lambda q=q, bank=bank, key=key: recall_async(
                bank, {"query": q}, app=quiet_app, store=store, settings=resources.settings, idempotency_key=key
            )
            for q in ("first question?", "second question?", "third question?")
        ]
        outcomes = _race(calls)
        made = [o for o in outcomes if not isinstance(o, Exception)]
        refused = [o for o in outcomes if isinstance(o, Exception)]
        assert len(made) == 1 and not made[0].reused, outcomes
        assert len(refused) == 2 and all(
            isinstance(e, ValidationError) and e.field == "idempotency_key" for e in refused
        ), refused


def test_two_api_keys_racing_on_one_bank_and_key_never_get_each_others_job(
    quiet_app: Celery, store: JobStore, resources: Any, make_key: Any
) -> None:
    """Two tenants, both scoped to the same banks, send the same body with the same Idempotency-Key
    at once (3 calls each): each tenant gets one job of its own, never the other's."""
    run = uuid.uuid4().hex[:6]
    keys = {t: make_key(f"race-{t}-{run}", [f"shared-{run}-*"], ["recall"]) for t in ("a", "b")}
    cross = 0
    for r in range(ROUNDS):
        bank, key = f"shared-{run}-{r}", f"k-{r}"
        callers = [t for t in ("a", "b") for _ in range(3)]
        calls = [
            lambda t=t, bank=bank, key=key: recall_async(
                bank,
                {"query": "Where does Alice work?"},
                app=quiet_app,
                store=store,
                settings=resources.settings,
                idempotency_key=key,
                api_key=keys[t].key,
            )
            for t in callers
        ]
        jobs = _race(calls)
        assert not [j for j in jobs if isinstance(j, Exception)], jobs
        by_tenant = {t: {j.id for j, c in zip(jobs, callers, strict=True) if c == t} for t in ("a", "b")}
        assert all(len(ids) == 1 for ids in by_tenant.values()), by_tenant
        cross += len(by_tenant["a"] & by_tenant["b"])
        for job, caller in zip(jobs, callers, strict=True):
            assert (store.get(job.id) or {}).get("tenant") == keys[caller].tenant
    print(f"\ntwo-key race: {ROUNDS} rounds x 2 tenants x 3 calls: {cross} cross-tenant answers")
    assert cross == 0
