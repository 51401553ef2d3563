"""Read-only views for people and dashboards: the banks and the fleet (the console's data).

GET /v1/banks             every bank with its size
GET /v1/banks/{bank_id}   size, fact types, tags, documents, entities and the newest facts (404 if unknown)
GET /v1/fleet             workers (queues, pool, concurrency, pid, ping), queue depths, recent jobs
GET /v1/fleet/ready       does a worker consuming this queue answer? (open: the CLI asks before it sends)
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool

from tempr.api.gateway import gateway
from tempr.api.security import role
from tempr.auth import Principal
from tempr.bank_ids import check_bank_id
from tempr.fleet import fleet_report
from tempr.jobs.redis_client import cache_redis
from tempr.store import banks_repo

router = APIRouter(tags=["banks and fleet"])
READY_TIMEOUT_S = 1.0
"""How long the readiness check waits when no consumer answers (a warm fleet answers in ms)."""


@router.get("/v1/banks")
def list_banks(request: Request, who: Principal = Depends(role("recall"))) -> dict[str, Any]:
    """Every bank this key may recall from, with its number of facts, most recently created first."""
    with gateway(request).resources.engine.connect() as conn:
        return {"banks": [b for b in banks_repo.list_banks(conn) if who.can("recall", b["bank_id"])]}


@router.get(
    "/v1/banks/{bank_id}",
    responses={404: {"description": "no such bank"}},
    dependencies=[Depends(role("recall"))],
)
def get_bank(
    bank_id: str,
    request: Request,
    recent: int = Query(10, ge=0, le=200, description="how many of the newest facts to list"),
) -> dict[str, Any]:
    """One bank: its size, fact types, tags, documents, entities and newest facts."""
    check_bank_id(bank_id)
    with gateway(request).resources.engine.connect() as conn:
        return banks_repo.bank_summary(conn, bank_id, recent=recent)


@router.get("/v1/fleet")
async def fleet(request: Request, who: Principal = Depends(role("admin"))) -> dict[str, Any]:
    """Workers that answer a ping (queues, pool, concurrency, pid), queue depths, and the recent jobs
    of the caller's own tenant (an admin key sees the fleet, never another tenant's jobs)."""
    gw = gateway(request)
    client, _ = cache_redis(gw.resources.endpoints.cache_url)
    depths = await run_in_threadpool(request.app.state.queue_depths, gw.celery_app)
    report = await run_in_threadpool(fleet_report, gw.celery_app, client, depths)
    if who.tenant is not None:
        report["recent_jobs"] = [
            j for j in report["recent_jobs"] if j.get("tenant") == who.tenant and who.can("recall", j.get("bank_id"))
        ]
    return report


@router.get("/v1/fleet/ready")
async def ready(
    request: Request,
    queue: Literal["retrieve", "fuse", "rerank", "ingest", "webhooks"] = Query(
        "fuse", description="the queue a job would be sent to (``fuse``: where a recall starts)"
    ),
) -> dict[str, Any]:
    """Whether a worker consuming ``queue`` answers right now, and if not why (a few words).

    `tempr recall` asks this before it sends a recall through the local gateway, so with no worker it
    recalls in its own process at once instead of waiting out the job's deadline. Open like /healthz:
    it says only whether a worker answers, nothing of any bank."""
    from tempr.cli.fleet_probe import no_consumer_reason

    gw = gateway(request)
    broker = gw.resources.endpoints.broker_url
    reason = await run_in_threadpool(no_consumer_reason, gw.celery_app, broker, queue, timeout_s=READY_TIMEOUT_S)
    return {"queue": queue, "ready": reason is None, "reason": reason}
