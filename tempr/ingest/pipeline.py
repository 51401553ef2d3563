"""Ingest of pre-extracted facts: embed, find entities, link, and write in one transaction.

The slow, CPU-bound work (embedding, entity extraction) happens before the
transaction opens, so the bank's row lock is held only for the writes.
Facts whose id the bank already holds are skipped: ingest is idempotent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Connection, Engine

from config.errors import IngestValidationError, ValidationError
from config.settings import Settings
from tempr.bank_ids import check_bank_id
from tempr.ingest.facts import FactIn, check_batch
from tempr.ingest.write import row_chunks, write_batch
from tempr.providers.embedder import Embedder
from tempr.providers.entities import EntityExtractor
from tempr.store import ingest_repo as repo
from tempr.store import links_repo
from tempr.store.banks_repo import bank_space

Progress = Callable[[str, int], None]
"""progress(stage, n_done_since_last_call); stages: "embed", "write"."""


@dataclass
class IngestReport:
    bank_id: str
    received: int
    inserted: int = 0
    skipped: int = 0
    entity_links: int = 0
    chunks: int = 0
    """Distinct source chunks written (their vectors follow: ``tempr.ingest.backfill``)."""
    links: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)
    """Seconds per stage (embed, entities, and each write step): where ingest time goes."""

    @property
    def facts_per_s(self) -> float:
        return self.received / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "bank_id": self.bank_id,
            "received": self.received,
            "inserted": self.inserted,
            "skipped": self.skipped,
            "entity_links": self.entity_links,
            "chunks": self.chunks,
            "links": self.links,
            "elapsed_s": round(self.elapsed_s, 3),
            "facts_per_s": round(self.facts_per_s, 1),
            "stages": {k: round(v, 3) for k, v in self.stages.items()},
        }

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """Add the block's wall time to ``stages[stage]``."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.stages[stage] = self.stages.get(stage, 0.0) + time.perf_counter() - started


@dataclass
class IngestDeps:
    engine: Engine
    embedder: Embedder
    """The configured embedder: it writes new banks (``embedder_for`` picks one per bank)."""
    extractor: EntityExtractor
    settings: Settings
    embedders: Callable[[str], Embedder] | None = None
    """An embedder for any vector space (``Resources.embedder_for``): existing banks keep theirs."""

    def embedder_for(self, space: str | None) -> Embedder:
        """The embedder that writes ``space``, a bank's recorded space (None: a bank not created yet)."""
        if space is None or space == self.embedder.space:
            return self.embedder
        if self.embedders is None:
            raise ValidationError(
                f"this bank holds vectors of {space}; this process embeds {self.embedder.space} "
                "and has no other embedder",
                field="embedder",
            )
        return self.embedders(space)

    def for_bank(self, conn: Connection, bank_id: str) -> IngestDeps:
        """These deps with the embedder of ``bank_id``'s space (the configured one for a new bank)."""
        embedder = self.embedder_for(bank_space(conn, bank_id))
        return self if embedder is self.embedder else replace(self, embedder=embedder)


def ingest_facts(
    bank_id: str, facts: Sequence[tuple[int, FactIn]], deps: IngestDeps, progress: Progress | None = None
) -> IngestReport:
    started = time.perf_counter()
    check_bank_id(bank_id)
    check_batch(list(facts))
    report = IngestReport(bank_id, received=len(facts))
    unique = _first_of_each(facts)
    with deps.engine.connect() as conn:
        # the batch's facts and every fact they name as a cause: a cause may be in the bank already
        causes = {c for _, f in unique.values() for c in f.caused_by or []}
        existing = repo.existing_fact_ids(conn, bank_id, sorted(set(unique) | causes))
        deps = deps.for_bank(conn, bank_id)
    _check_causes(unique, existing)
    new = {key: lf for key, lf in unique.items() if key not in existing}
    report.skipped = len(facts) - len(new)
    if new:
        rows, names = prepare_rows(bank_id, list(new.values()), deps, report, progress)
        facts_new = [f for _, f in new.values()]
        with deps.engine.begin() as conn:
            keep = write_batch(
                conn, bank_id, rows, names, row_chunks(rows), deps.settings, report, space=deps.embedder.space
            )
            with report.timed("write_links"):
                report.links["causal"] = links_repo.add_causal_links(
                    conn, bank_id, _causal_pairs(bank_id, facts_new, keep)
                )
            commit_started = time.perf_counter()
        report.stages["commit"] = time.perf_counter() - commit_started
        if progress:
            progress("write", len(rows))
    report.elapsed_s = time.perf_counter() - started
    return report


