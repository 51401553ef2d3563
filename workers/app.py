"""The Celery app. Run one worker pool per queue set (see config/celery.py and docs/execution.md):

tempr worker --queues retrieve,fuse                       # strategies, analysis, fusion
tempr worker --queues rerank --pool threads --concurrency 8   # one model, batched, GPU if any
tempr worker --queues ingest,webhooks
"""

from __future__ import annotations

import logging
import os
import warnings
from typing import Any

from celery import Celery
from celery.exceptions import SecurityWarning
from celery.signals import celeryd_after_setup, task_revoked, worker_init, worker_process_init, worker_ready

from config.celery import celery_config, make_celery
from tempr.heap import freeze_warm_heap
from workers import control, job_context, result_waiters, telemetry
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


control.register()  # the `tempr_pool_ready` remote-control command (`tempr services up` waits on it)
job_context.install_worker_logging()  # job_id on every record; one INFO line per job (see job_context)
app = make_app()
app.set_current()
log = logging.getLogger(__name__)


def _quiet_root_warning() -> bool:
    """Celery warns on every start when a worker runs as root. Its risk is pickle: a message that
    runs code when loaded. tempr's workers accept JSON only (config/celery.py), so that warning does
    not apply and only hides real ones; it is silenced, and one line says so instead. In production
    run workers as an unprivileged user (deploy/systemd sets ``User=tempr``; the Dockerfile too).
    """
    if os.name != "posix" or os.geteuid() != 0:
        return False
    warnings.filterwarnings("ignore", category=SecurityWarning)
    return True


_AS_ROOT = _quiet_root_warning()


def _consumes(celery_app: Celery, queue: str) -> bool:
    consume = celery_app.amqp.queues.consume_from
    return not consume or queue in consume


def _consumes_rerank(celery_app: Celery) -> bool:
    return _consumes(celery_app, "rerank")


def _warm_rerank_model() -> None:
    """The cross-encoder (rerank consumers) and the learned ranker (wherever it runs: on ``rerank``
    beside a cross-encoder, else in the fusion callback on ``fuse``) load now, not on a recall."""
    settings = get_resources().settings
    if settings.reranker_model and _consumes_rerank(app):
        from workers.rerank_batcher import warm_up

        warm_up()
    ranker_here = _consumes_rerank(app) if settings.reranker_model else _consumes(app, "fuse")
    if not ranker_here:
        return
    ranker = get_resources().ranker
    if ranker is not None:
        ranker.uses_cross_encoder  # noqa: B018 - reading it loads the model now, not on the first recall


def _warm_temporal() -> None:
    """Load the temporal analyser's tables and dateparser's locales now, not on the first query."""
    from tempr.temporal import warm_up

    warm_up(get_resources().settings.temporal_languages)


def _warm_embedder() -> None:
    """Load the query embedder before this process takes its first task (workers that analyse
    queries, i.e. consume ``fuse``): a prefork child is handed tasks only once this returns, so a
    child that replaces a killed or recycled one never makes a recall wait for a model load."""
    if _consumes(app, "fuse"):
        import time

        started = time.perf_counter()
        get_resources().embedder.embed_tokens(["warm up"])  # tokens too: their masks are built on first use
        log.info("query embedder warm in %.0f ms", (time.perf_counter() - started) * 1000)


def _one_blas_thread() -> None:
    """One BLAS thread in a process that recalls. The rank stage's matrix products are small
    (a dozen query tokens against a few thousand), and several worker processes already share
    each core, so OpenBLAS' own threads add no speed there; they spin while they wait instead.
    Measured in one process (``token_match.columns``, 266 candidates, 300 calls with 2 ms gaps):
    5.1-6.4 ms of CPU a call with OpenBLAS' default threads against 1.9 ms with one, for the
    same 1.6-2.2 ms of wall time (BENCHMARKS.md, "One BLAS thread per recall process"). Ingest
    workers keep the default: their link products are larger and were not measured so."""
    if not any(_consumes(app, q) for q in ("fuse", "rerank", "retrieve")):
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


@worker_init.connect
def _before_fork(sender: Any = None, **_: object) -> None:
    """Prefork workers that analyse queries load the temporal tables and the embedder's weights
    once, in the parent, before the pool forks: children share them (copy-on-write), and a child
    that replaces a killed or recycled one is ready in well under a second instead of loading a
    model. No inference runs in the parent (a thread pool started before fork is not fork-safe)."""
    result_waiters.never_wait(app.backend)  # this process never waits on a result (see the module)
    if "prefork" in str(getattr(sender, "pool_cls", "")).lower():
        if _consumes(app, "fuse"):
            _warm_temporal()
            get_resources().embedder  # noqa: B018 - the property loads the weights
        freeze_warm_heap(get_resources().settings.gc_freeze, "worker parent, before the pool forks")


@celeryd_after_setup.connect
def _tracing_in_main_process(instance: Any = None, **_: object) -> None:
    """Threads and solo pools run tasks in this process: trace here (prefork: in each child)."""
    if "prefork" not in str(getattr(instance, "pool_cls", "prefork")):
        telemetry.setup_worker(get_resources().settings)


@worker_process_init.connect
def _after_fork(**_: object) -> None:
    from workers import rerank_batcher

    get_resources().reset_after_fork()
    _one_blas_thread()
    telemetry.setup_worker(get_resources().settings)
    rerank_batcher.reset_after_fork()
    _warm_rerank_model()
    _warm_temporal()
    _warm_embedder()
    freeze_warm_heap(get_resources().settings.gc_freeze, "pool process, warm")


@worker_ready.connect
def _ready(sender: Any = None, **_: object) -> None:
    from tempr.auth import warn_if_off

    warn_if_off(get_resources().settings, "tempr worker")
    if _AS_ROOT:
        accepted = ", ".join(app.conf.accept_content)
        log.info("running as root: messages are accepted as %s only (no pickle); prefer an unprivileged user", accepted)
    pool_cls = getattr(getattr(sender, "controller", None), "pool_cls", None)
    if "prefork" not in getattr(pool_cls, "__module__", "prefork"):  # threads/solo: this process works
        _one_blas_thread()
        _warm_rerank_model()
        if _consumes(app, "fuse"):  # a webhooks-only worker never analyses a query
            _warm_temporal()
            _warm_embedder()
        freeze_warm_heap(get_resources().settings.gc_freeze, "worker, warm")
    port = get_resources().settings.worker_metrics_port
    if port:
        from workers import metrics

        metrics.serve(port, app)


@task_revoked.connect
def _revoked(request: Any = None, expired: bool = False, **_: object) -> None:
    """A message Celery dropped because its ``expires`` (the job's deadline) had passed."""
    if expired:
        from workers import metrics

        metrics.STALE_MESSAGES.labels("expired").inc()
