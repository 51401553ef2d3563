"""Banks record their embedder's vector space; ingest and recall on a bank use that space (real PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import text

from config.errors import ValidationError
from tempr.ingest import imports
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.providers.embedder import spaces
from tempr.providers.embedder.fake import FakeEmbedder
from tempr.providers.entities import NoEntities
from tempr.recall.context import RecallContext
from tempr.recall.models import RecallRequest
from tempr.recall.pipeline import recall
from tempr.store.banks_repo import bank_state

pytestmark = pytest.mark.integration
FACTS = [
    {"id": "p1", "text": "Priya booked a flight to Lisbon.", "occurred_start": "2024-03-02"},
    {"id": "p2", "text": "Priya adopted a grey cat called Pixel.", "occurred_start": "2024-03-04"},
]


class _Recording:
    """A resolver that hands out a FakeEmbedder for the fake space and notes what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.fake = FakeEmbedder()

    def __call__(self, space: str) -> Any:
        self.asked.append(space)
        assert space == spaces.FAKE
        return self.fake


def _stored(resources: Any, bank: str, fact_id: str) -> np.ndarray:
    with resources.engine.connect() as conn:
        value = conn.execute(
            text("SELECT embedding FROM memory_units WHERE bank_id = :b AND fact_id = :f"), {"b": bank, "f": fact_id}
        ).scalar_one()
    return np.asarray(value.to_list() if hasattr(value, "to_list") else value, dtype=np.float32)


def _space(resources: Any, bank: str) -> str:
    with resources.engine.connect() as conn:
        return bank_state(conn, bank)[1]


def test_a_bank_keeps_its_space_when_the_configured_embedder_differs(resources, bank_id: str) -> None:
    fake = IngestDeps(resources.engine, FakeEmbedder(), NoEntities(), resources.settings)
    ingest_facts(bank_id, parse_array(FACTS[:1]), fake)
    assert _space(resources, bank_id) == spaces.FAKE

    real = resources.embedder  # another space: it must never write into this bank
    assert real.space != spaces.FAKE
    resolver = _Recording()
    mixed = IngestDeps(resources.engine, real, NoEntities(), resources.settings, embedders=resolver)
    report = ingest_facts(bank_id, parse_array(FACTS), mixed)
    assert report.inserted == 1 and resolver.asked == [spaces.FAKE]
    assert np.allclose(_stored(resources, bank_id, "p2"), FakeEmbedder().embed([FACTS[1]["text"]])[0], atol=1e-6)

    refused = IngestDeps(resources.engine, real, NoEntities(), resources.settings)  # no way to embed fake
    with pytest.raises(ValidationError, match="holds vectors of fake"):
        ingest_facts(bank_id, parse_array([{"id": "p3", "text": "Priya flew home."}]), refused)
    with resources.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM memory_units WHERE bank_id = :b"), {"b": bank_id}).scalar() == 2

    ctx = RecallContext(engine=resources.engine, embedder=real, settings=resources.settings, embedders=resolver)
    request = RecallRequest.model_validate({"query": "Priya adopted a grey cat called Pixel."})
    response = recall(bank_id, request, ctx)
    assert resolver.asked == [spaces.FAKE, spaces.FAKE]  # the query was embedded in the bank's space
    assert response.results[0].fact_id == "p2"


def test_a_bank_from_before_spaces_reads_as_the_exact_model(resources, bank_id: str) -> None:
    ingest_facts(
        bank_id, parse_array(FACTS[:1]), IngestDeps(resources.engine, FakeEmbedder(), NoEntities(), resources.settings)
    )
    with resources.engine.begin() as conn:
        conn.execute(text("UPDATE banks SET embedder = NULL WHERE id = :b"), {"b": bank_id})
    assert _space(resources, bank_id) == spaces.LEGACY == spaces.EXACT


def test_a_staged_import_embeds_every_chunk_in_the_space_it_was_registered_with(
    resources, bank_id: str, tmp_path: Path
) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text("".join(json.dumps({**f, "id": f"{f['id']}-{i}"}) + "\n" for i in range(60) for f in FACTS))
    plan = imports.validate_file(path, bank_id, resources.engine)
    import_id = imports.new_import(plan, 50, resources.engine, spaces.FAKE)  # a new bank, written as fake
    resolver = _Recording()
    worker = IngestDeps(resources.engine, resources.embedder, NoEntities(), resources.settings, embedders=resolver)
    for number, items in enumerate(imports.iter_chunks(plan, 50)):
        imports.stage_chunk(import_id, bank_id, number, items, worker)
    imports.publish(import_id, worker)
    assert _space(resources, bank_id) == spaces.FAKE
    assert resolver.asked and set(resolver.asked) == {spaces.FAKE}
    assert np.allclose(_stored(resources, bank_id, "p2-0"), FakeEmbedder().embed([FACTS[1]["text"]])[0], atol=1e-6)
