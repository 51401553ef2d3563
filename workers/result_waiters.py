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
gateway and other clients, which do wait, are separate processes and keep Celery's behaviour.
"""

from __future__ import annotations

from typing import Any

_MARK = "_tempr_never_waits"


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
