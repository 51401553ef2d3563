"""A bulk import's semantic links walked before its publish (``tempr.ingest.prelink``), from several
database sessions, against the real PostgreSQL+pgvector.

The own-index threshold is lowered to a few dozen memories (5,000 in the product), so that a file
of 60 facts is published in bulk.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tempr.ingest import imports
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.ingest.prelink import prelink
from tempr.store import bank_index, import_repo, links_repo, prelink_repo

pytestmark = pytest.mark.integration

THRESHOLD = 25
FACTS = 60


@pytest.fixture()
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bank_index, "OWN_INDEX_MIN_UNITS", THRESHOLD)
    monkeypatch.setattr(links_repo, "LINK_EXACT_MAX_UNITS", THRESHOLD)
    monkeypatch.setattr(links_repo, "BULK_PAGE", 7)  # several pages in every range


def _deps(resources: Any, sessions: int = 2) -> IngestDeps:
    settings = resources.settings.model_copy(update={"ingest_link_sessions": sessions})
    return IngestDeps(resources.engine, resources.embedder, resources.extractor, settings)


def _file(tmp_path: Path, lo: int, hi: int) -> Path:
    colours = ["red", "blue", "green", "amber", "violet"]
    path = tmp_path / f"facts-{lo}-{hi}.jsonl"
    lines = [
        json.dumps({"id": f"f{i}", "text": f"Item {i} is {colours[i % 5]} on shelf {i % 7}."}) for i in range(lo, hi)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _staged(resources: Any, tmp_path: Path, sessions: int = 2) -> tuple[str, str, IngestDeps]:
    """A fully staged import of ``FACTS`` facts into a new bank, not yet published."""
    bank_id = f"t-prelink-{uuid.uuid4().hex[:10]}"
    deps = _deps(resources, sessions)
    plan = imports.validate_file(_file(tmp_path, 0, FACTS), bank_id, resources.engine)
    import_id = imports.new_import(plan, 20, resources.engine, resources.embedder.space)
    for number, items in enumerate(imports.iter_chunks(plan, 20)):
        imports.stage_chunk(import_id, bank_id, number, items, deps)
    return bank_id, import_id, deps


def _links(resources: Any, bank_id: str) -> set[tuple[str, str, float]]:
    with resources.engine.connect() as conn:
        rows = conn.execute(
            text("""
            SELECT l.from_unit_id::text, l.to_unit_id::text, round(l.weight::numeric, 6) FROM memory_links l
            JOIN memory_units m ON m.id = l.from_unit_id WHERE m.bank_id = :b AND l.link_type = 'semantic'"""),
            {"b": bank_id},
        ).all()
    return {(a, b, float(w)) for a, b, w in rows}


def _prelink_tables(resources: Any, import_id: str) -> set[str]:
    n = prelink_repo.names(import_id)
    with resources.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT relname FROM pg_class WHERE relname IN (:v, :p, :l)"),
            {"v": n.vectors, "p": n.partial, "l": n.links},
        )
        return {r[0] for r in rows}


def _walk(resources: Any, import_id: str, parts: int) -> set[tuple[str, str, float]]:
    """The links ``parts`` ranges find on the import's (already built) vectors table."""
    from tempr.ingest.prelink import _walk as walk

    settings = resources.settings
    with resources.engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {prelink_repo.names(import_id).partial}"))
    with resources.engine.connect() as conn:
        size = conn.execute(text(f"SELECT count(*) FROM {prelink_repo.names(import_id).vectors}")).scalar_one()
        ranges = prelink_repo.ranges(conn, import_id, parts, size)
    assert len(ranges) == parts
    found = sum(walk(resources.engine, import_id, r, settings) for r in ranges)
    with resources.engine.connect() as conn:
        rows = conn.execute(
            text(
                f"SELECT from_id::text, to_id::text, round(weight::numeric, 6) FROM {prelink_repo.names(import_id).partial}"
            )
        ).all()
    assert len(rows) == found
    return {(a, b, float(w)) for a, b, w in rows}


def test_ranges_of_ids_cover_every_memory_once_and_find_the_links_one_session_finds(
    resources, small_threshold, tmp_path
) -> None:
    """The split is by id: walked as one range or as three, the same HNSW graph gives the same links."""
    _, import_id, _ = _staged(resources, tmp_path)
    with resources.engine.begin() as conn:
        assert prelink_repo.prepare(conn, import_id) == FACTS
    one, three = _walk(resources, import_id, 1), _walk(resources, import_id, 3)
    assert one and one == three
    assert len({a for a, _, _ in one}) > FACTS // 2  # most memories have a neighbour above the threshold
    imports.fail(import_id, resources.engine, "test over")
    assert not _prelink_tables(resources, import_id)


