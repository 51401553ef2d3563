"""Token vectors (``tempr.core.token_match``) are stored with each memory, by one-transaction ingest
and by a staged import alike, and reach the ranker's inputs (real PostgreSQL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tempr.core import token_match
from tempr.ingest import imports
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.providers.embedder.fake import FakeEmbedder
from tempr.providers.entities import NoEntities
from tempr.store import recall_repo

pytestmark = pytest.mark.integration
FACTS = [
    {"id": "f1", "text": "Nate won a Valorant games final."},
    {"id": "f2", "text": "Nate likes green tea."},
    {"id": "f3", "text": "It was so."},  # stopwords only: its words are its tokens
]


def _deps(resources: Any, **settings: Any) -> IngestDeps:
    return IngestDeps(resources.engine, FakeEmbedder(), NoEntities(), resources.settings.model_copy(update=settings))


def _stored(resources: Any, bank: str) -> dict[str, bytes | None]:
    with resources.engine.connect() as conn:
        rows = conn.execute(text("SELECT fact_id, tokens FROM memory_units WHERE bank_id = :b"), {"b": bank}).all()
    return {r[0]: None if r[1] is None else bytes(r[1]) for r in rows}


def _expected() -> dict[str, bytes | None]:
    _, packed = FakeEmbedder().embed_tokens([f["text"] for f in FACTS])
    return {f["id"]: p for f, p in zip(FACTS, packed, strict=True)}


def test_ingest_stores_each_memorys_token_vectors_and_the_ranker_reads_them(resources: Any, bank_id: str) -> None:
    ingest_facts(bank_id, parse_array(FACTS), _deps(resources))
    stored = _stored(resources, bank_id)
    assert stored == _expected()
    with resources.engine.connect() as conn:
        ids = [str(r[0]) for r in conn.execute(text("SELECT id FROM memory_units WHERE bank_id = :b"), {"b": bank_id})]
        units = recall_repo.fetch_units(conn, ids, tokens=True)
    by_fact = {u["fact_id"]: u["tokens"] for u in units.values()}
    assert by_fact == stored
    query = token_match.unpack(FakeEmbedder().embed_tokens(["What games does Nate play?"])[1][0])
    got = token_match.maxsim(query, [by_fact["f1"], by_fact["f2"]])
    assert got[0] > got[1]


def test_a_staged_import_publishes_the_same_token_vectors(resources: Any, bank_id: str, tmp_path: Path) -> None:
    import json

    path = tmp_path / "facts.jsonl"
    path.write_text("".join(json.dumps(f) + "\n" for f in FACTS))
    deps = _deps(resources)
    plan = imports.validate_file(path, bank_id, deps.engine)
    import_id = imports.new_import(plan, 2, deps.engine, deps.embedder.space)
    for number, items in enumerate(imports.iter_chunks(plan, 2)):
        imports.stage_chunk(import_id, bank_id, number, items, deps)
    imports.publish(import_id, deps)
    assert _stored(resources, bank_id) == _expected()


def test_without_token_vectors_nothing_is_stored(resources: Any, bank_id: str) -> None:
    ingest_facts(bank_id, parse_array(FACTS), _deps(resources, token_vectors=False))
    assert set(_stored(resources, bank_id).values()) == {None}
    _, packed = FakeEmbedder().embed_tokens(["Nate"], tokens=False)
    assert packed == [None]
