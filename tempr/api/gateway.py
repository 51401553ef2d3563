"""What the routes share: the Celery app to enqueue on, the job store, settings, resources."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from celery import Celery
from fastapi import Request

from config.settings import Settings
from tempr.client import RecallJob, recall_async
from tempr.jobs.records import JobStore
from tempr.jobs.redis_client import cache_redis
from tempr.recall.models import RecallRequest


@dataclass
class Gateway:
    celery_app: Celery
    resources: Any  # the process's resources (workers.resources.Resources): settings, endpoints, engine, models

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


def gateway(request: Request) -> Gateway:
    return request.app.state.gateway
