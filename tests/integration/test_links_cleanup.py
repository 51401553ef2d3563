"""Links go with their memories, though ``memory_links`` has no foreign keys (migration 0010), and
entity links with their memory or entity, though ``unit_entities`` has none either (0015).

Their per-row checks were more than half of ingest's link write; statement triggers on
``memory_units`` and ``entities`` keep what the keys' cascade did: no link outlives either end.
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


def test_the_graph_walk_reads_links_from_two_indexes_alone(resources) -> None:
    """Migration 0013: each end's index holds the other end and the weight, so a hop reads a
    memory's links by index-only scans (no visit to the table), and the primary key still keeps a
    link from being written twice."""
    from tempr.store import links_repo
    from tempr.store.recall_filters import Filters
    from tempr.store.recall_graph import _hop_statement

    bank_id = _bank(resources)
    with resources.engine.connect() as raw:
        raw.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM memory_links"))
    with resources.engine.connect() as conn:
        defs = {
            r[0]: r[1]
            for r in conn.execute(text("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memory_links'"))
        }
        assert set(defs) == {"memory_links_pkey", "memory_links_to"}
        assert "(from_unit_id, link_type, to_unit_id) INCLUDE (weight)" in defs["memory_links_pkey"]
        assert "(to_unit_id, link_type, from_unit_id) INCLUDE (weight)" in defs["memory_links_to"]

        ids = [r[0] for r in conn.execute(text("SELECT id::text FROM memory_units WHERE bank_id = :b"), {"b": bank_id})]
        statement, params = _hop_statement(Filters(bank_id))
        params = {**params, "frontier": ids[:5], "exclude": ids[:5], "visited": [], "room": 20, "per_entity": 200}
        for knob in ("enable_seqscan", "enable_bitmapscan"):
            conn.execute(text(f"SET LOCAL {knob} = off"))  # what an index can serve, whatever the table's size
        plan = "\n".join(r[0] for r in conn.execute(text("EXPLAIN (COSTS OFF) " + statement.text), params))
        assert "Index Only Scan using memory_links_pkey" in plan
        assert "Index Only Scan using memory_links_to" in plan

        some = conn.execute(
            text(
                "SELECT from_unit_id::text, to_unit_id::text, weight FROM memory_links "
                "WHERE from_unit_id = ANY(CAST(:u AS uuid[])) AND link_type = 'semantic'"
            ),
            {"u": ids},
        ).all()
        assert some and links_repo.insert_links(conn, "semantic", [(a, b, w) for a, b, w in some]) == 0
        conn.rollback()


_ENTITY_ORPHANS = text("""
    SELECT count(*) FROM unit_entities ue
    WHERE NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.id = ue.unit_id)
       OR NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = ue.entity_id)
""")


def test_entity_links_carry_no_foreign_key_and_go_with_their_memory_or_entity(resources) -> None:
    """Migration 0015: each entity link's two checks visited its memory's heap page (a random page
    of a 4 GB table at 1M memories); statement triggers keep the cascade the keys gave."""
    with resources.engine.connect() as conn:
        kinds = conn.execute(text("SELECT contype FROM pg_constraint WHERE conrelid = 'unit_entities'::regclass")).all()
    assert ("f",) not in kinds and ("p",) in kinds
    bank_id = _bank(resources)
    per_unit = text("SELECT count(*) FROM unit_entities WHERE unit_id = :u")
    per_entity = text("SELECT count(*) FROM unit_entities WHERE entity_id = :e")
    with resources.engine.begin() as conn:
        unit, entity = conn.execute(
            text("""
            SELECT ue.unit_id, (SELECT e2.entity_id FROM unit_entities e2 WHERE e2.unit_id <> ue.unit_id
                                AND e2.unit_id IN (SELECT id FROM memory_units WHERE bank_id = :b) LIMIT 1)
            FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id WHERE u.bank_id = :b LIMIT 1
            """),
            {"b": bank_id},
        ).one()
        assert conn.execute(per_unit, {"u": unit}).scalar_one() > 0
        conn.execute(text("DELETE FROM memory_units WHERE id = :u"), {"u": unit})
        assert conn.execute(per_unit, {"u": unit}).scalar_one() == 0
        assert conn.execute(per_entity, {"e": entity}).scalar_one() > 0
        conn.execute(text("DELETE FROM entities WHERE id = :e"), {"e": entity})
        assert conn.execute(per_entity, {"e": entity}).scalar_one() == 0
        unit_ids = [r[0] for r in conn.execute(text("SELECT id FROM memory_units WHERE bank_id = :b"), {"b": bank_id})]
        left = text("SELECT count(*) FROM unit_entities WHERE unit_id = ANY(:u)")
        assert conn.execute(left, {"u": unit_ids}).scalar_one() > 0
        assert delete_bank(conn, bank_id)
        assert conn.execute(left, {"u": unit_ids}).scalar_one() == 0
        assert conn.execute(_ENTITY_ORPHANS).scalar_one() == 0
