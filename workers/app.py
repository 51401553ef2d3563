"""The Celery app. Run one worker pool per queue set (see config/celery.py and docs/execution.md):

tempr worker --queues retrieve,fuse                       # strategies, analysis, fusion
tempr worker --queues rerank --pool threads --concurrency 8   # one model, batched, GPU if any
tempr worker --queues ingest,webhooks
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import Celery
from celery.signals import celeryd_after_setup, worker_process_init, worker_ready

from config.celery import celery_config, make_celery
from workers import job_context, telemetry
from workers.resources import get_resources

TASK_MODULES = ["tasks.ingest", "tasks.recall", "tasks.retrieve", "tasks.fuse", "tasks.rerank", "tasks.webhooks"]


def make_app(broker_url: str | None = None, result_backend: str | None = None) -> Celery:
    """The workers' Celery app (task modules included); by default on this process's endpoints.

    Apps that only enqueue (clients, the API, tests pointing at another broker) need no task
    modules: ``tempr.client`` makes its own with ``config.celery.make_celery`` and sends by name.
    """

    def conf() -> dict[str, Any]:
        res = get_resources()
        return {
            **celery_config(
                res.settings, broker_url or res.endpoints.broker_url, result_backend or res.endpoints.result_backend
            ),
            **job_context.LOG_FORMATS,
        }

    return make_celery(conf, TASK_MODULES)


job_context.install_log_records()  # every log record gets job_id (the worker's formats print it)
app = make_app()
app.set_current()


def _consumes_rerank(celery_app: Celery) -> bool:
    consume = celery_app.amqp.queues.consume_from
    return not consume or "rerank" in consume


def _warm_rerank_model() -> None:
    if get_resources().settings.reranker_model and _consumes_rerank(app):
        from workers.rerank_batcher import warm_up

        warm_up()


def _consumes_fuse(celery_app: Celery) -> bool:
    consume = celery_app.amqp.queues.consume_from
    return not consume or "fuse" in consume


def _warm_embedder() -> None:
    """Fuse workers embed every query (the start task's analysis): a threads or solo pool loads
    the model in the background at start, so a freshly started or scaled-out pod does not make its
    first recalls wait for it (26-61 s in a fleet-test trial on a loaded 2-core machine). Prefork
    children still load it on their first query."""
    if not _consumes_fuse(app):
        return

    def run() -> None:
        try:
            get_resources().embedder.embed(["warm up"])
        except Exception:
            logging.getLogger(__name__).exception("embedder warm-up failed")

    threading.Thread(target=run, name="embedder-warm-up", daemon=True).start()


def _warm_temporal() -> None:
    """Load the temporal analyser's tables and dateparser's locales now, not on the first query."""
    from tempr.temporal import warm_up

    warm_up(get_resources().settings.temporal_languages)


@celeryd_after_setup.connect
def _tracing_in_main_process(instance: Any = None, **_: object) -> None:
    """Threads and solo pools run tasks in this process: trace here (prefork: in each child)."""
    if "prefork" not in str(getattr(instance, "pool_cls", "prefork")):
        telemetry.setup_worker(get_resources().settings)


@worker_process_init.connect
def _after_fork(**_: object) -> None:
    from workers import rerank_batcher

    get_resources().reset_after_fork()
    telemetry.setup_worker(get_resources().settings)
    rerank_batcher.reset_after_fork()
    _warm_rerank_model()
    _warm_temporal()


@worker_ready.connect
def _ready(sender: Any = None, **_: object) -> None:
    pool_cls = getattr(getattr(sender, "controller", None), "pool_cls", None)
    if "prefork" not in getattr(pool_cls, "__module__", "prefork"):  # threads/solo: this process works
        _warm_rerank_model()
        _warm_embedder()
        _warm_temporal()
    port = get_resources().settings.worker_metrics_port
    if port:
        from workers import metrics

        metrics.serve(port, app)
