"""The FastAPI app: `tempr api --host --port` serves ``create_app()``; OpenAPI at /docs.

Routes (docs/execution.md has curl examples):
    POST   /v1/default/banks/{bank_id}/memories/recall         wait for the answer (504 + job id past the wait)
    POST   /v1/default/banks/{bank_id}/memories/recall/async   202 + job id at once
    GET    /v1/jobs/{job_id}                                   status, result or error, webhook deliveries
    POST   /v1/default/banks/{bank_id}/facts                   ingest a JSON array of facts
    POST   /v1/default/banks/{bank_id}/imports                 202 + job id: a large JSONL body via the ingest workers
    DELETE /v1/default/banks/{bank_id}                         delete a bank
    GET    /v1/banks                                           every bank and its size
    GET    /v1/banks/{bank_id}                                 one bank: size, types, tags, newest facts
    GET    /v1/fleet                                           workers, queue depths, recent jobs
    GET    /v1/fleet/ready?queue=fuse                          does a worker consuming the queue answer (open)
        GET    /healthz
    GET    /console/                                           the recall console (``/`` redirects there)
    GET    /docs, /redoc                                       API docs, assets served from fastapi-offline (no CDN)
    POST|GET /v1/keys, DELETE /v1/keys/{key_id}                an admin key manages its tenant's keys
    GET    /metrics                                            Prometheus (every process on this host; admin key)
    GET    /healthz                                            open (no bank data), as are /v1/fleet/ready, /docs, /openapi.json

Every other route needs an API key (``tempr.api.security``; docs/execution.md "Authentication")
unless TEMPR_AUTH=off, which the gateway warns about at every start. Bodies over
TEMPR_MAX_BODY_BYTES are refused with 413 before they are parsed (``tempr.api.limits``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from celery import Celery
from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from fastapi_offline import FastAPIOffline

from tempr.api import errors, routes_banks, routes_console, routes_fleet, routes_jobs, routes_keys, routes_recall
from tempr.api.gateway import Gateway, gateway
from tempr.api.limits import BodyLimit
from tempr.api.miss import ChordParts, warm_up
from tempr.api.security import role
from tempr.auth import warn_if_off
from tempr.heap import freeze_warm_heap


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Before serving: a gateway that analyses misses loads its query model (``tempr.api.miss``)."""
    gw: Gateway = app.state.gateway
    if gw.analyses:
        await run_in_threadpool(warm_up, gw)
    freeze_warm_heap(gw.settings.gc_freeze, "gateway, warm")
    yield


def _chord_parts() -> ChordParts:
    """The worker side's pieces for a miss started here (``tempr.api.miss``): assembled in this
    entry point, so the routes and the gateway do not import ``workers`` or ``tasks``."""
    from tasks.recall import build_chord
    from workers.resources import recall_context
    from workers.result_waiters import sending_only

    return ChordParts(build_chord=build_chord, recall_context=recall_context, sending_only=sending_only)


def create_app(*, celery_app: Celery | None = None, resources: Any = None, tracer_provider: Any = None) -> FastAPI:
    """The gateway. ``tracer_provider``: trace with this one (tests); by default TEMPR_OTEL_* decide."""
    if celery_app is None:
        from workers.app import app as celery_app
    if resources is None:
        from workers.resources import get_resources

        resources = get_resources()
    app = FastAPIOffline(  # Swagger UI and ReDoc from the package's own files: /docs works offline
        title="tempr",
        version="0.1.0",
        docs_url="/docs",
        redoc_url="/redoc",
        openapi_url="/openapi.json",
        description="TEMPR recall for AI-agent memory, served by a Celery worker fleet. "
        "The recall console is at [/console/](/console/).",
        lifespan=_lifespan,
    )
    app.state.gateway = Gateway(celery_app, resources, chord_parts=_chord_parts())
    warn_if_off(resources.settings, "tempr api")
    app.add_middleware(BodyLimit, max_bytes=resources.settings.max_body_bytes)
    from workers.metrics import queue_depths

    app.state.queue_depths = queue_depths  # for GET /v1/fleet; the routes do not import the workers
    errors.install(app)
    for module in (routes_recall, routes_jobs, routes_banks, routes_keys, routes_fleet):
        app.include_router(module.router)
    routes_console.install(app)

    @app.get("/metrics", include_in_schema=False, dependencies=[Depends(role("admin"))])
    async def metrics(request: Request) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST

        from workers.metrics import render

        data = await run_in_threadpool(render, gateway(request).celery_app)
        return Response(data, media_type=CONTENT_TYPE_LATEST)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, bool]:
        return {"ok": True}

    from workers import telemetry

    telemetry.instrument_gateway(app, tracer_provider or telemetry.make_provider(resources.settings, "gateway"))
    return app
