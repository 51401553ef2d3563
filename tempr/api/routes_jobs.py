"""Job status: queued | running | succeeded | failed, the result or error, webhook deliveries.

Imports (ids ``import-...``) report progress: facts done / total, rate and ETA.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool

from tempr.api.gateway import gateway
from tempr.api.security import role
from tempr.auth import Principal
from tempr.jobs.status import job_status

router = APIRouter(tags=["jobs"])


@router.get(
    "/v1/jobs/{job_id}",
    responses={
        401: {"description": "no API key, or an unknown or revoked one"},
        404: {"description": "unknown (or expired) job, or another tenant's job"},
    },
)
async def get_job(job_id: str, request: Request, who: Principal = Depends(role("recall"))) -> dict[str, Any]:
    """The job, if the caller's tenant created it (another tenant's job is a 404, as if unknown)."""
    gw = gateway(request)
    if job_id.startswith("import-"):
        from config.errors import NotFound
        from tempr.ingest.fleet import import_status

        status = await run_in_threadpool(import_status, job_id, gw.resources.engine)
        if status is None:
            raise NotFound(f"no job {job_id!r}")
        return status
    grace = gw.settings.recall_deadline_grace_s
    return await run_in_threadpool(job_status, job_id, app=gw.celery_app, store=gw.store, grace_s=grace, reader=who)