def test_a_bulk_publish_copies_the_links_walked_before_its_transaction(resources, small_threshold, tmp_path) -> None:
    """The links are ready before the publish's transaction; it copies exactly them, reports the
    walk in ``link_semantic``, and leaves no table of the walk behind."""
    bank_id, import_id, deps = _staged(resources, tmp_path)
    assert prelink(resources.engine, import_id, deps.settings) > 0
    assert _prelink_tables(resources, import_id) == {prelink_repo.names(import_id).links}
    table = prelink_repo.names(import_id).links
    with resources.engine.begin() as conn:  # one link less than a walk would find: the publish must not walk again
        conn.execute(text(f"DELETE FROM {table} WHERE ctid = (SELECT min(ctid) FROM {table})"))
        ready = conn.execute(text(f"SELECT from_id::text, to_id::text, round(weight::numeric, 6) FROM {table}")).all()
        assert import_repo.get_import(conn, import_id)["status"] == "publishing"
    report = imports.publish(import_id, deps)
    assert report["inserted"] == FACTS and report["links"]["semantic"] == len(ready) > 0
    assert report["stages"]["link_semantic"] > 0
    assert _links(resources, bank_id) == {(a, b, float(w)) for a, b, w in ready}
    assert not _prelink_tables(resources, import_id)
    assert imports.publish(import_id, deps) == report  # published: the walk is not started again
    assert not _prelink_tables(resources, import_id)


def test_the_links_walked_by_sessions_match_the_walk_inside_the_transaction(
    resources, small_threshold, tmp_path
) -> None:
    """Two sessions before the transaction, or one inside it (``TEMPR_INGEST_LINK_SESSIONS=0``):
    each memory gets its nearest of the whole import either way (two HNSW builds may differ by a
    link or two, never by much)."""
    sets = []
    for sessions in (2, 0):
        bank_id, import_id, deps = _staged(resources, tmp_path, sessions)
        report = imports.publish(import_id, deps)
        assert report["inserted"] == FACTS and not _prelink_tables(resources, import_id)
        with resources.engine.connect() as conn:
            fact = dict(
                conn.execute(
                    text("SELECT id::text, fact_id FROM memory_units WHERE bank_id = :b"), {"b": bank_id}
                ).all()
            )
        sets.append({(fact[a], fact[b]) for a, b, _ in _links(resources, bank_id)})
    walked, inside = sets
    assert walked and len(walked & inside) >= 0.95 * max(len(walked), len(inside))


def test_a_walk_left_half_done_is_started_again(resources, small_threshold, tmp_path) -> None:
    """A publish that died during the walk leaves its tables; the next publish walks again from the
    start and writes every link once."""
    bank_id, import_id, deps = _staged(resources, tmp_path)
    with resources.engine.begin() as conn:
        prelink_repo.prepare(conn, import_id)
    with resources.engine.begin() as conn:  # one page walked, then the process "died"
        ids = prelink_repo.page(conn, import_id, prelink_repo.FIRST, prelink_repo.LAST, 10)
        assert prelink_repo.link_page(conn, import_id, ids, threshold=0.0, top_k=3) == 30  # links no walk keeps
    report = imports.publish(import_id, deps)
    links = _links(resources, bank_id)
    assert report["links"]["semantic"] == len(links) > 0
    assert all(w >= deps.settings.semantic_link_threshold - 1e-6 for _, _, w in links)
    assert not _prelink_tables(resources, import_id)


def test_a_bank_filled_after_the_walk_is_published_block_by_block(resources, small_threshold, tmp_path) -> None:
    """Another writer puts memories in the bank between the walk and the publish: the publish is no
    longer a bulk one, so the walked links are dropped unused and each memory is linked as it is written."""
    bank_id, import_id, deps = _staged(resources, tmp_path)
    prelink(resources.engine, import_id, deps.settings)
    ingest_facts(bank_id, parse_array([{"id": "other", "text": "Item 999 is red on shelf 1."}]), deps)
    report = imports.publish(import_id, deps)
    assert report["inserted"] == FACTS
    links = _links(resources, bank_id)
    assert links and len({(a, b) for a, b, _ in links}) == len(links)
    assert not _prelink_tables(resources, import_id)


def test_an_abandoned_import_takes_its_walk_tables_with_it(resources, small_threshold, tmp_path) -> None:
    _, import_id, deps = _staged(resources, tmp_path)
    prelink(resources.engine, import_id, deps.settings)
    assert _prelink_tables(resources, import_id)
    with resources.engine.begin() as conn:
        conn.execute(
            text("UPDATE import_jobs SET updated_at = now() - interval '2 hours' WHERE id = :i"), {"i": import_id}
        )
        assert import_id in import_repo.clean_abandoned(conn, idle_s=3600)
    assert not _prelink_tables(resources, import_id)
