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
from typing import TYPE_CHECKING, Any

from tempr.ingest import imports
from tempr.ingest.own_index import index_ahead
from tempr.store import import_repo

if TYPE_CHECKING:  # the CLI's fleet path imports this module: no Celery app, models or numpy needed
    from celery import Celery
    from sqlalchemy import Engine

    from tempr.ingest.pipeline import IngestDeps

MIN_SPREAD_CHUNK = 64
"""The smallest chunk ``spread_over`` makes: below it, each task's fixed costs (a message, a staging
transaction, a status update: a few ms) start to count beside embedding the chunk."""
STAGE_TASK = "tempr.ingest.stage_chunk"
PUBLISH_TASK = "tempr.ingest.publish"


def chunk_size(total: int, chunk_facts: int, spread_over: int | None) -> int:
    """``chunk_facts``, or with ``spread_over`` (worker processes) a smaller chunk so a small file is
    split over them (never under ``MIN_SPREAD_CHUNK``) rather than staged by one while the rest idle."""
    if not spread_over or spread_over <= 1:
        return chunk_facts
    return max(1, min(chunk_facts, max(MIN_SPREAD_CHUNK, -(-total // spread_over))))


def submit_file(
    path: Path,
    bank_id: str,
    engine: Engine,
    app: Celery,
    *,
    chunk_facts: int,
    space: str,
    spread_over: int | None = None,
) -> str:
    """Validate, register and enqueue every chunk; returns the import (job) id.

    ``space``: the vector space a new bank is written in (``spaces.space_of(settings.embedder)``);
    an existing bank keeps its own, and the workers embed in it whatever their own setting.
    ``spread_over``: split the file over this many worker processes (see ``chunk_size``).
    """
    plan = imports.validate_file(path, bank_id, engine)
    chunk_facts = chunk_size(plan.total, chunk_facts, spread_over)
    import_id = imports.new_import(plan, chunk_facts, engine, space)
    index_ahead(engine, app, bank_id, plan.total)
    try:
        for number, items in enumerate(imports.iter_chunks(plan, chunk_facts)):
            app.send_task(STAGE_TASK, args=(import_id, bank_id, number, items))
        if plan.total == 0:
            app.send_task(PUBLISH_TASK, args=(import_id,))
    except BaseException as exc:
        imports.fail(import_id, engine, f"could not enqueue the import: {exc}")
        raise
    return import_id


def submit_facts(
    objs: list[Any], bank_id: str, engine: Engine, app: Celery, *, chunk_facts: int, space: str, tmp: Path
) -> str:
    """The same for an in-memory list of fact objects (the HTTP route): written to ``tmp`` as JSONL first."""
    import json

    with tmp.open("w", encoding="utf-8") as out:
        for obj in objs:
            out.write(json.dumps(obj) + "\n")
    return submit_file(tmp, bank_id, engine, app, chunk_facts=chunk_facts, space=space)


def stage_and_maybe_publish(
    import_id: str, bank_id: str, chunk: int, items: list[Any], deps: IngestDeps, app: Celery
) -> dict[str, Any]:
    """Stage one chunk; the worker that completes the set sends the publish message.

    Returns ``{"staged": facts, "stages": {stage: seconds}}`` (embed, entities, stage_write): the
    task's result, where a chunk's time went.
    """
    from tempr.ingest.pipeline import IngestReport

    report = IngestReport(bank_id, received=len(items))
    rows = [(int(line), obj) for line, obj in items]
    staged = imports.stage_chunk(import_id, bank_id, chunk, rows, deps, report)
    with deps.engine.connect() as conn:
        job = import_repo.get_import(conn, import_id)
    if job and job["status"] == "staging" and job["chunks_done"] >= job["chunks_total"]:
        app.send_task(PUBLISH_TASK, args=(import_id,))
    return {"staged": staged, "stages": {k: round(v, 3) for k, v in report.stages.items()}}


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


def wait(
    import_id: str, engine: Engine, *, poll_s: float = 0.1, first_poll_s: float = 0.02, on_progress: Any = None
) -> dict[str, Any]:
    """Poll until the import is published or failed; ``on_progress(status)`` after each poll.

    The interval starts at ``first_poll_s`` and grows by half each poll up to ``poll_s``: a small
    import is seen published within a few tens of milliseconds, a longer one within ``poll_s``
    (one poll is a primary-key read, about 1 ms, so ten a second cost nothing; with 0.25 s a
    publish after a few seconds of staging was seen up to 0.25 s late).
    """
    delay = min(first_poll_s, poll_s)
    while True:
        status = import_status(import_id, engine)
        if status is None:
            raise LookupError(import_id)
        if on_progress:
            on_progress(status)
        if status["status"] in ("succeeded", "failed"):
            return status
        time.sleep(delay)
        delay = min(poll_s, delay * 1.5)
