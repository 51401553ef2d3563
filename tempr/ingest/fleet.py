"""Imports spread over the ingest workers: the caller validates and streams chunks into the queue.

``submit_file`` validates the whole file first (nothing is queued for a bad file), registers
the import, then sends one ``tempr.ingest.stage_chunk`` message per chunk while reading the
file (the caller never holds more than one chunk). Any ingest worker stages a chunk; the worker
that stages the last one sends ``tempr.ingest.publish``, which makes the file visible in one
transaction. A chunk whose worker dies is redelivered (late acks) and restaged; a chunk that
fails for good fails the import, which drops its staged rows. ``import_status`` reports
progress (facts staged / total, rate, ETA) for the CLI and ``GET /v1/jobs/{id}``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from celery import Celery
from sqlalchemy import Engine

from tempr.ingest import imports
from tempr.ingest.pipeline import IngestDeps
from tempr.store import import_repo

STAGE_TASK = "tempr.ingest.stage_chunk"
PUBLISH_TASK = "tempr.ingest.publish"


def submit_file(path: Path, bank_id: str, engine: Engine, app: Celery, *, chunk_facts: int) -> str:
    """Validate, register and enqueue every chunk; returns the import (job) id."""
    plan = imports.validate_file(path, bank_id, engine)
    import_id = imports.new_import(plan, chunk_facts, engine)
    try:
        for number, items in enumerate(imports.iter_chunks(plan, chunk_facts)):
            app.send_task(STAGE_TASK, args=(import_id, bank_id, number, items))
        if plan.total == 0:
            app.send_task(PUBLISH_TASK, args=(import_id,))
    except BaseException as exc:
        imports.fail(import_id, engine, f"could not enqueue the import: {exc}")
        raise
    return import_id


def submit_facts(objs: list[Any], bank_id: str, engine: Engine, app: Celery, *, chunk_facts: int, tmp: Path) -> str:
    """The same for an in-memory list of fact objects (the HTTP route): written to ``tmp`` as JSONL first."""
    import json

    with tmp.open("w", encoding="utf-8") as out:
        for obj in objs:
            out.write(json.dumps(obj) + "\n")
    return submit_file(tmp, bank_id, engine, app, chunk_facts=chunk_facts)


def stage_and_maybe_publish(
    import_id: str, bank_id: str, chunk: int, items: list[Any], deps: IngestDeps, app: Celery
) -> int:
    """Stage one chunk; the worker that completes the set sends the publish message."""
    staged = imports.stage_chunk(import_id, bank_id, chunk, [(int(line), obj) for line, obj in items], deps)
    with deps.engine.connect() as conn:
        job = import_repo.get_import(conn, import_id)
    if job and job["status"] == "staging" and job["chunks_done"] >= job["chunks_total"]:
        app.send_task(PUBLISH_TASK, args=(import_id,))
    return staged


def import_status(import_id: str, engine: Engine) -> dict[str, Any] | None:
    """The import as a job: status, facts done/total, rate (facts/s) and ETA (s) while staging."""
    with engine.connect() as conn:
        job = import_repo.get_import(conn, import_id)
    if job is None:
        return None
    status = {"staging": "running", "publishing": "running", "published": "succeeded", "failed": "failed"}
    elapsed = max(
        1e-6, (job["updated_at"] if job["status"] in ("published", "failed") else time.time()) - job["created_at"]
    )
    rate = job["done"] / elapsed
    remaining = job["total"] - job["done"]
    return {
        "job_id": import_id,
        "kind": "import",
        "status": status[job["status"]],
        "stage": job["status"],
        "bank_id": job["bank_id"],
        "progress": {
            "facts_done": job["done"],
            "facts_total": job["total"],
            "chunks_done": job["chunks_done"],
            "chunks_total": job["chunks_total"],
            "facts_per_s": round(rate, 1),
            "eta_s": round(remaining / rate, 1) if rate > 0 and remaining > 0 else (0.0 if remaining <= 0 else None),
        },
        "result": job["report"] if job["status"] == "published" else None,
        "error": {"error": "ImportFailed", "message": job["error"]} if job["status"] == "failed" else None,
    }


def wait(import_id: str, engine: Engine, *, poll_s: float = 0.2, on_progress: Any = None) -> dict[str, Any]:
    """Poll until the import is published or failed; ``on_progress(status)`` after each poll."""
    while True:
        status = import_status(import_id, engine)
        if status is None:
            raise LookupError(import_id)
        if on_progress:
            on_progress(status)
        if status["status"] in ("succeeded", "failed"):
            return status
        time.sleep(poll_s)