def _first_of_each(facts: Sequence[tuple[int, FactIn]]) -> dict[str, tuple[int, FactIn]]:
    unique: dict[str, tuple[int, FactIn]] = {}
    for line, fact in facts:
        unique.setdefault(fact.key, (line, fact))
    return unique


def _check_causes(unique: dict[str, tuple[int, FactIn]], existing: set[str]) -> None:
    known = set(unique) | existing
    for key, (line, fact) in unique.items():
        for cause in fact.caused_by or []:
            if cause not in known:
                raise IngestValidationError(f"names unknown fact {cause!r}", line=line, field="caused_by")
            if cause == key:
                raise IngestValidationError("a fact cannot cause itself", line=line, field="caused_by")


def prepare_rows(
    bank_id: str,
    facts: list[tuple[int, FactIn]],
    deps: IngestDeps,
    report: IngestReport,
    progress: Progress | None,
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """Embed and find entities (the CPU-bound part, outside any transaction): one row per fact.

    Each row also carries its chunk's text (``chunk_text``). Chunk vectors are not computed here:
    ``tempr.ingest.backfill`` embeds a bank's new chunks after its facts are visible.
    """
    texts = [f.text for _, f in facts]
    with report.timed("embed"):
        vectors, tokens = _embed(texts, deps, progress)
    need = [i for i, (_, f) in enumerate(facts) if f.entities is None]
    with report.timed("entities"):
        extracted = dict(zip(need, deps.extractor.extract([texts[i] for i in need]), strict=True))
    rows, names = [], {}
    for i, (_, fact) in enumerate(facts):
        unit_id = repo.unit_uuid(bank_id, fact.key)
        names[unit_id] = fact.entities if fact.entities is not None else extracted[i]
        row = _row(bank_id, unit_id, fact, vectors[i])
        row["tokens"] = tokens[i]
        row["chunk_text"] = fact.chunk.text if fact.chunk else None
        rows.append(row)
    return rows, names


def _embed(texts: list[str], deps: IngestDeps, progress: Progress | None) -> tuple[list[Any], list[bytes | None]]:
    """Each text's vector and packed token vectors (None each with ``TEMPR_TOKEN_VECTORS=false``; empty
    bytes for a text that keeps no token, such as "March 8, 2024")."""
    step = embed_step(deps.settings)
    vectors: list[Any] = []
    tokens: list[bytes | None] = []
    for start in range(0, len(texts), step):
        batch, packed = deps.embedder.embed_tokens(texts[start : start + step], tokens=deps.settings.token_vectors)
        vectors.extend(batch)
        # empty bytes: computed, nothing to keep (``tempr db embed-tokens`` fills in only NULLs)
        tokens.extend(p if p is not None or not deps.settings.token_vectors else b"" for p in packed)
        if progress:
            progress("embed", len(texts[start : start + step]))
    return vectors, tokens


def embed_step(settings: Settings) -> int:
    """Texts per embedder call in ingest, and in the bench's figure for the embedder alone.

    A call sorts its texts by length before cutting them into batches, and runs its batches side by
    side (``OnnxMiniLMEmbedder._pool``), so a larger call pads less and leaves its threads idle at its
    end less often: 1,210 LoCoMo facts embedded at 861 texts/s in calls of 256 against 760 in calls of
    64 (BENCHMARKS.md, "Batches side by side"). Progress is reported once a call.
    """
    return max(settings.embed_batch_size * 16, 256)


def _row(bank_id: str, unit_id: str, fact: FactIn, vector: object) -> dict[str, Any]:
    return {
        "id": unit_id,
        "bank_id": bank_id,
        "fact_id": fact.key,
        "text": fact.text,
        "context": fact.context,
        "fact_type": fact.fact_type,
        "embedding": vector,
        "occurred_start": fact.occurred_start,
        "occurred_end": fact.occurred_end,
        "mentioned_at": fact.mentioned_at,
        "proof_count": fact.proof_count or 1,
        "tags": sorted(set(fact.tags or [])),
        "metadata": fact.metadata or {},
        "document_id": fact.document_id,
        "chunk_id": fact.chunk.id if fact.chunk else None,
    }


def _causal_pairs(bank_id: str, facts: list[FactIn], keep: set[str]) -> list[tuple[str, str]]:
    """(effect unit id, cause fact id) for each new fact's ``caused_by`` (``links_repo.add_causal_links``)."""
    pairs: list[tuple[str, str]] = []
    for f in facts:
        if not f.caused_by:
            continue  # most facts: no id to derive (a uuid5 each, 14 ms for 1,210 facts)
        effect = repo.unit_uuid(bank_id, f.key)
        if effect in keep:
            pairs.extend((effect, c) for c in f.caused_by)
    return pairs
