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
from tempr.store.banks_repo import require_bank


@dataclass
class Gateway:
    celery_app: Celery
    resources: Any  # the process's resources (workers.resources.Resources): settings, endpoints, engine, models
    keys: KeyCache = field(init=False)

    def __post_init__(self) -> None:
        self.keys = KeyCache(self.settings.auth_cache_s)

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

    def from_cache(self, bank_id: str, request: RecallRequest, tenant: str | None) -> tuple[str, bytes] | None:
        """A cached answer read here, without a trip through the workers: (job id, response JSON), or None.

        The start task would do the same lookup (same key: bank version, settings fingerprint,
        request hash) after a queue hop; answering here costs one PostgreSQL and two Redis round
        trips. The stored JSON is sent as it is, with this hit's stamps spliced in
        (``stamp_hit``): no parse, no model, no re-serialisation. The job still gets a record
        (GET /v1/jobs/{id} works as for any job). Requests with a callback or an Idempotency-Key
        take the normal path: their webhook and job reuse live there.
        """
        if request.callback_url or request.idempotency_key:
            return None
        started = time.time()
        check_bank_id(bank_id)
        with self.resources.engine.connect() as conn:
            version = require_bank(conn, bank_id)
        key = cache_key(bank_id, version, request, self.settings)
        client, breaker = cache_redis(self.resources.endpoints.cache_url)
        raw = RecallCache(client, self.settings.cache_ttl_s, breaker).get_raw(key)
        answer = None if raw is None else stamp_hit(raw, ms_since_wall(started))
        if answer is None:
            return None
        job_id = str(uuid.uuid4())
        self.store.create_answered(
            job_id, bank_id=bank_id, answer_json=answer, request_hash=job_request_hash(bank_id, request), tenant=tenant
        )
        return job_id, answer


def ms_since_wall(started: float) -> float:
    return round((time.time() - started) * 1000, 3)


def gateway(request: Request) -> Gateway:
    return request.app.state.gateway
