"""`tempr services up|down|status`: the embedded defaults, idempotent.

Where ``TEMPR_DATABASE_URL`` / ``TEMPR_REDIS_URL`` are set tempr uses those
servers and starts nothing for them. Otherwise it starts (or finds running)
the embedded PostgreSQL and a local Redis under the state folder, so a
second ``up`` is harmless and ``down`` stops only what tempr started.
"""

from __future__ import annotations

from config.settings import Settings
from tempr.endpoints import Endpoints, resolve_endpoints
from tempr.services.postgres import EmbeddedPostgres
from tempr.services.redis_server import LocalRedis


def embedded_postgres(settings: Settings) -> EmbeddedPostgres:
    return EmbeddedPostgres(settings.pg_dir)


def local_redis(settings: Settings) -> LocalRedis:
    return LocalRedis(settings.redis_dir)


def up(settings: Settings) -> Endpoints:
    from tempr.store.migrate import upgrade

    if not settings.database_url:
        embedded_postgres(settings).up()
    if not settings.redis_url:
        local_redis(settings).up()
    endpoints = resolve_endpoints(settings)
    assert endpoints.database_url is not None
    upgrade(endpoints.database_url)
    return endpoints


def down(settings: Settings) -> list[str]:
    stopped = []
    if not settings.redis_url and local_redis(settings).down():
        stopped.append("redis")
    if not settings.database_url and embedded_postgres(settings).down():
        stopped.append("postgres")
    return stopped


def status(settings: Settings) -> dict[str, dict[str, object]]:
    report: dict[str, dict[str, object]] = {}
    if settings.database_url:
        report["postgres"] = {"external": True, "url": settings.database_url}
    else:
        pg = embedded_postgres(settings).status()
        report["postgres"] = {"external": False, "running": pg.running, "pid": pg.pid, "url": pg.url}
    if settings.redis_url:
        report["redis"] = {"external": True, "url": settings.redis_url}
    else:
        rd = local_redis(settings).status()
        report["redis"] = {"external": False, "running": rd.running, "pid": rd.pid, "url": rd.url}
    return report
