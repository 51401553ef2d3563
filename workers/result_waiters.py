"""Workers never wait on a task's result, so they must not register as waiters for one.

Celery's Redis result backend registers a *waiter* for every member of a ``GroupResult`` it
builds (``ResultSet`` ties its members together with a barrier: ``AsyncResult.then`` →
``add_pending_result``) and SUBSCRIBEs to each member's result channel, expecting the caller to
drain them with ``.get()``. The recall start task builds one such group per recall (the chord of
four strategies), and in a worker nothing ever drains it. So each recall left behind, for the life
of the worker process, four pending results (their ``AsyncResult``s, promises and the group's
frozen signatures: measured as most of the worker's growth in a 3,000-recall soak, RELIABILITY.md)
and four subscriptions whose published results piled up in Redis's output buffer for the worker's
idle pub/sub connection.

A worker process is never a waiter: Celery refuses ``.get()`` inside a task, and tempr's tasks
hand results on through the chord and the job store. Registering is therefore switched off for
the result backend class of a worker process (``worker_init``; prefork children inherit it). The
gateway and other clients, which do wait, are separate processes and keep Celery's behaviour,
except while the gateway sends a miss's chord (``sending_only``): it waits on the job's answer
alone, and subscribing to each strategy's result channel would have it receive and decode every
strategy's hits too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_MARK = "_tempr_never_waits"
_SWITCH = "_tempr_sending_switch"
_thread = threading.local()


def _no_waiter(self: Any, result: Any, weak: bool = False, start_drainer: bool = True) -> Any:
    return result  # no pending entry, no SUBSCRIBE: nothing in this process will drain it


def never_wait(backend: Any) -> bool:
    """Stop ``backend``'s class from registering waiters in this process; True if it changed."""
    cls = type(backend)
    if not hasattr(cls, "add_pending_result") or getattr(cls, _MARK, False):
        return False
    cls.add_pending_result = _no_waiter
    setattr(cls, _MARK, True)
    return True


@contextmanager
def sending_only(backend: Any) -> Iterator[None]:
    """While this thread sends tasks inside the block, ``backend`` registers no waiter and
    subscribes to no result channel for them (other threads keep waiting as usual). A result
    waited on later (``AsyncResult(job_id).get()``) subscribes then, and reads a result stored
    before that from its key, so nothing is missed."""
    _install_switch(type(backend))
    _thread.sending_only = True
    try:
        yield
    finally:
        _thread.sending_only = False


def _install_switch(cls: type) -> None:
    if getattr(cls, _SWITCH, False):
        return
    add_pending, on_call = cls.add_pending_result, cls.on_task_call  # type: ignore[attr-defined]

    def add_pending_result(self: Any, result: Any, weak: bool = False, start_drainer: bool = True) -> Any:
        if getattr(_thread, "sending_only", False):
            return result
        return add_pending(self, result, weak=weak, start_drainer=start_drainer)

    def on_task_call(self: Any, producer: Any, task_id: str) -> Any:
        if getattr(_thread, "sending_only", False):
            return None
        return on_call(self, producer, task_id)

    cls.add_pending_result = add_pending_result  # type: ignore[attr-defined]
    cls.on_task_call = on_task_call  # type: ignore[attr-defined]
    setattr(cls, _SWITCH, True)
