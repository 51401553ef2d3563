"""Writes to a bank: ingest a JSON array of facts (one transaction), import a large JSONL body
through the ingest workers (all at once or not at all), delete a bank.

Both change the bank's version, so every cached recall of that bank is bypassed from then on.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool

from tempr.api.gateway import gateway
from tempr.api.security import role
from tempr.bank_ids import check_bank_id
from tempr.ingest.facts import parse_array
from tempr.ingest.own_index import index_follows, orphans_follow
from tempr.ingest.pipeline import ingest_facts
from tempr.providers.embedder.spaces import space_of
from tempr.store.banks_repo import missing_bank
from tempr.store.ingest_repo import delete_bank

router = APIRouter(tags=["banks"])
_EXAMPLE = [
    {
        "id": "f1",
        "text": "Alice joined Google in March 2023.",
        "occurred_start": "2023-03-01",
        "entities": ["Alice", "Google"],
    }
]


@router.post(
    "/v1/default/banks/{bank_id}/facts",
    responses={
        401: {"description": "no API key, or an unknown or revoked one"},
        403: {"description": "the key lacks the ingest role or is not scoped to this bank"},
        413: {"description": "the body is over TEMPR_MAX_BODY_BYTES"},
        422: {"description": "a bad fact: the body names its line (array index + 1) and field"},
    },
    dependencies=[Depends(role("ingest"))],
)
def ingest(
    bank_id: str,
    request: Request,
    facts: Any = Body(..., description="A JSON array of facts (the JSONL schema)", examples=[_EXAMPLE]),
) -> dict[str, Any]:
    """Validate every fact first, then embed, extract entities, link and write in one transaction."""
    gw = gateway(request)
    res = gw.resources
    parsed = parse_array(facts, limit=res.settings.max_facts_per_request)
    report = ingest_facts(bank_id, parsed, res.ingest_deps())
    index_follows(res.engine, gw.celery_app, bank_id)
    return report.to_dict()


@router.post(
    "/v1/default/banks/{bank_id}/imports",
    status_code=202,
    responses={
        202: {"description": "validated and queued: poll GET /v1/jobs/{job_id} for progress"},
        401: {"description": "no API key, or an unknown or revoked one"},
        403: {"description": "the key lacks the ingest role or is not scoped to this bank"},
        413: {"description": "the body is larger than TEMPR_MAX_BODY_BYTES"},
        422: {"description": "a bad fact: the body names its line and field; nothing was queued"},
    },
    dependencies=[Depends(role("ingest"))],
)
async def import_facts(
    bank_id: str,
    request: Request,
    chunk_facts: int | None = Query(None, ge=1, description="facts per chunk (default TEMPR_INGEST_CHUNK_FACTS)"),
    spread_over: int | None = Query(
        None, ge=1, le=1024, description="split a small body into this many chunks (one per ingest process)"
    ),
) -> dict[str, Any]:
    """A large body of JSON Lines (one fact per line), imported by the ingest workers in chunks.

    The body is spooled to a temporary file (never held whole), validated completely, then
    split into chunks on the ``ingest`` queue; the facts become visible all at once when the
    last chunk is staged, or not at all. ``spread_over``: a body smaller than a chunk is still
    split over that many worker processes (never into chunks under 64 facts), as `tempr ingest`
    does over its machine's cores.
    """
    import tempfile
    from pathlib import Path

    from tempr.ingest import fleet

    check_bank_id(bank_id)
    gw = gateway(request)
    with tempfile.TemporaryDirectory(prefix="tempr-import-") as tmp:
        path = Path(tmp) / "body.jsonl"
        with path.open("wb") as out:
            async for part in request.stream():
                out.write(part)
        import_id = await run_in_threadpool(
            fleet.submit_file,
            path,
            bank_id,
            gw.resources.engine,
            gw.celery_app,
            chunk_facts=chunk_facts or gw.settings.ingest_chunk_facts,
            space=space_of(gw.settings.embedder),
            spread_over=spread_over,
        )
    return {"job_id": import_id, "status": "queued", "status_url": f"/v1/jobs/{import_id}"}


@router.delete(
    "/v1/default/banks/{bank_id}",
    responses={
        401: {"description": "no API key, or an unknown or revoked one"},
        403: {"description": "the key lacks the admin role or is not scoped to this bank"},
        404: {"description": "no such bank"},
    },
    dependencies=[Depends(role("admin"))],
)
def delete(bank_id: str, request: Request) -> dict[str, Any]:
    gw = gateway(request)
    with gw.resources.engine.begin() as conn:
        if not delete_bank(conn, bank_id):
            raise missing_bank(bank_id)
    orphans_follow(gw.celery_app, bank_id)
    return {"bank_id": bank_id, "deleted": True}
