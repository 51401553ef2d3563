"""`tempr worker --queues retrieve,fuse`: a Celery worker in the foreground (exec)."""

from __future__ import annotations

import argparse
import os

from tempr.services.workers import DEFAULT_QUEUES, worker_command


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("worker", help="run a Celery worker in the foreground")
    p.add_argument("--queues", default=DEFAULT_QUEUES, help=f"comma-separated (default {DEFAULT_QUEUES})")
    p.add_argument("--concurrency", type=int, default=2, help="processes (prefork) or threads in the pool (default 2)")
    p.add_argument(
        "--pool",
        default="prefork",
        choices=["prefork", "threads", "solo"],
        help="prefork for the CPU-bound queues; threads for rerank (one model shared, batched) (default prefork)",
    )
    p.add_argument("--name", default=None, help="node name (default: the queues)")
    p.add_argument("--loglevel", default="INFO", help="DEBUG, INFO, WARNING or ERROR (default INFO)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    name = args.name or args.queues.replace(",", "-")
    cmd = worker_command(args.queues, concurrency=args.concurrency, pool=args.pool, name=name, loglevel=args.loglevel)
    os.execv(cmd[0], cmd)
    return 0  # not reached
