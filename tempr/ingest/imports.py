"""Large files: validate in one streaming pass, stage in chunks, publish in one transaction.

A file is read twice and never held whole. The first pass validates every line and keeps
only an index of fact ids (id -> first line and a 16-byte digest of the content: about
150 bytes a fact), so a bad line anywhere rejects the file before anything is written. The
second pass reads ``chunk_facts`` facts at a time; each chunk is embedded, its entities found,
and staged (``staged_units``) in its own transaction — by this process or by ingest workers.
``publish`` then moves the staged rows into the bank block by block inside one transaction
and marks the import published in that same transaction: recall sees all of the file or none
of it. Memory: the id index plus one chunk (or one publish block) of rows.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from config.errors import IngestValidationError, ValidationError, public_message
from tempr.bank_ids import check_bank_id
from tempr.ingest.facts import BOM, FactIn, load_line, unreadable, validate_fact
from tempr.ingest.reports import with_elapsed
from tempr.providers.embedder import spaces
from tempr.store import bank_index, import_repo, ingest_repo, links_repo, prelink_repo
from tempr.store.banks_repo import bank_space

if TYPE_CHECKING:  # the staging and publish halves import these when they run: validating needs none
    from sqlalchemy import Connection, Engine

    from config.settings import Settings
    from tempr.ingest.pipeline import IngestDeps, IngestReport


class StoreDeps(Protocol):
    """What a publish needs: the database and the settings, never a model (``IngestDeps`` fits)."""

    @property
    def engine(self) -> Engine: ...

    @property
    def settings(self) -> Settings: ...


@dataclass
class PublishDeps:
    engine: Engine
    settings: Settings


ABANDONED_AFTER_S = 3600.0
"""An open import with no staged chunk for this long is failed and its staged rows dropped."""


@dataclass
class FilePlan:
    path: Path
    bank_id: str
    first_line: dict[str, int] = field(default_factory=dict)
    """Fact id -> the line of its first occurrence (later identical copies are skipped)."""

    @property
    def total(self) -> int:
        return len(self.first_line)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with path.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise IngestValidationError("not valid UTF-8", line=number) from None
                yield number, line.removeprefix(BOM) if number == 1 else line
    except OSError as exc:
        raise unreadable(path, exc) from None


def _parse(number: int, raw: str) -> FactIn | None:
    if not raw.strip():
        return None
    return validate_fact(load_line(raw, number), number)


def validate_file(path: Path, bank_id: str, engine: Engine) -> FilePlan:
    """The first pass: every line and every cross-line rule, with bounded memory."""
    check_bank_id(bank_id)
    plan = FilePlan(path, bank_id)
    digests: dict[str, bytes] = {}
    causes: dict[str, int] = {}  # a cause not (yet) seen in the file -> the first line naming it
    for number, raw in _lines(path):
        fact = _parse(number, raw)
        if fact is None:
            continue
        key = fact.key
        digest = hashlib.blake2b(fact.model_dump_json().encode(), digest_size=16).digest()
        if key in digests:
            if digests[key] != digest:
                raise IngestValidationError(
                    f"duplicate id {key!r} (first on line {plan.first_line[key]}) with different content",
                    line=number,
                    field="id",
                )
            continue
        digests[key] = digest
        plan.first_line[key] = number
        for cause in fact.caused_by or []:
            if cause == key:
                raise IngestValidationError("a fact cannot cause itself", line=number, field="caused_by")
            causes.setdefault(cause, number)
    _check_outside_causes(plan, causes, engine)
    return plan


def _check_outside_causes(plan: FilePlan, causes: dict[str, int], engine: Engine) -> None:
    outside = [c for c in causes if c not in plan.first_line]
    with engine.connect() as conn:
        for start in range(0, len(outside), 10_000):
            part = outside[start : start + 10_000]
            known = ingest_repo.existing_fact_ids(conn, plan.bank_id, part)
            for cause in part:
                if cause not in known:
                    raise IngestValidationError(f"names unknown fact {cause!r}", line=causes[cause], field="caused_by")


def iter_chunks(plan: FilePlan, chunk_facts: int) -> Iterator[list[tuple[int, dict[str, Any]]]]:
    """The second pass: (line, raw fact object) for each fact's first occurrence, ``chunk_facts`` at a time."""
    chunk: list[tuple[int, dict[str, Any]]] = []
    for number, raw in _lines(plan.path):
        if not raw.strip():
            continue
        obj = load_line(raw, number)  # valid in the first pass, unless the file changed since
        fact = validate_fact(obj, number)
        if plan.first_line.get(fact.key) != number:
            continue
        chunk.append((number, obj))
        if len(chunk) >= chunk_facts:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def n_chunks(plan: FilePlan, chunk_facts: int) -> int:
    return -(-plan.total // chunk_facts)


def new_import(plan: FilePlan, chunk_facts: int, engine: Engine, space: str) -> str:
    """Register the import (and clean up abandoned ones first): its id is the job id.

    Every chunk is embedded in one vector space: the bank's if it exists, else ``space`` (the
    caller's configured embedder's), whichever worker stages it."""
    import_id = f"import-{uuid.uuid4().hex}"
    with engine.begin() as conn:
        import_repo.clean_abandoned(conn, idle_s=ABANDONED_AFTER_S)
        import_repo.create_import(
            conn,
            import_id,
            plan.bank_id,
            total=plan.total,
            chunks_total=n_chunks(plan, chunk_facts),
            space=bank_space(conn, plan.bank_id) or space,
        )
    return import_id


def stage_chunk(
    import_id: str,
    bank_id: str,
    chunk: int,
    items: list[tuple[int, dict[str, Any]]],
    deps: IngestDeps,
    report: IngestReport | None = None,
) -> int:
    """Embed, find entities and stage one chunk (already validated); returns the facts staged.

    Facts the bank already holds are not embedded again. Safe to run twice (a retry
    replaces the chunk's rows). Raises ``ValidationError`` if the import is closed.
    """
    from tempr.ingest.pipeline import IngestReport, prepare_rows

    facts = [(line, validate_fact(obj, line)) for line, obj in items]
    with deps.engine.connect() as conn:
        existing = ingest_repo.existing_fact_ids(conn, bank_id, [f.key for _, f in facts])
        job = import_repo.get_import(conn, import_id)
    if job is None:
        raise ValidationError(f"no import {import_id!r}", field="import_id")
    deps = replace(deps, embedder=deps.embedder_for(_space(job)))
    new = [(line, f) for line, f in facts if f.key not in existing]
    report = report or IngestReport(bank_id, received=len(facts))
    rows, names = prepare_rows(bank_id, new, deps, report, None) if new else ([], {})
    for row, (line, fact) in zip(rows, new, strict=True):
        row.update(
            line=line,
            entity_names=names[str(row["id"])],
            caused_by=list(fact.caused_by or []),
        )
    with report.timed("stage_write"):
        with deps.engine.begin() as conn:
            if not import_repo.stage_chunk(conn, import_id, chunk, rows, facts=len(facts)):
                raise ValidationError(f"import {import_id} is no longer open", field="import_id")
        with deps.engine.begin() as conn:
            import_repo.heartbeat(conn, import_id)
    return len(facts)


def publish(import_id: str, deps: StoreDeps, *, block: int = 2000) -> dict[str, Any]:
    """Move every staged row into the bank and mark the import published: one transaction.

    Idempotent: publishing a published import returns its report. Needs no model: a worker
    process that has staged nothing yet publishes without loading the embedder or spaCy.

    Into an empty bank that the import takes past 5,000 memories it publishes in bulk
    (``bank_index.publishes_in_bulk``): the blocks are written without semantic links and without
    any HNSW index, and every memory gets its nearest of the whole import. Those links are walked
    before the transaction opens, from the staged vectors and ``TEMPR_INGEST_LINK_SESSIONS``
    sessions at once (``tempr.ingest.prelink``), and copied inside it; with 0 sessions, or if the
    walk's links are not ready, one pass inside the transaction walks them
    (``links_repo.bulk_semantic_links``). The bank's own index is built after the commit
    (``index_follows``), and until it is ready the bank is searched exactly.
    """
    from tempr.ingest.pipeline import IngestReport
    from tempr.ingest.write import row_chunks, write_batch

    started = time.perf_counter()
    linked_s = _prelink(import_id, deps)
    with deps.engine.begin() as conn:
        job = import_repo.get_import(conn, import_id, lock=True)
        if job is None:
            raise ValidationError(f"no import {import_id!r}", field="import_id")
        if job["status"] == "published":
            return dict(job["report"] or {})
        if job["status"] == "failed" or job["chunks_done"] < job["chunks_total"]:
            raise ValidationError(
                f"import {import_id} cannot be published: status {job['status']}, "
                f"{job['chunks_done']}/{job['chunks_total']} chunks staged",
                field="import_id",
            )
        import_repo.touch(conn, import_id, "publishing")
        report = IngestReport(job["bank_id"], received=job["total"])
        s = deps.settings
        if job["total"] > bank_index.OWN_INDEX_MIN_UNITS:  # decide under the bank's lock: no writer between
            ingest_repo.lock_bank(conn, job["bank_id"], s.text_search_config, _space(job))
        bulk = bank_index.publishes_in_bulk(bank_index.bank_search(conn, job["bank_id"]), job["total"])
        per_block = s.model_copy(update={"semantic_link_top_k": 0}) if bulk else s  # linked once, below
        for rows in import_repo.staged_blocks(conn, import_id, block):
            names = {str(r["id"]): list(r.pop("entity_names")) for r in rows}
            chunks = row_chunks(rows)
            write_batch(conn, job["bank_id"], rows, names, chunks, per_block, report, space=_space(job))
        if bulk:
            with report.timed("link_semantic"):
                report.links["semantic"] = _bulk_links(conn, import_id, job, report, s)
            report.stages["link_semantic"] += linked_s
        prelink_repo.drop(conn, import_id)
        with report.timed("write_links"):
            report.links["causal"] = import_repo.add_staged_causal_links(conn, import_id)
        report.skipped = report.received - report.inserted  # already in the bank, or won by another writer
        report.elapsed_s = time.perf_counter() - started
        out = {**report.to_dict(), "import_id": import_id}
        import_repo.finish_import(conn, import_id, status="published", report=out)
    return out


def _prelink(import_id: str, deps: StoreDeps) -> float:
    """Walk the semantic links of an import that will be published in bulk, before the publish's
    transaction (``tempr.ingest.prelink``); returns the seconds spent (0.0: not such an import).

    Decided without the bank's lock: the publish decides again under it, and a bank that another
    writer filled meanwhile is published block by block, its walked links dropped unused."""
    from tempr.ingest.prelink import OPEN, prelink

    if deps.settings.ingest_link_sessions <= 0 or deps.settings.semantic_link_top_k <= 0:
        return 0.0
    with deps.engine.connect() as conn:
        job = import_repo.get_import(conn, import_id)
        if job is None or job["status"] not in OPEN or job["chunks_done"] < job["chunks_total"]:
            return 0.0  # the publish's own checks say why
        if not bank_index.publishes_in_bulk(bank_index.bank_search(conn, job["bank_id"]), job["total"]):
            return 0.0
    return prelink(deps.engine, import_id, deps.settings)


def _bulk_links(conn: Connection, import_id: str, job: dict[str, Any], report: IngestReport, s: Settings) -> int:
    """The bulk publish's semantic links: those walked before the transaction when every staged
    memory was written (the bank was empty under its lock, so each was), else walked here."""
    if report.inserted == job["total"] and prelink_repo.ready(conn, import_id):
        return prelink_repo.copy_links(conn, import_id)
    return links_repo.bulk_semantic_links(
        conn, job["bank_id"], threshold=s.semantic_link_threshold, top_k=s.semantic_link_top_k
    )


def _space(job: dict[str, Any]) -> str:
    """The space an import's chunks were embedded in (imports registered before it was recorded: legacy)."""
    return str(job.get("embedder") or spaces.LEGACY)


def fail(import_id: str, engine: Engine, error: str) -> None:
    """Drop the staged rows and record why (nothing of the import was ever visible)."""
    with engine.begin() as conn:
        import_repo.finish_import(conn, import_id, status="failed", error=error[:2000])
        prelink_repo.drop(conn, import_id)


Progress = Callable[[int, int], None]
"""progress(facts staged so far, total)."""


def ingest_file(
    path: Path, bank_id: str, deps: IngestDeps, *, chunk_facts: int = 2000, progress: Progress | None = None
) -> dict[str, Any]:
    """Single process, bounded memory: validate, stage chunk by chunk, publish."""
    started = time.perf_counter()
    plan = validate_file(path, bank_id, deps.engine)
    import_id = new_import(plan, chunk_facts, deps.engine, deps.embedder.space)
    bank_index.build(deps.engine, bank_id, adding=plan.total)  # its publish writes into it (seconds), unless in bulk
    done = 0
    try:
        for number, items in enumerate(iter_chunks(plan, chunk_facts)):
            done += stage_chunk(import_id, bank_id, number, items, deps)
            if progress:
                progress(done, plan.total)
        report = publish(import_id, deps, block=chunk_facts)
    except BaseException as exc:
        fail(import_id, deps.engine, public_message(exc))
        raise
    return with_elapsed(report, time.perf_counter() - started)
