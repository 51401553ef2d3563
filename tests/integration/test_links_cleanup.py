"""Links go with their memories, though ``memory_links`` has no foreign keys (migration 0010).

Their two per-row checks were more than half of ingest's link write; a statement trigger on
``memory_units`` keeps what the keys' cascade did: no link outlives either of its memories.
"""

from __future__ import annotations

import uuid

from sqlalchemy import text

from bench import synthetic
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.providers.embedder.fake import FakeEmbedder
from tempr.store.ingest_repo import delete_bank

_LINKS = text("""
    SELECT count(*) FROM memory_links l
    WHERE l.from_unit_id IN (SELECT id FROM memory_units WHERE bank_id = :b)
       OR l.to_unit_id IN (SELECT id FROM memory_units WHERE bank_id = :b)
""")
_ORPHANS = text("""
    SELECT count(*) FROM memory_links l
    WHERE NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.id = l.from_unit_id)
       OR NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.id = l.to_unit_id)
""")


def _bank(resources) -> str:
    bank_id = f"t-links-gone-{uuid.uuid4().hex[:10]}"
    facts = list(parse_array(list(synthetic.facts(40))))
    settings = resources.settings.model_copy(update={"semantic_link_threshold": 0.0})  # each its top k
    ingest_facts(bank_id, facts, IngestDeps(resources.engine, FakeEmbedder(), resources.extractor, settings))
    return bank_id


def test_memory_links_carry_no_foreign_key(resources) -> None:
    with resources.engine.connect() as conn:
        kinds = conn.execute(text("SELECT contype FROM pg_constraint WHERE conrelid = 'memory_links'::regclass")).all()
    assert ("f",) not in kinds


def test_a_deleted_bank_leaves_no_links(resources) -> None:
    bank_id = _bank(resources)
    with resources.engine.begin() as conn:
        assert conn.execute(_LINKS, {"b": bank_id}).scalar_one() > 40
        unit_ids = [r[0] for r in conn.execute(text("SELECT id FROM memory_units WHERE bank_id = :b"), {"b": bank_id})]
        assert delete_bank(conn, bank_id)
        left = text("SELECT count(*) FROM memory_links WHERE from_unit_id = ANY(:u) OR to_unit_id = ANY(:u)")
        assert conn.execute(left, {"u": unit_ids}).scalar_one() == 0
        assert conn.execute(_ORPHANS).scalar_one() == 0


def test_a_memory_deleted_by_hand_takes_its_links_at_either_end(resources) -> None:
    bank_id = _bank(resources)
    with resources.engine.begin() as conn:
        busiest = conn.execute(
            text("""
            SELECT u.id FROM memory_units u JOIN memory_links l ON l.to_unit_id = u.id
            WHERE u.bank_id = :b GROUP BY u.id ORDER BY count(*) DESC LIMIT 1
            """),
            {"b": bank_id},
        ).scalar_one()
        ends = text("SELECT count(*) FROM memory_links WHERE from_unit_id = :u OR to_unit_id = :u")
        assert conn.execute(ends, {"u": busiest}).scalar_one() > 0
        conn.execute(text("DELETE FROM memory_units WHERE id = :u"), {"u": busiest})
        assert conn.execute(ends, {"u": busiest}).scalar_one() == 0
        assert conn.execute(_LINKS, {"b": bank_id}).scalar_one() > 0  # the others keep theirs
        conn.execute(text("DELETE FROM banks WHERE id = :b"), {"b": bank_id})
        assert conn.execute(_ORPHANS).scalar_one() == 0
