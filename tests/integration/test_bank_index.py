"""A large bank's own HNSW index (``tempr.store.bank_index``), against the real PostgreSQL+pgvector.

The threshold is lowered to a few dozen memories here (5,000 in the product), so that a bank
built in a second crosses it. No test holds a transaction open while an index is built: ``CREATE
INDEX CONCURRENTLY`` waits for every older transaction, its own session's pool included.
"""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pytest
from sqlalchemy import text

from tempr.ingest.facts import parse_array
from tempr.ingest.own_index import INDEX_TASK, ORPHANS_TASK, index_follows
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.store import bank_index, ingest_repo, links_repo, recall_repo
from tempr.store.recall_filters import Filters

pytestmark = pytest.mark.integration

THRESHOLD = 25


@pytest.fixture()
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bank_index, "OWN_INDEX_MIN_UNITS", THRESHOLD)
    monkeypatch.setattr(links_repo, "LINK_EXACT_MAX_UNITS", THRESHOLD)


def _deps(resources: Any) -> IngestDeps:
    return IngestDeps(resources.engine, resources.embedder, resources.extractor, resources.settings)


def _facts(lo: int, hi: int) -> list[Any]:
    colours = ["red", "blue", "green", "amber", "violet"]
    return parse_array(
        [
            {"id": f"f{i}", "text": f"Item {i} is {colours[i % 5]} and sits on shelf {i % 7} of room {i % 3}."}
            for i in range(lo, hi)
        ]
    )


def _bank(resources: Any, n: int) -> str:
    bank_id = f"t-own-index-{uuid.uuid4().hex[:10]}"
    ingest_facts(bank_id, _facts(0, n), _deps(resources))
    return bank_id


def _flags(resources: Any, bank_id: str) -> dict[bool, int]:
    with resources.engine.connect() as conn:
        sql = "SELECT ann_indexed, count(*) FROM memory_units WHERE bank_id = :b GROUP BY 1"
        return {bool(r[0]): int(r[1]) for r in conn.execute(text(sql), {"b": bank_id})}


def _index_state(resources: Any, bank_id: str) -> tuple[bool, bool] | None:
    """(valid, bank flagged) for the bank's index, or None when there is no index."""
    with resources.engine.connect() as conn:
        row = conn.execute(
            text("""
            SELECT i.indisvalid, (SELECT own_index FROM banks WHERE id = :b)
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = :n"""),
            {"b": bank_id, "n": bank_index.index_name(bank_id)},
        ).first()
    return None if row is None else (bool(row[0]), bool(row[1]))


def _plan_of_search(resources: Any, bank_id: str, query: list[float], limit: int) -> tuple[list[Any], str]:
    """The semantic search's hits, and the plan of its statement with the exact alternatives
    switched off (so the plan shows whether an index can serve it at all)."""
    seen: list[Any] = []

    class Spy:
        def execute(self, stmt: Any, params: Any = None) -> Any:
            if "FROM memory_units" in str(stmt):
                seen.append((stmt, params))
            return conn.execute(stmt, params)

    with resources.engine.connect() as conn:
        for knob in ("enable_sort", "enable_bitmapscan", "enable_seqscan"):
            conn.execute(text(f"SET LOCAL {knob} = off"))
        hits = recall_repo.semantic_search(Spy(), query, Filters(bank_id), limit)
        stmt, params = seen[-1]
        plan = " ".join(r[0] for r in conn.execute(text("EXPLAIN (COSTS OFF) " + stmt.text), params))
        conn.rollback()
    return hits, plan


def _exact_top(resources: Any, bank_id: str, query: list[float], k: int) -> list[str]:
    """The bank's ``k`` memories nearest ``query`` by brute force (ties by id)."""
    with resources.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT id::text, vector_send(embedding) FROM memory_units WHERE bank_id = :b"), {"b": bank_id}
        ).all()
    vectors = recall_repo.vectors_from_send([r[1] for r in rows]).astype(np.float64)
    q = np.asarray(query)
    cosine = vectors @ q / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(q))
    return [rows[j][0] for j in sorted(range(len(rows)), key=lambda j: (-round(cosine[j], 9), rows[j][0]))[:k]]


