"""Writes to a bank: ingest a JSON array of facts (one transaction), delete a bank.

Both change the bank's version, so every cached recall of that bank is bypassed from then on.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Request

from tempr.api.gateway import gateway
from tempr.bank_ids import check_bank_id
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
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
    responses={422: {"description": "a bad fact: the body names its line (array index + 1) and field"}},
)
def ingest(
    bank_id: str,
    request: Request,
    facts: Any = Body(..., description="A JSON array of facts (the JSONL schema)", examples=[_EXAMPLE]),
) -> dict[str, Any]:
    """Validate every fact first, then embed, extract entities, link and write in one transaction."""
    res = gateway(request).resources
    parsed = parse_array(facts)
    report = ingest_facts(bank_id, parsed, IngestDeps(res.engine, res.embedder, res.extractor, res.settings))
    return report.to_dict()


@router.delete("/v1/default/banks/{bank_id}", responses={404: {"description": "no such bank"}})
def delete(bank_id: str, request: Request) -> dict[str, Any]:
    check_bank_id(bank_id)
    with gateway(request).resources.engine.begin() as conn:
        if not delete_bank(conn, bank_id):
            raise missing_bank(bank_id)
    return {"bank_id": bank_id, "deleted": True}
