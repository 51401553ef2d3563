"""Where the services are: the one place that resolves tempr's URLs.

Explicit settings (``TEMPR_DATABASE_URL``, ``TEMPR_REDIS_URL``, ``TEMPR_BROKER_URL``,
``TEMPR_RESULT_BACKEND``, ``TEMPR_CACHE_URL``) win; otherwise the embedded services' URLs are read
from their state folders (if running). The per-process resources, the client and the CLI all get
their endpoints from ``resolve_endpoints``.
"""

from __future__ import annotations

from dataclasses import dataclass

from config.settings import Settings


@dataclass(frozen=True)
class Endpoints:
    database_url: str | None
    redis_url: str | None
    broker_url: str | None
    result_backend: str | None
    cache_url: str | None


def resolve_endpoints(settings: Settings, *, database: bool = True) -> Endpoints:
    """The URLs in force: explicit settings first, else the embedded services' (if running).

    ``database=False``: leave ``database_url`` unresolved (None unless set), for a process that only
    talks to Redis (the CLI's fleet path): looking up the embedded PostgreSQL imports its driver."""
    from tempr.services.redis_server import LocalRedis

    database_url = settings.database_url
    if database_url is None and database:
        from tempr.services.postgres import EmbeddedPostgres

        database_url = EmbeddedPostgres(settings.pg_dir).status().url
    redis_url = settings.redis_url or LocalRedis(settings.redis_dir).status().url
    local = not settings.redis_url
    broker = settings.broker_url or (f"{redis_url}/0" if local and redis_url else redis_url)
    backend = settings.result_backend or (f"{redis_url}/1" if local and redis_url else redis_url)
    cache = settings.cache_url or (f"{redis_url}/2" if local and redis_url else redis_url)
    return Endpoints(database_url, redis_url, broker, backend, cache)