def test_a_large_bank_is_searched_through_its_own_index(resources, small_threshold) -> None:
    bank_id = _bank(resources, 30)  # past the threshold: no HNSW index holds it yet
    assert _flags(resources, bank_id) == {False: 30}  # never in the shared index (migration 0014)
    with resources.engine.connect() as conn:
        assert bank_index.wants_index(conn, bank_id)
        assert links_repo.exact_link_search(conn, bank_id)  # until its own index is ready
    assert _index_state(resources, bank_id) is None
    query = resources.embedder.embed(["which item is violet on shelf 4"])[0].tolist()
    hits, plan = _plan_of_search(resources, bank_id, query, 30)
    assert "hnsw" not in plan.lower()  # searched exactly meanwhile: every memory, none missed
    assert [h.id for h in hits[:10]] == _exact_top(resources, bank_id, query, 10) and len(hits) == 30

    seconds = bank_index.build(resources.engine, bank_id)
    assert seconds is not None and seconds >= 0
    assert _index_state(resources, bank_id) == (True, True)
    assert bank_index.build(resources.engine, bank_id) is None  # built: nothing to do

    ingest_facts(bank_id, _facts(30, 40), _deps(resources))  # new memories go into its own index only
    assert _flags(resources, bank_id) == {False: 40}

    hits, plan = _plan_of_search(resources, bank_id, query, 40)
    assert bank_index.index_name(bank_id) in plan and "memory_units_embedding_hnsw" not in plan
    assert len(hits) == 40  # every memory, those written after the build included
    assert [h.id for h in hits[:10]] == _exact_top(resources, bank_id, query, 10)  # ef >= 40 over 40 nodes


def test_an_index_build_gives_its_session_back_to_the_pool_with_the_default_memory(resources, small_threshold) -> None:
    """The build raises ``maintenance_work_mem`` to its vectors' size (up to 8 GB) on a pooled
    session: left set, every later VACUUM or index build through that session would use it."""
    bank_id = _bank(resources, 30)
    with resources.engine.connect() as conn:
        default = conn.execute(text("SHOW maintenance_work_mem")).scalar()
    assert bank_index.build(resources.engine, bank_id) is not None
    pooled = [resources.engine.connect() for _ in range(max(resources.engine.pool.checkedin(), 1))]
    try:
        assert {c.execute(text("SHOW maintenance_work_mem")).scalar() for c in pooled} == {default}
    finally:
        for c in pooled:
            c.close()


def test_an_index_build_refreshes_statistics_that_predate_the_bank(resources, small_threshold) -> None:
    """A bank written since the table's last ANALYZE looks nearly empty to the planner, which then
    sorts the whole bank instead of walking its new index; the build analyses the table once."""
    _bank(resources, 30)  # rows the planner knows when it analyses, none of them the new bank's
    with resources.engine.connect() as conn:
        conn.execute(text("ANALYZE memory_units"))
        conn.commit()
    bank_id = f"t-own-index-{uuid.uuid4().hex[:10]}"
    ingest_facts(bank_id, _facts(0, 400), _deps(resources))
    with resources.engine.connect() as conn:
        assert bank_index.planned_rows(conn, bank_id) * bank_index.STALE_ESTIMATE_RATIO < 400
    assert bank_index.build(resources.engine, bank_id) is not None
    with resources.engine.connect() as conn:
        assert bank_index.planned_rows(conn, bank_id) * bank_index.STALE_ESTIMATE_RATIO >= 400
        assert not bank_index.refresh_statistics(conn, bank_id)  # current: nothing to do


