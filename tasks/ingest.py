"""Celery tasks for ingest: one array of facts in one transaction, or a staged import's chunks and publish."""

from __future__ import annotations

import logging
from typing import Any

from celery.signals import worker_init, worker_process_init, worker_ready
from sqlalchemy.exc import OperationalError

from config.errors import AuthError, PermanentDatabaseError, ValidationError, permanent_database_error, public_message
from tempr.auth import task_principal
from tempr.bank_ids import check_bank_id
from tempr.ingest import fleet, imports
from tempr.ingest.backfill import embed_missing_chunks, parts_for
from tempr.ingest.facts import parse_array
from tempr.ingest.own_index import INDEX_TASK, ORPHANS_TASK, index_follows
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.providers.embedder.spaces import space_of
from tempr.store import bank_index
from workers.app import app
from workers.resources import get_resources

log = logging.getLogger(__name__)

INDEX_TIME_LIMIT_S = 3600
"""The index build's soft limit (a bank's own HNSW index; about 7 minutes at 1M facts on 2 cores)."""


def _deps() -> IngestDeps:
    res = get_resources()
    return res.ingest_deps()


def _consumes_ingest() -> bool:
    consume = app.amqp.queues.consume_from
    return not consume or "ingest" in consume


def _load_models() -> None:
    res = get_resources()
    res.embedder  # noqa: B018 - the properties load the models
    res.extractor  # noqa: B018


def _warm_models() -> None:
    """One tiny inference each, so the first chunk of the first import pays no lazy start-up."""
    res = get_resources()
    try:
        res.embedder.embed(["warm up"])
        res.extractor.extract(["Alice met Bob in Paris."])
    except Exception:  # a broken model fails the first chunk with its reason, not the worker's start
        log.warning("could not warm the ingest models", exc_info=True)


@worker_init.connect
def _load_before_fork(sender: Any = None, **_: object) -> None:
    """Prefork workers that consume ``ingest`` load the embedder and the entity extractor (spaCy,
    with ``TEMPR_ENTITY_EXTRACTION=spacy``) once, in the parent, before the pool forks: the children
    share them, and the first chunk staged after ``tempr services up`` does not wait 2-3 s for
    spaCy (measured on 2 cores). No inference in the parent (see workers/app.py: a thread pool
    started before fork is not fork-safe)."""
    if "prefork" in str(getattr(sender, "pool_cls", "")).lower() and _consumes_ingest():
        try:
            _load_models()
        except Exception:
            log.warning("could not load the ingest models before fork", exc_info=True)


@worker_process_init.connect
def _warm_after_fork(**_: object) -> None:
    if _consumes_ingest():
        _warm_models()


@worker_ready.connect
def _warm_in_process(sender: Any = None, **_: object) -> None:
    """Threads and solo pools run tasks in the main process: warm the models there."""
    pool_cls = getattr(getattr(sender, "controller", None), "pool_cls", None)
    if "prefork" not in getattr(pool_cls, "__module__", "prefork") and _consumes_ingest():
        _warm_models()


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
        report = ingest_facts(bank_id, parsed, _deps()).to_dict()
    except (ValidationError, AuthError) as exc:
        return exc.to_dict()
    _chunk_vectors_follow(bank_id, report)
    index_follows(res.engine, app, bank_id)
    return report


@app.task(name="tempr.ingest.import_file")
def import_file(path: str, bank_id: str, chunk_facts: int = 2000) -> dict[str, Any]:
    """Celery-callable import of a JSONL file the workers can read: validate, then fan out chunks.

    Returns ``{"import_id": ...}`` (poll ``GET /v1/jobs/{import_id}``) or the validation error.
    """
    from pathlib import Path

    try:
        res = get_resources()
        space = space_of(res.settings.embedder)
        return {
            "import_id": fleet.submit_file(Path(path), bank_id, res.engine, app, chunk_facts=chunk_facts, space=space)
        }
    except ValidationError as exc:
        return exc.to_dict()


