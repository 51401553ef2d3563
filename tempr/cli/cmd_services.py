"""`tempr services up|down|status` and `tempr db upgrade`."""

from __future__ import annotations

import argparse
import json

from config.settings import get_settings
from tempr.services import manager
from tempr.services.workers import RECALL_QUEUES, WEBHOOK_POOL, WEBHOOK_QUEUES, DetachedWorkers


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "services",
        help="start/stop/inspect the embedded PostgreSQL, Redis and the workers (status exits 1 when a service is down)",
    )
    p.add_argument("action", choices=["up", "down", "status"])
    p.add_argument("--no-worker", action="store_true", help="with up: do not start a Celery worker")
    p.add_argument("--concurrency", type=int, default=2, help="with up: the recall worker's concurrency")
    p.add_argument(
        "--purge",
        action="store_true",
        help="with down: also delete the embedded database cluster and Redis data (as root: /var/lib/tempr/<hash>)",
    )
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
            pid = workers().start("default", RECALL_QUEUES, concurrency=args.concurrency)
            print(f"worker    default (pid {pid}) queues {RECALL_QUEUES}")
            pool, size = WEBHOOK_POOL
            pid = workers().start("webhooks", WEBHOOK_QUEUES, concurrency=size, pool=pool)
            print(f"worker    webhooks (pid {pid}) queues {WEBHOOK_QUEUES} ({pool} x{size})")
        return 0
    if args.action == "down":
        stopped = workers().stop_all() + manager.down(settings)
        if args.purge:
            manager.purge(settings)
            stopped.append("data purged")
        print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
        return 0
    report = manager.status(settings)
    report["workers"] = {name: {"pid": pid} for name, pid in workers().running().items()}
    print(json.dumps(report, indent=2))
    unhealthy = [name for name, entry in report.items() if entry.get("external") is False and not entry.get("healthy")]
    return 1 if unhealthy else 0


def run_db(args: argparse.Namespace) -> int:
    from tempr.store.migrate import upgrade

    endpoints = manager.resolve_endpoints(get_settings())
    if not endpoints.database_url:
        print("error: no database: set TEMPR_DATABASE_URL or run `tempr services up`")
        return 1
    upgrade(endpoints.database_url)
    print("database schema is up to date")
    return 0