def test_an_index_build_stands_when_its_analyze_cannot_get_the_table(
    resources, small_threshold, monkeypatch, caplog
) -> None:
    """Another session holds the lock ANALYZE needs (a manual VACUUM would): the ANALYZE gives up
    after its lock timeout, and the build still returns with the index valid and flagged, so a
    command whose import has committed does not fail on it."""
    monkeypatch.setattr(bank_index, "ANALYZE_LOCK_TIMEOUT_S", 0.2)
    _bank(resources, 30)
    with resources.engine.connect() as conn:
        conn.execute(text("ANALYZE memory_units"))
        conn.commit()
    bank_id = f"t-own-index-{uuid.uuid4().hex[:10]}"
    ingest_facts(bank_id, _facts(0, 400), _deps(resources))
    planned = bank_index.planned_rows
    with resources.engine.connect() as holder:

        def index_built_then_table_locked(conn: Any, bank: str) -> float:
            """The table's lock taken once the index is built (the build needs that lock too)."""
            holder.execute(text("LOCK TABLE memory_units IN SHARE UPDATE EXCLUSIVE MODE"))  # what VACUUM takes
            return planned(conn, bank)

        monkeypatch.setattr(bank_index, "planned_rows", index_built_then_table_locked)
        with caplog.at_level("WARNING", logger=bank_index.__name__):
            assert bank_index.build(resources.engine, bank_id) is not None
        holder.rollback()
    monkeypatch.setattr(bank_index, "planned_rows", planned)
    assert _index_state(resources, bank_id) == (True, True)
    assert "was not analysed" in caplog.text
    with resources.engine.connect() as conn:  # still stale; the session went back to the pool as it was
        assert bank_index.planned_rows(conn, bank_id) * bank_index.STALE_ESTIMATE_RATIO < 400
        assert conn.execute(text("SHOW lock_timeout")).scalar() == "0"


def test_a_bank_in_the_shared_index_keeps_it_until_it_has_its_own(resources, small_threshold) -> None:
    """A bank written before migration 0014 (its memories in the shared index, ``shared_index``)
    keeps entering and searching the shared index; once its own is ready, new memories skip it."""
    bank_id = _bank(resources, 30)
    with resources.engine.begin() as conn:  # as 0014 finds a bank that entered the shared index before it
        conn.execute(text("UPDATE memory_units SET ann_indexed = true WHERE bank_id = :b"), {"b": bank_id})
        conn.execute(text("UPDATE banks SET shared_index = true WHERE id = :b"), {"b": bank_id})
        assert not links_repo.exact_link_search(conn, bank_id)
    ingest_facts(bank_id, _facts(30, 35), _deps(resources))
    assert _flags(resources, bank_id) == {True: 35}
    bank_index.build(resources.engine, bank_id)
    ingest_facts(bank_id, _facts(35, 40), _deps(resources))
    assert _flags(resources, bank_id) == {True: 35, False: 5}
    hits, plan = _plan_of_search(resources, bank_id, resources.embedder.embed(["a blue item"])[0].tolist(), 40)
    assert bank_index.index_name(bank_id) in plan and len(hits) == 40


def test_links_of_a_bank_with_its_own_index_come_through_it(resources, small_threshold) -> None:
    """Ingest's link k-NN of a large bank reads the bank's own index, and finds the memories
    written after it was built."""
    bank_id = _bank(resources, 30)
    bank_index.build(resources.engine, bank_id)
    ingest_facts(bank_id, _facts(30, 40), _deps(resources))  # written after the build
    new, _ = _prepared(resources, bank_id, _facts(40, 50))
    seen: list[Any] = []
    with resources.engine.connect() as conn:
        tx = conn.begin()
        try:
            ingest_repo.stage_batch(conn, new)
            assert not links_repo.exact_link_search(conn, bank_id)
            spy = _Recorder(conn, seen)
            found = links_repo.existing_semantic_candidates(spy, bank_id, threshold=0.0, top_k=10)  # type: ignore[arg-type]
            stmt, params = seen[-1]
            conn.execute(text("SET LOCAL enable_sort = off"))  # as the query runs (links_repo.sorting_off)
            plan = " ".join(r[0] for r in conn.execute(text("EXPLAIN (COSTS OFF) " + stmt.text), params))
        finally:
            tx.rollback()
    assert bank_index.index_name(bank_id) in plan
    reached = {other for hits in found.values() for _, other, _ in hits}
    with resources.engine.connect() as conn:
        later = {
            r[0]
            for r in conn.execute(
                text("SELECT id::text FROM memory_units WHERE bank_id = :b AND fact_id = ANY(:f)"),
                {"b": bank_id, "f": [f"f{i}" for i in range(30, 40)]},
            )
        }
    assert len(later) == 10 and reached & later  # the memories written after the build are found
    assert all(len(hits) == 10 for hits in found.values())


