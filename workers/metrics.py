"""Prometheus metrics for the worker fleet and the gateway (prometheus_client, multi-process mode).

Every worker process (prefork children included) and the API write their samples to files under
``PROMETHEUS_MULTIPROC_DIR`` (default ``<state_dir>/metrics``); ``GET /metrics`` on the API, or a
worker's own port (``TEMPR_WORKER_METRICS_PORT``), aggregates every process on that host. Queue
depth is read from the broker at scrape time and the cache hit ratio is derived from the counters,
so neither needs a writer.

    tempr_stage_seconds{stage}            latency per stage: analyse, strategy.<name>, fuse, rerank,
                                          finish, total, and queue waits queue.<step>
    tempr_recalls_total{outcome}          succeeded | failed | timeout
    tempr_cache_requests_total{result}    hit | miss
    tempr_cache_hit_ratio                 hits / (hits + misses), at scrape time
    tempr_strategy_degraded_total{strategy}
    tempr_rerank_batch_pairs              pairs per cross-encoder call
    tempr_rerank_batch_requests           requests merged into one cross-encoder call
    tempr_webhook_deliveries_total{outcome}  delivered | retry | failed | refused
    tempr_queue_depth{queue}              messages waiting in each broker queue
    tempr_stale_messages_total{task}      messages taken from a queue past their job's deadline and
                                          dropped unrun (e.g. redelivered after a worker died; the
                                          ones Celery drops by their `expires` count as "expired")
    tempr_task_wait_seconds{queue}        publish -> start of every task (countdowns excluded)
    tempr_task_seconds{queue,task}        run time of every task
    tempr_unit_cache_rows_total{source}   rows the learned ranker read: cache | postgres
                                          (tempr.store.unit_cache; TEMPR_RECALL_UNIT_CACHE)
    tempr_task_events_total{queue,task,event}  failure | retry | expired (dropped unrun past its
                                          deadline) | revoked
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def _multiproc_dir() -> Path:
    found = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not found:
        from config.settings import get_settings

        settings = get_settings()
        found = str(settings.metrics_dir or settings.state_dir.resolve() / "metrics")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = found
    path = Path(found)
    path.mkdir(parents=True, exist_ok=True)
    return path


METRICS_DIR = _multiproc_dir()

from prometheus_client import (  # noqa: E402 - the multi-process dir must be set before the import
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    values,
)
from prometheus_client.core import GaugeMetricFamily  # noqa: E402
from prometheus_client.multiprocess import MultiProcessCollector  # noqa: E402

if values.ValueClass is values.MutexValue:  # prometheus_client was imported before the env was set
    values.ValueClass = values.MultiProcessValue()

_LATENCY = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
STAGE_SECONDS = Histogram(
    "tempr_stage_seconds", "Recall latency per stage (queue.* = time waiting in a queue)", ["stage"], buckets=_LATENCY
)
RECALLS = Counter("tempr_recalls_total", "Recall jobs by outcome", ["outcome"])
CACHE_REQUESTS = Counter("tempr_cache_requests_total", "Recall cache lookups", ["result"])
STRATEGY_DEGRADED = Counter("tempr_strategy_degraded_total", "Strategies that failed or timed out", ["strategy"])
RERANK_BATCH_PAIRS = Histogram(
    "tempr_rerank_batch_pairs", "Pairs per cross-encoder call", buckets=(1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
)
RERANK_BATCH_REQUESTS = Histogram(
    "tempr_rerank_batch_requests",
    "Rerank requests merged into one model call",
    buckets=(1, 2, 3, 4, 6, 8, 12, 16, 32, 64),
)
STALE_MESSAGES = Counter(
    "tempr_stale_messages_total", "Messages dropped unrun because their job's deadline had passed", ["task"]
)
TASK_WAIT = Histogram(
    "tempr_task_wait_seconds",
    "Time from publish to start, per queue (countdowns excluded)",
    ["queue"],
    buckets=_LATENCY,
)
TASK_SECONDS = Histogram("tempr_task_seconds", "Task run time per queue and task", ["queue", "task"], buckets=_LATENCY)
TASK_EVENTS = Counter(
    "tempr_task_events_total", "Task failures, retries and messages dropped as expired", ["queue", "task", "event"]
)
UNIT_CACHE_ROWS = Counter(
    "tempr_unit_cache_rows_total", "Rows the learned ranker read, from the row cache or PostgreSQL", ["source"]
)


def observe_unit_cache(from_cache: int, from_postgres: int) -> None:
    """``UnitCache``'s observer: one recall's row counts by where they came from."""
    if from_cache:
        UNIT_CACHE_ROWS.labels("cache").inc(from_cache)
    if from_postgres:
        UNIT_CACHE_ROWS.labels("postgres").inc(from_postgres)


WEBHOOKS = Counter("tempr_webhook_deliveries_total", "Webhook delivery attempts by outcome", ["outcome"])


def observe_timings(timings_ms: dict[str, float], *, skip: Iterable[str] = ()) -> None:
    skipped = set(skip)
    for stage, ms in timings_ms.items():
        if stage not in skipped and isinstance(ms, int | float) and ms >= 0:
            STAGE_SECONDS.labels(stage).observe(ms / 1000.0)


class _JobOutcomes:
    """How ``tempr.jobs.outcome`` counts a job's end here (an ``OutcomeObserver``)."""

    def succeeded(self, response: Any, *, cached: bool) -> None:
        CACHE_REQUESTS.labels("hit" if cached else "miss").inc()
        RECALLS.labels("succeeded").inc()
        observe_timings(response.timings_ms)

    def failed(self, exc: BaseException) -> None:
        from config.errors import RecallTimeout

        RECALLS.labels("timeout" if isinstance(exc, RecallTimeout) else "failed").inc()


