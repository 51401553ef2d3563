"""`tempr flower --port 5555`: Flower, the Celery view (workers, tasks, queues), in the foreground.

Flower reads the task events the workers send from the broker in force (``TEMPR_BROKER_URL`` /
the embedded Redis). Workers send none by default (``TEMPR_TASK_EVENTS``: three broker writes per
task); Flower switches them on in every running worker itself (its ``enable_events``, every few
seconds while it runs). Protect it in a fleet: Flower reads its own
``FLOWER_*`` variables, e.g. ``FLOWER_BASIC_AUTH=user:password``.
"""

from __future__ import annotations

import argparse
import os
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("flower", help="run Flower (Celery monitoring UI) in the foreground")
    p.add_argument("--port", type=int, default=5555, help="port Flower's web UI listens on (default 5555)")
    p.add_argument("--address", default="0.0.0.0", help="address to bind (default 0.0.0.0: every interface)")
    p.set_defaults(func=run)


def flower_command(port: int, address: str, broker_url: str | None) -> list[str]:
    cmd = [sys.executable, "-m", "celery", "-A", "workers.app"]
    if broker_url:
        cmd += ["--broker", broker_url]
    return [*cmd, "flower", f"--port={port}", f"--address={address}"]


def run(args: argparse.Namespace) -> int:
    from config.settings import get_settings
    from tempr.services.manager import resolve_endpoints

    cmd = flower_command(args.port, args.address, resolve_endpoints(get_settings()).broker_url)
    os.execv(cmd[0], cmd)
    return 0  # not reached
