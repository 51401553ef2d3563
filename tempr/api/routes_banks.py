"""Writes to a bank: ingest a JSON array of facts (one transaction), delete a bank.

Both change the bank's version, so every cached recall of that bank is bypassed from then on.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Depends, Request

from config.errors import NotFound
from tempr.api.gateway import gateway
from tempr.api.security import role
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
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
    res = gateway(request).resources
    parsed = parse_array(facts, limit=res.settings.max_facts_per_request)
    report = ingest_facts(bank_id, parsed, IngestDeps(res.engine, res.embedder, res.extractor, res.settings))
    return report.to_dict()


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
    with gateway(request).resources.engine.begin() as conn:
        if not delete_bank(conn, bank_id):
            raise NotFound(f"no bank {bank_id!r}")
    return {"bank_id": bank_id, "deleted": True}
