"""The Celery app. Run workers with `tempr worker --queues retrieve,fuse` (see config/celery.py)."""

from __future__ import annotations

from celery import Celery
from celery.signals import worker_process_init

from config.celery import celery_config
from workers.resources import get_resources

_res = get_resources()
app = Celery("tempr", include=["tasks.ingest"])
app.conf.update(celery_config(_res.settings, _res.endpoints.broker_url, _res.endpoints.result_backend))


@worker_process_init.connect
def _after_fork(**_: object) -> None:
    get_resources().reset_after_fork()
