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
from celery.app.amqp import AMQP
from kombu import Exchange, Queue

from config import codec
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


def visibility_timeout_s(settings: Settings) -> float:
    """Redis broker: a message a dead worker never acked comes back after this long.

    It must outlast the longest task (an ingest may run up to ``task_time_limit``), or a task still
    running would be handed to a second worker. Recall messages that come back after it are past
    their deadline and are dropped (``tempr_stale_messages_total``)."""
    if settings.broker_visibility_timeout_s:
        return float(settings.broker_visibility_timeout_s)
    return task_time_limit_s(settings) + 60.0


def task_time_limit_s(settings: Settings) -> float:
    return max(settings.recall_timeout_s * 4, 600)


def _connection_options(settings: Settings) -> dict[str, Any]:
    """Bounded waits on an unreachable broker or result store, so an outage is a fast error.

    Celery's defaults retry a failed publish with growing sleeps and retry a lost result-store
    connection 20 times, one second apart: the gateway answered 500 after ~19 s ("Retry limit
    exceeded ... must be restarted"). Here enqueueing gives up within a few seconds (the gateway
    answers 503 with Retry-After) and workers retry the broker forever, every second or two, so
    they resume within seconds when it returns."""
    timeout = settings.broker_connect_timeout_s
    quick = {"max_retries": settings.broker_publish_retries, "interval_start": 0, "interval_step": 0.2}
    return {
        "broker_connection_timeout": timeout,
        "broker_connection_max_retries": None,  # workers: never give up on the broker
        "broker_pool_limit": 10,
        "task_publish_retry_policy": {**quick, "interval_max": 0.5},
        "redis_socket_connect_timeout": timeout,
        "redis_socket_timeout": max(timeout * 5, 10.0),
        "redis_retry_on_timeout": False,
        "redis_backend_health_check_interval": 10,
        "result_backend_transport_options": {"retry_policy": {**quick, "interval_max": 0.5}},
    }


def _transport_options(settings: Settings, broker_url: str | None) -> dict[str, Any]:
    options: dict[str, Any] = {"visibility_timeout": visibility_timeout_s(settings)}
    if (broker_url or "").startswith(("redis://", "rediss://")):
        options.update(
            socket_connect_timeout=settings.broker_connect_timeout_s,
            socket_timeout=max(settings.broker_connect_timeout_s * 5, 10.0),
            health_check_interval=10,
        )
    return options


def celery_config(settings: Settings, broker_url: str | None, result_backend: str | None) -> dict[str, Any]:
    """Fleet defaults: late acks (a lost worker's task is redelivered), prefetch 1 (a slow task
    never holds others hostage; a threads-pool rerank worker still reserves `concurrency` tasks,
    which is what lets its batcher merge them), time limits, task events only when asked (Flower asks), bounded
    connection retries, and prefork children recycled past a memory (or task-count) limit. Building
    it installs the faster JSON decoder in this process (``config.codec``)."""
    codec.install()
    return {
        **_connection_options(settings),
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
        "task_time_limit": task_time_limit_s(settings),
        "task_soft_time_limit": max(settings.recall_timeout_s * 3, 540),
        # Chord bookkeeping and step results; the job record (tempr.jobs.records) keeps the answer longer.
        "result_expires": settings.celery_result_expires_s,
        "result_extended": False,  # would store every step's args (plans, candidate lists) again
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": _transport_options(settings, broker_url),
        "worker_consumer": "workers.consumer:QuickReconnectConsumer",
        # A new prefork child loads the embedder before it reports up (workers/app.py); billiard's
        # default 4 s would kill it mid-load on a busy host and fork another, forever.
        "worker_proc_alive_timeout": 180.0,
        "worker_max_memory_per_child": (settings.worker_max_memory_per_child_mb or 0) * 1024 or None,
        "worker_max_tasks_per_child": settings.worker_max_tasks_per_child,
        "worker_send_task_events": settings.task_events,  # Flower switches them on while it runs
        "task_send_sent_event": settings.task_events,
        "task_track_started": True,
        "worker_hijack_root_logger": False,
        "worker_cancel_long_running_tasks_on_connection_loss": True,
    }


class ShortReprAMQP(AMQP):
    """Task messages carry a printable copy of their arguments (``argsrepr``, for Flower and logs).
    tempr's arguments are JSON payloads of several KB (a plan with its embedding, the chord body
    in each of four strategy messages): Celery's ``saferepr`` walked all of it on every publish,
    ~0.4 ms a message on the recall's critical path. Cut at 120 characters, which is all a
    reader of those views can use anyway."""

    argsrepr_maxsize = 120
    kwargsrepr_maxsize = 120


def make_celery(conf: Callable[[], dict[str, Any]], include: Sequence[str] = ()) -> Celery:
    """A Celery app whose configuration is built lazily, when first read (``conf()``).

    So importing a module that makes one before the services are up (a test collecting modules,
    a CLI parsing arguments) does not freeze an empty broker URL. Apps that only enqueue need no
    task modules (``include``): they send by name."""
    app = Celery("tempr", include=list(include), set_as_current=False, amqp=ShortReprAMQP)
    app.add_defaults(conf)
    return app