OUTCOMES = _JobOutcomes()


def observe_batch(requests: int, pairs: int) -> None:
    RERANK_BATCH_REQUESTS.observe(requests)
    RERANK_BATCH_PAIRS.observe(pairs)


class _DerivedCollector:
    """Gauges computed at scrape time: queue depth from the broker, cache hit ratio from counters."""

    def __init__(self, celery_app: Any | None, path: Path) -> None:
        self.celery_app = celery_app
        self.path = path

    def collect(self) -> Iterator[Any]:
        yield self._hit_ratio()
        if self.celery_app is not None:
            yield self._queue_depth()

    def _hit_ratio(self) -> GaugeMetricFamily:
        counts = {"hit": 0.0, "miss": 0.0}
        for family in MultiProcessCollector(None, path=str(self.path)).collect():
            if family.name == "tempr_cache_requests":
                for sample in family.samples:
                    if sample.name.endswith("_total") and sample.labels.get("result") in counts:
                        counts[sample.labels["result"]] += sample.value
        total = counts["hit"] + counts["miss"]
        gauge = GaugeMetricFamily("tempr_cache_hit_ratio", "Cache hits / lookups since the metrics dir was created")
        gauge.add_metric([], counts["hit"] / total if total else 0.0)
        return gauge

    def _queue_depth(self) -> GaugeMetricFamily:
        gauge = GaugeMetricFamily("tempr_queue_depth", "Messages waiting per broker queue", labels=["queue"])
        for queue, depth in queue_depths(self.celery_app).items():
            gauge.add_metric([queue], depth)
        return gauge


def queue_depths(celery_app: Any) -> dict[str, float]:
    """Messages ready per queue (Redis list length / AMQP message_count); -1 when the broker is down."""
    from kombu.exceptions import OperationalError as KombuOperationalError

    from config.celery import QUEUES

    out: dict[str, float] = {}
    try:
        with celery_app.connection_for_read() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            channel = conn.default_channel
            for queue in QUEUES:
                try:
                    out[queue] = float(channel.queue_declare(queue=queue, passive=True).message_count)
                except conn.channel_errors:  # not declared yet; AMQP closes the channel on that
                    out[queue] = 0.0
                    channel = conn.channel()
    except (KombuOperationalError, OSError) as exc:
        log.warning("queue depth unavailable: %s", exc)
        return {queue: -1.0 for queue in QUEUES}
    return out


def registry(celery_app: Any | None = None, path: Path | None = None) -> CollectorRegistry:
    reg = CollectorRegistry()
    MultiProcessCollector(reg, path=str(path or METRICS_DIR))
    reg.register(_DerivedCollector(celery_app, path or METRICS_DIR))
    return reg


def render(celery_app: Any | None = None, path: Path | None = None) -> bytes:
    return generate_latest(registry(celery_app, path))


def serve(port: int, celery_app: Any | None = None) -> None:
    """A worker host without the API: serve the aggregate on ``port`` from a daemon thread."""
    from prometheus_client import start_http_server

    start_http_server(port, registry=registry(celery_app))
