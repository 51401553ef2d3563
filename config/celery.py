"""Celery configuration derived from Settings: queues, routes and fleet-friendly defaults.

Queues, so each can get its own worker pool:
    retrieve  the four strategy tasks (I/O bound: PostgreSQL)
    fuse      query analysis, fusion, boosts, packing, cache writes
    rerank    cross-encoder scoring (GPU where present); prefetch 1
    ingest    fact ingestion (CPU: embeddings, entities)
    webhooks  result callbacks with retries
"""

from __future__ import annotations

from typing import Any

from kombu import Queue

from config.settings import Settings

QUEUES = ("retrieve", "fuse", "rerank", "ingest", "webhooks")

ROUTES = {
    "tempr.retrieve.*": {"queue": "retrieve"},
    "tempr.fuse.*": {"queue": "fuse"},
    "tempr.recall.*": {"queue": "fuse"},
    "tempr.rerank.*": {"queue": "rerank"},
    "tempr.ingest.*": {"queue": "ingest"},
    "tempr.webhooks.*": {"queue": "webhooks"},
}


def celery_config(settings: Settings, broker_url: str | None, result_backend: str | None) -> dict[str, Any]:
    return {
        "broker_url": broker_url,
        "result_backend": result_backend,
        "task_queues": [Queue(name) for name in QUEUES],
        "task_default_queue": "fuse",
        "task_routes": ROUTES,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_time_limit": max(settings.recall_timeout_s * 4, 600),
        "task_soft_time_limit": max(settings.recall_timeout_s * 3, 540),
        "result_expires": settings.job_result_ttl_s,
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": {"visibility_timeout": 3600},
        "worker_send_task_events": True,
        "task_send_sent_event": True,
        "task_track_started": True,
        "result_extended": True,
        "worker_hijack_root_logger": False,
    }
