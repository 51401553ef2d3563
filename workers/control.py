"""A remote-control command of tempr's own: is every pool process of this worker up?

A worker answers ``ping`` as soon as its consumer runs, but a prefork child loads its models in
``worker_process_init`` (``workers/app.py``) and only then tells the parent it is up; until then
the parent hands it no task. `tempr services up` asks this command, not ``ping``, so it returns
only when the first recall will find every process warm.
"""

from __future__ import annotations

from typing import Any

from celery.worker.control import inspect_command

READY_COMMAND = "tempr_pool_ready"


@inspect_command(name=READY_COMMAND)
def tempr_pool_ready(state: Any, **_: Any) -> dict[str, Any]:
    """``ready`` once no pool process is still starting (threads and solo pools: always)."""
    inner = getattr(getattr(state.consumer, "pool", None), "_pool", None)
    up = getattr(inner, "_all_inqueues", None)  # prefork (AsynPool): the children that sent WORKER_UP
    if inner is None or up is None:
        return {"ready": True, "starting": 0}
    processes = list(getattr(inner, "_pool", None) or ())
    starting = sum(1 for proc in processes if proc.inqW_fd not in up)
    return {"ready": bool(processes) and starting == 0, "starting": starting}


def register() -> str:
    """Importing this module registered the command (Celery's ``Panel``); the name, for callers."""
    return READY_COMMAND
