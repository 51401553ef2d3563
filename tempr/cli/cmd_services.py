"""`tempr services up|down|status` and `tempr db upgrade`."""

from __future__ import annotations

import argparse
import json

from config.settings import get_settings
from tempr.services import manager
from tempr.services.workers import DEFAULT_QUEUES, DetachedWorkers


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("services", help="start/stop/inspect the embedded PostgreSQL, Redis and a worker")
    p.add_argument("action", choices=["up", "down", "status"])
    p.add_argument("--no-worker", action="store_true", help="with up: do not start a Celery worker")
    p.add_argument("--concurrency", type=int, default=2, help="with up: the worker's concurrency")
    p.set_defaults(func=run)
    db = sub.add_parser("db", help="database schema")
    db.add_argument("action", choices=["upgrade"])
    db.set_defaults(func=run_db)


def workers() -> DetachedWorkers:
    return DetachedWorkers(get_settings().state_dir.resolve() / "workers")


def run(args: argparse.Namespace) -> int:
    settings = get_settings()
    if args.action == "up":
        endpoints = manager.up(settings)
        print(f"postgres  {endpoints.database_url}")
        print(f"redis     {endpoints.redis_url}")
        print(f"broker    {endpoints.broker_url}")
        if not args.no_worker:
            pid = workers().start("default", DEFAULT_QUEUES, concurrency=args.concurrency)
            print(f"worker    default (pid {pid}) queues {DEFAULT_QUEUES}")
        return 0
    if args.action == "down":
        stopped = workers().stop_all() + manager.down(settings)
        print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
        return 0
    report = manager.status(settings)
    report["workers"] = {name: {"pid": pid} for name, pid in workers().running().items()}
    print(json.dumps(report, indent=2))
    return 0


def run_db(args: argparse.Namespace) -> int:
    from tempr.store.migrate import upgrade

    endpoints = manager.resolve_endpoints(get_settings())
    if not endpoints.database_url:
        print("error: no database: set TEMPR_DATABASE_URL or run `tempr services up`")
        return 1
    upgrade(endpoints.database_url)
    print("database schema is up to date")
    return 0
