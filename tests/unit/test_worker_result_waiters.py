"""A worker builds a GroupResult for every chord it sends; it must not register a waiter for it."""

from __future__ import annotations

from celery import Celery
from celery.backends.redis import RedisBackend
from celery.result import AsyncResult, GroupResult

from workers.result_waiters import never_wait


def _backend(app: Celery) -> RedisBackend:
    class WorkerBackend(RedisBackend):  # a subclass: the patch must not leak into this test process's others
        pass

    # Port 9 (discard): nothing listens, so a SUBSCRIBE attempt would fail the test loudly.
    return WorkerBackend(app=app, url="redis://127.0.0.1:9/0")


def test_a_group_built_in_a_worker_leaves_no_pending_result_and_subscribes_to_nothing() -> None:
    app = Celery("t", set_as_current=False)
    backend = _backend(app)
    assert never_wait(backend) is True
    members = [AsyncResult(f"strategy-{i}", backend=backend, app=app) for i in range(4)]
    for _ in range(50):  # fifty recalls' chords
        GroupResult("group", members, app=app, backend=backend)
    concrete, weak = backend._pending_results
    assert not concrete and not weak
    assert not backend.result_consumer.subscribed_to


def test_never_wait_patches_a_class_once_and_leaves_the_stock_backend_alone() -> None:
    app = Celery("t", set_as_current=False)
    backend = _backend(app)
    assert never_wait(backend) is True
    assert never_wait(backend) is False  # idempotent: worker_init may run once per pool
    assert RedisBackend.add_pending_result is not type(backend).add_pending_result
