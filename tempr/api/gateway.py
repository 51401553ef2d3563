"""What the routes share: the Celery app to enqueue on, the job store, settings, resources."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from celery import Celery
from fastapi import Request

from config.settings import Settings
from tempr.auth import KeyCache
from tempr.bank_ids import check_bank_id
from tempr.client import RecallJob, job_request_hash, recall_async
from tempr.jobs.cache import RecallCache, cache_key, stamp_hit
from tempr.jobs.records import JobStore
from tempr.jobs.redis_client import cache_redis
from tempr.recall.models import RecallRequest
from tempr.store.banks_repo import bank_state


@dataclass
class Gateway:
    celery_app: Celery
    resources: Any  # the process's resources (workers.resources.Resources): settings, endpoints, engine, models
    keys: KeyCache = field(init=False)

    chord_parts: Any = None
    """``tempr.api.miss.ChordParts``: what starting a chord here needs (None: misses take the start task)."""
    analyses: bool = field(init=False)
    """Whether this gateway analyses a miss itself (``tempr.api.miss``): TEMPR_GATEWAY_ANALYSE and the
    chord parts given, unless its query model failed to load at start."""

    def __post_init__(self) -> None:
        self.keys = KeyCache(self.settings.auth_cache_s)
        self.analyses = bool(self.settings.gateway_analyse and self.chord_parts is not None)

    @property
    def settings(self) -> Settings:
        return self.resources.settings

    @property
    def store(self) -> JobStore:
        client, breaker = cache_redis(self.resources.endpoints.cache_url)
        return JobStore(client, self.settings.job_result_ttl_s, breaker)

    def enqueue(
        self, bank_id: str, request: RecallRequest, idempotency_key: str | None, tenant: str | None
    ) -> RecallJob:
        return recall_async(
            bank_id,
            request,
            app=self.celery_app,
            store=self.store,
            settings=self.settings,
            idempotency_key=idempotency_key,
            tenant=tenant,
            engine=self.resources.engine,  # an unknown bank is 404 at once, for the async route too
        )

    def from_cache(self, bank_id: str, request: RecallRequest, tenant: str | None) -> CacheLookup | None:
        """Look the answer up here, without a trip through the workers; None for a request that
        must take the start task (a callback or an Idempotency-Key: its webhook and job reuse live
        there).

        The start task would do the same lookup (same key: bank version, settings fingerprint,
        request hash) after a queue hop; answering here costs one PostgreSQL and two Redis round
        trips. A hit's stored JSON is sent as it is, with this hit's stamps spliced in
        (``stamp_hit``): no parse, no model, no re-serialisation. The job still gets a record
        (GET /v1/jobs/{id} works as for any job). A miss keeps the key and the bank's vector space,
        so ``tempr.api.miss`` can start the chord without reading them again.
        """
        if request.callback_url or request.idempotency_key:
            return None
        started = time.time()
        check_bank_id(bank_id)
        with self.resources.engine.connect() as conn:
            version, space = bank_state(conn, bank_id)
        key = cache_key(bank_id, version, request, self.settings)
        client, breaker = cache_redis(self.resources.endpoints.cache_url)
        raw = RecallCache(client, self.settings.cache_ttl_s, breaker).get_raw(key)
        answer = None if raw is None else stamp_hit(raw, ms_since_wall(started))
        if answer is None:  # a miss (or an unreadable entry: answered afresh)
            return CacheLookup(key=key, space=space, lookup_ms=ms_since_wall(started), version=version)
        job_id = str(uuid.uuid4())
        self.store.create_answered(
            job_id, bank_id=bank_id, answer_json=answer, request_hash=job_request_hash(bank_id, request), tenant=tenant
        )
        return CacheLookup(key=key, space=space, lookup_ms=ms_since_wall(started), hit=(job_id, answer))


@dataclass(frozen=True)
class CacheLookup:
    """What ``Gateway.from_cache`` found: on a hit, (job id, response JSON); on a miss, what
    starting the job needs (the cache key the answer will be stored under, the bank's vector
    space and version) and how long the lookup took."""

    key: str
    space: str
    lookup_ms: float
    hit: tuple[str, bytes] | None = None
    version: int | None = None


def ms_since_wall(started: float) -> float:
    return round((time.time() - started) * 1000, 3)


def gateway(request: Request) -> Gateway:
    return request.app.state.gateway
