"""Celery task for apps that ingest facts through the queue (``tempr.ingest.facts``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import OperationalError

from config.errors import ValidationError
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from workers.app import app
from workers.resources import get_resources


@app.task(name="tempr.ingest.facts", autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def ingest(bank_id: str, facts: list[dict[str, Any]]) -> dict[str, Any]:
    """Payload: ``{"bank_id": str, "facts": [fact, ...]}``; returns the ingest report.

    Bad input returns ``{"error": ..., "message": ..., "line": ..., "field": ...}`` rather than
    raising, so callers get the reason without a traceback.
    """
    res = get_resources()
    try:
        parsed = parse_array(facts)
        deps = IngestDeps(res.engine, res.embedder, res.extractor, res.settings)
        report = ingest_facts(bank_id, parsed, deps)
    except ValidationError as exc:
        return exc.to_dict()
    return report.to_dict()
