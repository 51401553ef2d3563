"""`tempr services up|down|status` and `tempr db upgrade`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from config.errors import ConfigError, ValidationError
from config.settings import Settings, get_settings
from tempr.services import manager
from tempr.services.gateway import LocalGateway
from tempr.services.workers import DetachedWorkers, fleet_layout


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "services",
        help="start/stop/inspect the embedded PostgreSQL, Redis and the workers (status exits 1 when a service is down)",
        description="up: start what is not running (idempotent); down: stop only what `up` started here; "
        "status: the services and, per worker, its queues, pool, concurrency, pid and ping.",
    )
    p.add_argument(
        "action",
        choices=["up", "down", "status"],
        help="up (start, idempotent), down (stop), status (what runs, and do the workers answer)",
    )
    p.add_argument("--no-worker", action="store_true", help="with up: do not start the Celery workers")
    p.add_argument(
        "--concurrency",
        type=int,
        default=2,
        help="with up: processes of the analyse pool (query embedding, fusion, ranking; default 2: one per core)",
    )
    p.add_argument(
        "--retrieve-concurrency", type=int, default=4, help="with up: processes of the strategy pool (default 4)"
    )
    p.add_argument(
        "--ingest-concurrency", type=int, default=2, help="with up: processes of the ingest pool (default 2)"
    )
    p.add_argument(
        "--no-gateway",
        action="store_true",
        help="with up: do not start the local HTTP gateway beside the workers (the CLI's quick path)",
    )
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="with up: return at once instead of waiting until every worker answers (models loaded)",
    )
    p.add_argument(
        "--purge",
        action="store_true",
        help="with down: also delete the embedded database cluster and Redis data (as root: /var/lib/tempr/<hash>)",
    )
    p.add_argument("--json", action="store_true", help="with status: print the report as JSON")
    p.set_defaults(func=run)
    db = sub.add_parser(
        "db",
        help="database schema",
        description="upgrade: apply the Alembic migrations to TEMPR_DATABASE_URL (or the embedded server); "
        "`services up` and ingest do this already. embed-chunks: give every chunk stored without a vector "
        "(written before version 0005, or with TEMPR_CHUNK_VECTORS=false) its vector, in the bank's own "
        "embedder. embed-tokens: give every memory stored without token vectors (written before version "
        "0011, or with TEMPR_TOKEN_VECTORS=false) its token vectors. index-banks: build each bank of more "
        "than 5,000 memories its own HNSW index (ingest queues this itself; for banks written before "
        "version 0012) and drop the indexes of deleted banks. All are safe to stop and rerun; "
        "recall keeps serving meanwhile.",
    )
    db.add_argument(
        "action",
        choices=["upgrade", "embed-chunks", "embed-tokens", "index-banks"],
        help="upgrade: bring the schema to the latest migration; embed-chunks: vectors for chunks without one; "
        "embed-tokens: token vectors for memories without them; index-banks: large banks' own HNSW indexes",
    )
    db.add_argument(
        "--bank", default=None, help="embed-chunks, embed-tokens, index-banks: only this bank (default: every bank)"
    )
    db.set_defaults(func=run_db)


def workers() -> DetachedWorkers:
    return DetachedWorkers(get_settings().state_dir.resolve() / "workers")


def local_gateway() -> LocalGateway:
    return LocalGateway(get_settings().state_dir.resolve() / "gateway")


def run(args: argparse.Namespace) -> int:
    settings = get_settings()
    if args.action == "up":
        if settings.reranker_model and not args.no_worker:
            _check_cross_encoder(settings.reranker_model)
        endpoints = manager.up(settings)
        print(f"postgres  {endpoints.database_url}")
        print(f"redis     {endpoints.redis_url}")
        print(f"broker    {endpoints.broker_url}")
        if not args.no_worker:
            return start_workers(settings, args)
        return 0
    if args.action == "down":
        stopped = (["gateway"] if local_gateway().stop() else []) + workers().stop_all() + manager.down(settings)
        if args.purge:
            manager.purge(settings)
            stopped.append("data purged")
        print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
        return 0
    report = status_report(settings)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_status(report)
    unhealthy = [
        n for n in ("postgres", "redis") if report[n].get("external") is False and not report[n].get("healthy")
    ]
    return 1 if unhealthy else 0


def _check_cross_encoder(ref: str) -> None:
    """Refuse to start a rerank pool whose model cannot load: it would answer every recall degraded."""
    from tempr.providers.reranker.cross_encoder import SETTING, model_error

    problem = model_error(ref)
    if problem:
        raise ConfigError(problem, field=SETTING)


def start_workers(settings: Settings, args: argparse.Namespace) -> int:
    """Start the pool layout (``fleet_layout``), then wait until each worker answers: its models are
    loaded then, so the first recall after `up` is as fast as the hundredth."""
    for name, value in (
        ("--concurrency", args.concurrency),
        ("--retrieve-concurrency", args.retrieve_concurrency),
        ("--ingest-concurrency", args.ingest_concurrency),
    ):
        if value < 1:
            raise ValidationError("must be 1 or more", field=name)
    layout = fleet_layout(
        retrieve=args.retrieve_concurrency,
        analyse=args.concurrency,
        ingest=args.ingest_concurrency,
        cross_encoder=bool(settings.reranker_model),
    )
    fleet = workers()
    pids = {
        spec.name: fleet.start(spec.name, spec.queues, concurrency=spec.concurrency, pool=spec.pool) for spec in layout
    }
    for spec in layout:
        print(
            f"worker    {spec.name:<9} (pid {pids[spec.name]}) {spec.pool} x{spec.concurrency} on {spec.queues}: {spec.why}"
        )
    gateway = None if args.no_gateway else local_gateway().launch()  # starts while the workers load
    if args.no_wait:
        return 0
    from tempr.fleet import wait_until_ready
    from tempr.services.process import pid_alive
    from workers.app import app

    started = time.monotonic()
    print("waiting for the workers to load their models ...", end="", flush=True)
    late = wait_until_ready(
        app, list(pids), timeout=settings.services_ready_timeout_s, alive=lambda n: pid_alive(pids[n])
    )
    if late:
        print()
        logs = ", ".join(str(fleet.root / f"{n}.log") for n in late)
        print(f"error: worker(s) {', '.join(late)} did not answer; see {logs}", file=sys.stderr)
        return 1
    if gateway is not None:
        gateway = local_gateway().wait(gateway, timeout_s=settings.services_ready_timeout_s)
        print(f" ready in {time.monotonic() - started:.1f} s")
        print(f"gateway   {gateway.url} (pid {gateway.pid}): the CLI's quick path; the console at /console/")
    else:
        print(f" ready in {time.monotonic() - started:.1f} s")
    return 0


def status_report(settings: Settings) -> dict[str, Any]:
    """The services, then per worker its queues, pool, concurrency, pid and whether it answers a ping."""
    report: dict[str, Any] = manager.status(settings)
    gateway = local_gateway().running()
    report["gateway"] = (
        {"running": gateway is not None, "url": gateway.url, "pid": gateway.pid} if gateway else {"running": False}
    )
    local = workers().running()
    redis = report["redis"]
    if redis.get("external") or redis.get("running"):
        from tempr.fleet import inspect_workers, merge_local
        from workers.app import app

        report["workers"] = merge_local(inspect_workers(app), local)
    else:  # no broker: nothing can answer a ping
        report["workers"] = [{"name": n, "pid": p, "started_here": True, "ping": False} for n, p in local.items()]
    return report


def print_status(report: dict[str, Any]) -> None:
    for name in ("postgres", "redis"):
        svc = report[name]
        state = "external" if svc.get("external") else ("running" if svc.get("running") else "stopped")
        if svc.get("running") and svc.get("healthy") is False:
            state = "running, not answering"
        pid = f" (pid {svc['pid']})" if svc.get("pid") else ""
        print(f"{name:<9} {state}{pid}  {svc.get('url') or ''}")
    gateway = report.get("gateway") or {}
    print(
        f"gateway   running (pid {gateway['pid']})  {gateway['url']}" if gateway.get("running") else "gateway   stopped"
    )
    rows = report.get("workers") or []
    if not rows:
        print("workers   none (start one: `tempr services up` or `tempr worker`)")
        return
    print(f"{'worker':<16} {'pid':>7} {'ping':<5} {'pool':<8} {'conc':>4}  queues")
    for w in rows:
        ping = "ok" if w.get("ping") else "no"
        queues = ",".join(w.get("queues") or []) or "-"
        conc = w.get("concurrency") if w.get("concurrency") is not None else "-"
        print(f"{w['name']:<16} {w.get('pid') or '-':>7} {ping:<5} {w.get('pool') or '-':<8} {conc:>4}  {queues}")


def run_db(args: argparse.Namespace) -> int:
    from tempr.store.migrate import upgrade

    if args.action in ("embed-chunks", "embed-tokens"):
        return _backfill(args.action, args.bank)
    if args.action == "index-banks":
        return _index_banks(args.bank)
    endpoints = manager.resolve_endpoints(get_settings())
    if not endpoints.database_url:
        print("error: no database: set TEMPR_DATABASE_URL or run `tempr services up`")
        return 1
    upgrade(endpoints.database_url)
    print("database schema is up to date")
    _hint_index_banks(endpoints.database_url)
    return 0


def _hint_index_banks(database_url: str) -> None:
    """After an upgrade to version 0012, banks already past 5,000 memories still share the one HNSW
    index until their next write: say so, and how to index them now."""
    from tempr.store import bank_index
    from tempr.store.engine import make_engine

    engine = make_engine(database_url, pool_size=1)
    try:
        waiting = bank_index.banks_wanting_index(engine)
    finally:
        engine.dispose()
    if waiting:
        print(
            f"{len(waiting)} bank(s) of more than {bank_index.OWN_INDEX_MIN_UNITS:,} memories have no HNSW index "
            "of their own yet (they get one on their next write): run `tempr db index-banks` to build them now"
        )


def _backfill(action: str, bank: str | None) -> int:
    """`tempr db embed-chunks` / `embed-tokens`: a progress line per batch on stderr, a JSON
    summary on stdout."""
    from tempr.ingest.backfill import embed_missing_chunks, embed_missing_tokens
    from tempr.ingest.pipeline import IngestDeps
    from tempr.providers.entities import NoEntities
    from workers.resources import get_resources

    what, key, fill = (
        ("chunks", "chunks_embedded", embed_missing_chunks)
        if action == "embed-chunks"
        else ("memories", "memories_tokenised", embed_missing_tokens)
    )

    def progress(bank_id: str, n: int) -> None:
        done[bank_id] = done.get(bank_id, 0) + n
        print(f"\r{bank_id}: {done[bank_id]} {what} embedded", end="", file=sys.stderr, flush=True)

    done: dict[str, int] = {}
    res = get_resources()  # no entity extractor: nothing here needs spaCy
    if action == "embed-tokens" and not res.settings.token_vectors:
        raise ValidationError("token vectors are off (TEMPR_TOKEN_VECTORS=false): nothing would read them")
    if bank is not None:
        _check_bank_exists(res.engine, bank)
    deps = IngestDeps(res.engine, res.embedder, NoEntities(), res.settings, embedders=res.embedder_for)
    result = fill(deps, bank, progress=progress)
    if done:
        print(file=sys.stderr)
    print(json.dumps({key: result}))
    return 0


def _index_banks(bank: str | None) -> int:
    """`tempr db index-banks`: a line per bank on stderr as its index is built (minutes for a large
    bank), a JSON summary on stdout: seconds per bank built, and the deleted banks' indexes dropped."""
    from tempr.store import bank_index
    from workers.resources import get_resources

    engine = get_resources().engine
    if bank is not None:
        _check_bank_exists(engine, bank)
    todo = [bank] if bank is not None else bank_index.banks_wanting_index(engine)
    built: dict[str, float | None] = {}
    for i, bank_id in enumerate(todo, 1):
        print(f"[{i}/{len(todo)}] {bank_id}: building its own HNSW index", file=sys.stderr, flush=True)
        seconds = bank_index.build(engine, bank_id)
        built[bank_id] = None if seconds is None else round(seconds, 3)
        if seconds is None:
            print(
                f"{bank_id}: nothing to do (at most {bank_index.OWN_INDEX_MIN_UNITS:,} memories, "
                "already indexed, or being built by another process)",
                file=sys.stderr,
            )
    dropped = bank_index.drop_orphans(engine) if bank is None else []
    print(json.dumps({"built": built, "dropped": dropped}))
    return 0


def _check_bank_exists(engine: Any, bank: str) -> None:
    """``--bank`` names an existing bank (a typo is an error, not "0 chunks embedded")."""
    from config.errors import NotFound
    from tempr.bank_ids import check_bank_id
    from tempr.store.banks_repo import bank_space

    check_bank_id(bank)
    with engine.connect() as conn:
        if bank_space(conn, bank) is None:
            raise NotFound(f"bank {bank!r} does not exist")