class _Recorder:
    """Passes statements to the connection and keeps the link query with its parameters."""

    def __init__(self, conn: Any, seen: list[Any]) -> None:
        self.conn, self.seen = conn, seen

    def execute(self, stmt: Any, params: Any = None) -> Any:
        if "ingest_batch n" in str(stmt):
            self.seen.append((stmt, params))
        return self.conn.execute(stmt, params)


def _prepared(resources: Any, bank_id: str, facts: list[Any]) -> tuple[list[dict[str, Any]], Any]:
    from tempr.ingest.pipeline import IngestReport, prepare_rows

    return prepare_rows(bank_id, facts, _deps(resources), IngestReport(bank_id, received=len(facts)), None)


def test_a_small_bank_wants_no_index(resources, small_threshold) -> None:
    bank_id = _bank(resources, 10)
    assert bank_index.build(resources.engine, bank_id) is None
    assert _index_state(resources, bank_id) is None
    hits, plan = _plan_of_search(resources, bank_id, resources.embedder.embed(["a red item"])[0].tolist(), 10)
    assert len(hits) == 10 and "hnsw" not in plan.lower()  # the exact scan, as before


def _index_by_hand(resources: Any, bank_id: str, *, valid: bool = True) -> None:
    """The bank's index as a build that died after it would leave it: valid but unflagged, or
    (``valid=False``) half-built (INVALID)."""
    name = bank_index.index_name(bank_id)
    with resources.engine.connect() as raw:
        conn = raw.execution_options(isolation_level="AUTOCOMMIT")
        conn.execute(
            text(
                f"CREATE INDEX {name} ON memory_units USING hnsw (embedding vector_cosine_ops) "
                f"WHERE {bank_index.bank_clause(bank_id, 'memory_units')}"
            )
        )
        if not valid:
            conn.execute(
                text("UPDATE pg_index SET indisvalid = false WHERE indexrelid = CAST(:n AS regclass)"), {"n": name}
            )


def test_an_index_left_unflagged_or_invalid_is_finished(resources, small_threshold) -> None:
    """A build that died after its index was valid (flag not set) is flagged; one that died
    half-way (an INVALID index) is dropped and built again."""
    bank_id = _bank(resources, 30)
    _index_by_hand(resources, bank_id)
    assert _index_state(resources, bank_id) == (True, False)
    assert bank_index.build(resources.engine, bank_id) is not None
    assert _index_state(resources, bank_id) == (True, True)

    other = _bank(resources, 30)
    _index_by_hand(resources, other, valid=False)
    assert _index_state(resources, other) == (False, False)
    assert bank_index.build(resources.engine, other) is not None
    assert _index_state(resources, other) == (True, True)


def test_a_deleted_banks_index_is_dropped_and_others_kept(resources, small_threshold) -> None:
    kept, gone = _bank(resources, 30), _bank(resources, 30)
    for bank_id in (kept, gone):
        bank_index.build(resources.engine, bank_id)
    with resources.engine.begin() as conn:
        assert ingest_repo.delete_bank(conn, gone)
    assert bank_index.index_name(gone) in bank_index.drop_orphans(resources.engine)
    assert _index_state(resources, gone) is None
    assert _index_state(resources, kept) == (True, True)


