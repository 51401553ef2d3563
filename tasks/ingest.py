"""Celery task for apps that ingest facts through the queue (``tempr.ingest.facts``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import OperationalError

from config.errors import AuthError, ValidationError
from tempr.auth import task_principal
from tempr.bank_ids import check_bank_id
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from workers.app import app
from workers.resources import get_resources


@app.task(name="tempr.ingest.facts", autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def ingest(
    bank_id: str, facts: list[dict[str, Any]], api_key: str | None = None, tenant: str | None = None
) -> dict[str, Any]:
    """Payload: ``{"bank_id": str, "facts": [fact, ...], "api_key": str}``; returns the ingest report.

    Bad input, and a key without the ingest role over the bank, return ``{"error": ..., "message":
    ..., "line": ..., "field": ...}`` rather than raising, so callers get the reason without a traceback.
    """
    res = get_resources()
    try:
        check_bank_id(bank_id)
        task_principal(res.engine, res.settings, api_key=api_key, tenant=tenant, role="ingest", bank_id=bank_id)
        parsed = parse_array(facts, limit=res.settings.max_facts_per_request)
        deps = IngestDeps(res.engine, res.embedder, res.extractor, res.settings)
        report = ingest_facts(bank_id, parsed, deps)
    except (ValidationError, AuthError) as exc:
        return exc.to_dict()
    return report.to_dict()
