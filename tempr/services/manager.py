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
    return EmbeddedPostgres(settings.pg_dir, shared_buffers=settings.pg_shared_buffers)


def local_redis(settings: Settings) -> LocalRedis:
    return LocalRedis(settings.redis_dir, maxmemory=settings.redis_maxmemory, policy=settings.redis_maxmemory_policy)


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


def purge(settings: Settings) -> None:
    """Stop the embedded services and delete their data (the cluster, wherever it lives)."""
    import shutil

    if not settings.redis_url:
        local_redis(settings).down()
        shutil.rmtree(settings.redis_dir, ignore_errors=True)
    if not settings.database_url:
        embedded_postgres(settings).purge()


def _redact(url: str | None) -> str | None:
    """A URL without its password (status output may end up in logs and bug reports)."""
    if not url or "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    userinfo, host = rest.rsplit("@", 1)
    return f"{scheme}://{userinfo.split(':', 1)[0]}:***@{host}" if ":" in userinfo else url


def status(settings: Settings) -> dict[str, dict[str, object]]:
    """What is really there: ``running`` (the recorded pid is alive), ``answering`` (the recorded
    port accepts connections / PING) and ``healthy`` (both), so a dead server, or one that no longer
    listens where clients look for it, is reported as such."""
    report: dict[str, dict[str, object]] = {}
    if settings.database_url:
        report["postgres"] = {"external": True, "url": _redact(settings.database_url)}
    else:
        pg = embedded_postgres(settings).status()
        report["postgres"] = {
            "external": False,
            "running": pg.running,
            "answering": pg.answering,
            "healthy": pg.running and pg.answering,
            "pid": pg.pid,
            "port": pg.port,
            "url": _redact(pg.url),
        }
    if settings.redis_url:
        report["redis"] = {"external": True, "url": _redact(settings.redis_url)}
    else:
        rd = local_redis(settings).status()
        report["redis"] = {
            "external": False,
            "running": rd.running,
            "answering": rd.answering,
            "healthy": rd.running and rd.answering,
            "pid": rd.pid,
            "port": rd.port,
            "url": rd.url,
        }
    return report
