"""Celery configuration derived from Settings: queues, routes and fleet-friendly defaults.

Queues, so each can get its own worker pool:
    retrieve  the four strategy tasks (I/O bound: PostgreSQL)
    fuse      query analysis, fusion, boosts, packing, cache writes
    rerank    cross-encoder scoring (GPU where present); prefetch 1
    ingest    fact ingestion (CPU: embeddings, entities)
    webhooks  result callbacks with retries
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from celery import Celery
from kombu import Exchange, Queue

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
    """Fleet defaults: late acks (a lost worker's task is redelivered), prefetch 1 (a slow task
    never holds others hostage; a threads-pool rerank worker still reserves `concurrency` tasks,
    which is what lets its batcher merge them), time limits, task events for Flower."""
    return {
        "broker_url": broker_url,
        "result_backend": result_backend,
        # One direct exchange per queue: a bare Queue(name) would bind every queue to the default
        # exchange with the same routing key, and RabbitMQ would copy each message to all of them.
        "task_queues": [Queue(name, Exchange(name, type="direct"), routing_key=name) for name in QUEUES],
        "task_default_queue": "fuse",
        "task_routes": ROUTES,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        # Per-task limits for strategies are set per message (TEMPR_STRATEGY_TIMEOUT_S, the deadline);
        # these global ones only stop a runaway task.
        "task_time_limit": max(settings.recall_timeout_s * 4, 600),
        "task_soft_time_limit": max(settings.recall_timeout_s * 3, 540),
        # Chord bookkeeping and step results; the job record (tempr.jobs.records) keeps the answer longer.
        "result_expires": settings.celery_result_expires_s,
        "result_extended": False,  # would store every step's args (plans, candidate lists) again
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": {"visibility_timeout": 3600},
        "worker_send_task_events": True,  # Flower
        "task_send_sent_event": True,
        "task_track_started": True,
        "worker_hijack_root_logger": False,
        "worker_cancel_long_running_tasks_on_connection_loss": True,
    }


def make_celery(conf: Callable[[], dict[str, Any]], include: Sequence[str] = ()) -> Celery:
    """A Celery app whose configuration is built lazily, when first read (``conf()``).

    So importing a module that makes one before the services are up (a test collecting modules,
    a CLI parsing arguments) does not freeze an empty broker URL. Apps that only enqueue need no
    task modules (``include``): they send by name."""
    app = Celery("tempr", include=list(include), set_as_current=False)
    app.add_defaults(conf)
    return app