@app.task(
    name="tempr.ingest.stage_chunk", bind=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5
)
def stage_chunk(self: Any, import_id: str, bank_id: str, chunk: int, items: list[Any]) -> dict[str, Any]:
    """Embed, find entities and stage one chunk of an import; the last chunk triggers publish.

    A chunk that fails for good (not a transient database error) fails the whole import.
    """
    deps = _deps()
    try:
        return fleet.stage_and_maybe_publish(import_id, bank_id, chunk, items, deps, app)
    except ValidationError as exc:  # the import was closed (failed or abandoned): nothing to do
        return exc.to_dict()
    except OperationalError as exc:
        if permanent_database_error(exc):
            imports.fail(import_id, deps.engine, f"chunk {chunk}: {public_message(exc)}")
            raise PermanentDatabaseError(public_message(exc)) from exc  # not an OperationalError: no retry
        if self.request.retries >= self.max_retries:
            imports.fail(import_id, deps.engine, f"chunk {chunk}: database unavailable")
        raise
    except Exception as exc:
        log.exception("import %s chunk %s failed", import_id, chunk)
        imports.fail(import_id, deps.engine, f"chunk {chunk}: {public_message(exc)}")
        raise


@app.task(name="tempr.ingest.publish", bind=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def publish(self: Any, import_id: str) -> dict[str, Any]:
    """Make a fully staged import visible in one transaction (idempotent); loads no model."""
    res = get_resources()
    deps = imports.PublishDeps(res.engine, res.settings)
    try:
        report = imports.publish(import_id, deps, block=deps.settings.ingest_chunk_facts)
        _chunk_vectors_follow(str(report.get("bank_id", "")), report)
        if report.get("bank_id"):
            index_follows(res.engine, app, str(report["bank_id"]))
        return report
    except ValidationError as exc:
        return exc.to_dict()
    except OperationalError as exc:
        if permanent_database_error(exc):
            imports.fail(import_id, deps.engine, f"publish: {public_message(exc)}")
            raise PermanentDatabaseError(public_message(exc)) from exc
        if self.request.retries >= self.max_retries:
            imports.fail(import_id, deps.engine, "publish: database unavailable")
        raise
    except Exception as exc:
        log.exception("import %s publish failed", import_id)
        imports.fail(import_id, deps.engine, f"publish: {public_message(exc)}")
        raise


@app.task(name="tempr.ingest.embed_chunks", autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def embed_chunks(bank_id: str, part: int = 0, parts: int = 1) -> dict[str, int]:
    """Vectors for the bank's chunks stored without one (``part`` of ``parts`` of them): queued
    after each ingest and publish, so facts are visible as soon as they are written and their
    chunks' vectors follow (seconds later), shared out over the ingest workers."""
    return embed_missing_chunks(_deps(), bank_id, part=part, parts=parts)


@app.task(
    name=INDEX_TASK,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
    soft_time_limit=INDEX_TIME_LIMIT_S,
    time_limit=INDEX_TIME_LIMIT_S + 60,
)
def index_bank(bank_id: str, adding: int = 0) -> dict[str, Any]:
    """Build the bank's own HNSW index (``tempr.store.bank_index``), queued by the write that took
    the bank past the threshold, or ahead of an import of ``adding`` facts that will; ``seconds``
    is None when there was nothing to do.

    Its own time limit: a 1M-fact bank's build took about 7 minutes here, past the default task
    limit. A message redelivered while the build still runs finds the build's advisory lock held
    and returns at once."""
    return {"bank_id": bank_id, "seconds": bank_index.build(get_resources().engine, bank_id, adding=adding)}


@app.task(name=ORPHANS_TASK, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def drop_orphan_indexes() -> dict[str, Any]:
    """Drop the own indexes of deleted banks (queued by the bank delete route)."""
    return {"dropped": bank_index.drop_orphans(get_resources().engine)}


def _chunk_vectors_follow(bank_id: str, report: dict[str, Any]) -> None:
    """Queue ``embed_chunks`` parts when the write stored new chunks (and chunk vectors are on).

    The write has committed by now, so a broker error here must not fail (or retry, or for an
    import mark as failed) a write that succeeded: it is logged, and the chunks keep no vector
    until the next write to the bank or ``tempr db embed-chunks``.
    """
    chunks = int(report.get("chunks") or 0)
    if not (bank_id and chunks and get_resources().settings.chunk_vectors):
        return
    parts = parts_for(chunks)
    try:
        for part in range(parts):
            embed_chunks.delay(bank_id, part, parts)
    except Exception:
        log.warning("could not queue embed_chunks for bank %s; run `tempr db embed-chunks`", bank_id, exc_info=True)