class _Broker:
    """Records what would be sent; the broker is not what these tests are about."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, tuple[Any, ...]]] = []

    def send_task(self, name: str, args: tuple[Any, ...] = ()) -> None:
        self.sent.append((name, tuple(args)))


def test_a_write_past_the_threshold_queues_the_build_once_it_is_needed(resources, small_threshold) -> None:
    broker = _Broker()
    bank_id = _bank(resources, 20)
    assert not index_follows(resources.engine, broker, bank_id)  # type: ignore[arg-type]
    ingest_facts(bank_id, _facts(20, 30), _deps(resources))
    assert index_follows(resources.engine, broker, bank_id)  # type: ignore[arg-type]
    assert broker.sent == [(INDEX_TASK, (bank_id,))]
    bank_index.build(resources.engine, bank_id)
    assert not index_follows(resources.engine, broker, bank_id)  # type: ignore[arg-type]
    assert len(broker.sent) == 1


def test_the_fleet_builds_and_drops_the_index_through_its_tasks(resources, worker) -> None:
    """The two tasks, run by a real ingest worker (the threshold there is the product's: the
    worker is asked directly, as ``index_follows`` would)."""
    from workers.app import app

    bank_id = _bank(resources, 30)
    with resources.engine.begin() as conn:  # past the worker's own threshold, as a 5,001-fact bank would be
        conn.execute(text("UPDATE banks SET unit_count = 6000 WHERE id = :b"), {"b": bank_id})
    done = app.send_task(INDEX_TASK, args=(bank_id,)).get(timeout=120)
    assert done["bank_id"] == bank_id and done["seconds"] is not None
    assert _index_state(resources, bank_id) == (True, True)
    with resources.engine.begin() as conn:
        assert ingest_repo.delete_bank(conn, bank_id)
    dropped = app.send_task(ORPHANS_TASK).get(timeout=120)["dropped"]
    assert bank_index.index_name(bank_id) in dropped and _index_state(resources, bank_id) is None


def _tempr(*args: str) -> Any:
    import os
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "tempr.cli.main", *args], env={**os.environ}, capture_output=True, text=True, timeout=300
    )


def test_the_cli_says_which_banks_want_an_index_and_builds_them(resources, stack) -> None:
    import json

    bank_id = _bank(resources, 30)
    with resources.engine.begin() as conn:  # past the CLI's own threshold, as a 5,001-fact bank would be
        conn.execute(text("UPDATE banks SET unit_count = 6000 WHERE id = :b"), {"b": bank_id})
    hinted = _tempr("db", "upgrade")
    assert hinted.returncode == 0, hinted.stderr
    assert "no HNSW index of their own yet" in hinted.stdout and "tempr db index-banks" in hinted.stdout

    built = _tempr("db", "index-banks")
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["built"][bank_id] is not None and bank_id in built.stderr
    assert _index_state(resources, bank_id) == (True, True)
    quiet = _tempr("db", "upgrade")
    assert quiet.returncode == 0 and "index-banks" not in quiet.stdout

    missing = _tempr("db", "index-banks", "--bank", "no-such-bank")
    assert missing.returncode == 1 and "does not exist" in (missing.stdout + missing.stderr)
    assert "Traceback" not in missing.stderr


def _file(tmp_path: Any, lo: int, hi: int) -> Any:
    import json

    path = tmp_path / "facts.jsonl"
    colours = ["red", "blue", "green", "amber", "violet"]
    lines = [
        json.dumps({"id": f"f{i}", "text": f"Item {i} is {colours[i % 5]} on shelf {i % 7}."}) for i in range(lo, hi)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_an_import_past_the_threshold_publishes_into_an_index_built_ahead(resources, small_threshold, tmp_path) -> None:
    """Into a bank that holds memories: the index is built before the publish, the publish adopts
    it, no memory enters the shared index, and the bank is searched through its own."""
    from tempr.ingest.imports import ingest_file

    bank_id = _bank(resources, 10)
    report = ingest_file(_file(tmp_path, 10, 40), bank_id, _deps(resources), chunk_facts=15)
    assert report["inserted"] == 30
    assert _index_state(resources, bank_id) == (True, True)
    assert _flags(resources, bank_id) == {False: 40}  # straight into the bank's own graph
    assert report["links"]["semantic"] > 0  # linked through it
    hits, plan = _plan_of_search(resources, bank_id, resources.embedder.embed(["a violet item"])[0].tolist(), 40)
    assert len(hits) == 40 and bank_index.index_name(bank_id) in plan


def _semantic_links(resources: Any, bank_id: str) -> dict[str, set[str]]:
    with resources.engine.connect() as conn:
        rows = conn.execute(
            text("""
            SELECT l.from_unit_id::text, l.to_unit_id::text FROM memory_links l
            JOIN memory_units m ON m.id = l.from_unit_id WHERE m.bank_id = :b AND l.link_type = 'semantic'"""),
            {"b": bank_id},
        ).all()
    out: dict[str, set[str]] = {}
    for a, b in rows:
        out.setdefault(a, set()).add(b)
    return out


def test_an_import_into_an_empty_bank_is_published_in_bulk(resources, small_threshold, tmp_path) -> None:
    """No index is built ahead and none is written into: the publish links every memory to its
    nearest of the whole import through a temporary index, in the same transaction; the bank is
    searched exactly until its own index is built after the commit."""
    from tempr.ingest.imports import ingest_file

    s = resources.settings
    bank_id = f"t-own-bulk-{uuid.uuid4().hex[:10]}"
    report = ingest_file(_file(tmp_path, 0, 60), bank_id, _deps(resources), chunk_facts=15)
    assert report["inserted"] == 60 and report["links"]["semantic"] > 0
    assert _index_state(resources, bank_id) is None and _flags(resources, bank_id) == {False: 60}
    with resources.engine.connect() as conn:  # the link pass's own table went with its transaction
        assert not conn.execute(text("SELECT count(*) FROM pg_class WHERE relname LIKE 'bulk_vectors%'")).scalar()

    with resources.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT id::text, fact_id, vector_send(embedding) FROM memory_units WHERE bank_id = :b"),
            {"b": bank_id},
        ).all()
    ids, line = [r[0] for r in rows], {r[0]: int(r[1][1:]) for r in rows}
    vectors = recall_repo.vectors_from_send([r[2] for r in rows]).astype(np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cos = vectors @ vectors.T
    np.fill_diagonal(cos, -np.inf)
    linked = _semantic_links(resources, bank_id)
    assert sum(map(len, linked.values())) == report["links"]["semantic"]
    assert all(len(found) <= s.semantic_link_top_k for found in linked.values())
    same = 0
    for j, unit in enumerate(ids):
        top = np.argsort(-cos[j])[: s.semantic_link_top_k]
        clearly = {ids[c] for c in top if cos[j, c] >= s.semantic_link_threshold + 1e-3}  # no rounding tie
        same += clearly <= linked.get(unit, set())
    assert same >= 0.95 * len(ids)  # each memory's nearest of the whole import (HNSW: nearly exact)
    # a memory of the first block links to memories of later blocks: block by block, it could not
    assert any(line[a] < 15 and line[b] >= 15 for a, found in linked.items() for b in found)

    query = resources.embedder.embed(["a violet item"])[0].tolist()
    hits, plan = _plan_of_search(resources, bank_id, query, 60)
    assert len(hits) == 60 and "hnsw" not in plan.lower()  # exact until its own index is ready
    assert bank_index.build(resources.engine, bank_id) is not None
    hits, plan = _plan_of_search(resources, bank_id, query, 60)
    assert len(hits) == 60 and bank_index.index_name(bank_id) in plan


def test_an_index_built_ahead_of_an_open_import_is_kept_until_the_import_fails(
    resources, small_threshold, tmp_path
) -> None:
    from tempr.ingest import imports

    bank_id = _bank(resources, 10)
    plan = imports.validate_file(_file(tmp_path, 10, 40), bank_id, resources.engine)
    import_id = imports.new_import(plan, 15, resources.engine, resources.embedder.space)
    assert bank_index.build(resources.engine, bank_id, adding=plan.total) is not None
    name = bank_index.index_name(bank_id)
    with resources.engine.begin() as conn:  # the bank goes while its import is still open
        assert ingest_repo.delete_bank(conn, bank_id)
    assert name not in bank_index.drop_orphans(resources.engine)  # the import may still publish into it
    assert _index_state(resources, bank_id) is not None
    imports.fail(import_id, resources.engine, "given up")
    assert name in bank_index.drop_orphans(resources.engine)
    assert _index_state(resources, bank_id) is None


def test_no_index_is_built_ahead_of_an_import_into_an_empty_bank(resources, small_threshold) -> None:
    with resources.engine.connect() as conn:
        new = f"t-own-none-{uuid.uuid4().hex[:10]}"
        assert not bank_index.wants_index_ahead(conn, new, 40)  # published in bulk instead
        assert bank_index.publishes_in_bulk(bank_index.bank_search(conn, new), 40)
        assert not bank_index.publishes_in_bulk(bank_index.bank_search(conn, new), 20)  # stays small
    held = _bank(resources, 10)
    with resources.engine.connect() as conn:
        assert bank_index.wants_index_ahead(conn, held, 30)
        assert not bank_index.publishes_in_bulk(bank_index.bank_search(conn, held), 30)
