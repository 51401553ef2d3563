"""The reranking process's row cache answers as PostgreSQL does, and never from a stale version
(real PostgreSQL; the fake embedder)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import text

from tempr.ingest.backfill import embed_missing_chunks
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.providers.embedder.fake import FakeEmbedder
from tempr.providers.entities import NoEntities
from tempr.recall.models import RecallRequest
from tempr.recall.pipeline import recall
from tempr.store import banks_repo, recall_repo
from tempr.store.unit_cache import UnitCache

pytestmark = pytest.mark.integration
TURN = "Alice: I finally started at Helix Health last week, a hospital software company."
FACTS = [
    {
        "id": "f1",
        "text": "Alice joined Helix Health.",
        "document_id": "s1",
        "tags": ["work"],
        "occurred_start": "2024-07-01",
        "chunk": {"id": "s1:t1", "text": TURN},
    },
    {"id": "f2", "text": "Helix Health makes hospital software.", "chunk": {"id": "s1:t1", "text": TURN}},
    {"id": "f3", "text": "Alice prefers tea.", "chunk": {"id": "s1:t2", "text": "Alice: tea, always."}},
    {"id": "f4", "text": "Bob plays chess on Sundays."},  # no chunk
]
QUERY = FakeEmbedder().embed(["Where does Alice work?"])[0].tolist()


def _deps(resources: Any) -> IngestDeps:
    return IngestDeps(resources.engine, FakeEmbedder(), NoEntities(), resources.settings)


def _ids(resources: Any, bank: str) -> list[str]:
    with resources.engine.connect() as conn:
        rows = conn.execute(text("SELECT id::text FROM memory_units WHERE bank_id = :b ORDER BY fact_id"), {"b": bank})
        return [r[0] for r in rows]


def _version(resources: Any, bank: str) -> int:
    with resources.engine.connect() as conn:
        return banks_repo.bank_state(conn, bank)[0]


def _from_postgres(resources: Any, ids: list[str]) -> dict[str, dict[str, Any]]:
    with resources.engine.connect() as conn:
        return recall_repo.fetch_units(conn, ids, with_entities=True, embedding=QUERY, with_chunks=True, tokens=True)


def _assert_same(cached: dict[str, dict[str, Any]], stored: dict[str, dict[str, Any]]) -> None:
    assert cached.keys() == stored.keys()
    for i, unit in stored.items():
        mine = cached[i]
        assert mine.keys() == unit.keys()
        for key, value in unit.items():
            if key in ("cosine", "chunk_cosine", "focus_cosine", "focus_chunk_cosine") and value is not None:
                assert mine[key] == pytest.approx(value, abs=1e-6), key
            else:
                assert mine[key] == value, key


@pytest.fixture
def bank(resources: Any, bank_id: str) -> str:
    ingest_facts(bank_id, parse_array(FACTS), _deps(resources))
    embed_missing_chunks(_deps(resources), bank_id)
    return bank_id


def test_rows_and_cosines_match_postgres_and_a_second_recall_reads_nothing(resources: Any, bank: str) -> None:
    seen: list[tuple[int, int]] = []
    cache, ids = UnitCache(100, lambda hits, misses: seen.append((hits, misses))), _ids(resources, bank)
    version = _version(resources, bank)
    first = cache.units(resources.engine, bank, version, ids, QUERY)
    _assert_same(first, _from_postgres(resources, ids))
    assert cache.misses == 4 and cache.hits == 0 and len(cache) == 4 and seen == [(0, 4)]
    assert first[ids[0]]["chunk_cosine"] is not None and first[ids[3]]["chunk_cosine"] is None  # f4 has no chunk

    first[ids[0]]["tags"].append("changed by a caller")
    other_query = FakeEmbedder().embed(["Who drinks tea?"])[0].tolist()
    second = cache.units(resources.engine, bank, version, ids[::-1], other_query)
    assert cache.misses == 4 and cache.hits == 4 and seen[-1] == (4, 0)  # every row from the cache
    assert second[ids[0]]["tags"] == ["work"]
    with resources.engine.connect() as conn:
        stored = recall_repo.fetch_units(
            conn, ids, with_entities=True, embedding=other_query, with_chunks=True, tokens=True
        )
    _assert_same(second, stored)  # the cosines are the new query's


def test_the_focus_cosines_match_postgres_from_the_cache_and_on_a_first_read(resources: Any, bank: str) -> None:
    focus = FakeEmbedder().embed(["Where does someone work?"])[0].tolist()
    cache, ids = UnitCache(100), _ids(resources, bank)
    version = _version(resources, bank)
    with resources.engine.connect() as conn:
        stored = recall_repo.fetch_units(
            conn, ids, with_entities=True, embedding=QUERY, with_chunks=True, focus=focus, tokens=True
        )
    assert stored[ids[0]]["focus_cosine"] != pytest.approx(stored[ids[0]]["cosine"])  # another vector's cosines
    assert stored[ids[0]]["focus_chunk_cosine"] is not None and stored[ids[3]]["focus_chunk_cosine"] is None
    for _ in range(2):  # a first read from PostgreSQL, then every row from the cache
        _assert_same(cache.units(resources.engine, bank, version, ids, QUERY, focus), stored)
    assert cache.hits == 4
    plain = cache.units(resources.engine, bank, version, ids, QUERY)
    assert plain and all("focus_cosine" not in unit for unit in plain.values())  # no focus vector, no focus cosine


def test_a_write_to_the_bank_makes_its_rows_unreachable(resources: Any, bank: str) -> None:
    cache, ids, older = UnitCache(100), _ids(resources, bank), _version(resources, bank)
    cache.units(resources.engine, bank, older, ids, QUERY)
    ingest_facts(bank, parse_array([{"id": "f5", "text": "Alice moved to Lisbon."}]), _deps(resources))
    newer = _version(resources, bank)
    assert newer != older
    ids = _ids(resources, bank)
    rows = cache.units(resources.engine, bank, newer, ids, QUERY)
    assert cache.misses == 4 + 5  # read again under the new version
    _assert_same(rows, _from_postgres(resources, ids))


def test_chunk_vectors_landing_move_the_version_and_a_missing_one_is_remembered(resources: Any, bank_id: str) -> None:
    ingest_facts(bank_id, parse_array(FACTS), _deps(resources))  # chunks without vectors for now
    cache, ids = UnitCache(100), _ids(resources, bank_id)
    version = _version(resources, bank_id)
    before = cache.units(resources.engine, bank_id, version, ids, QUERY)
    assert {before[i]["chunk_cosine"] for i in ids} == {None}
    assert len(cache) == 4 and len(cache._chunks) == 2  # both chunks kept as "no vector"
    again = cache.units(resources.engine, bank_id, version, ids, QUERY)
    assert cache.misses == 4 and {again[i]["chunk_cosine"] for i in ids} == {None}  # nothing asked again
    embed_missing_chunks(_deps(resources), bank_id)
    newer = _version(resources, bank_id)
    assert newer != version  # recall reads chunk vectors: answers from before are not served
    after = cache.units(resources.engine, bank_id, newer, ids, QUERY)
    _assert_same(after, _from_postgres(resources, ids))
    assert after[ids[0]]["chunk_cosine"] is not None
    embed_missing_chunks(_deps(resources), bank_id)  # nothing left to embed: the version stays
    assert _version(resources, bank_id) == newer


def test_the_cache_holds_at_most_its_capacity_least_recently_used_out(resources: Any, bank: str) -> None:
    ids, version = _ids(resources, bank), _version(resources, bank)
    cache = UnitCache(2)
    cache.units(resources.engine, bank, version, ids[:2], QUERY)
    cache.units(resources.engine, bank, version, ids[:1], QUERY)  # ids[0] is now the most recent
    cache.units(resources.engine, bank, version, ids[2:3], QUERY)  # ids[1] goes
    assert len(cache) == 2
    hits = cache.hits
    cache.units(resources.engine, bank, version, [ids[0], ids[2]], QUERY)
    assert cache.hits == hits + 2
    off = UnitCache(0)
    _assert_same(off.units(resources.engine, bank, version, ids, QUERY), _from_postgres(resources, ids))
    assert len(off) == 0


def test_recall_answers_the_same_with_and_without_the_cache(resources: Any, default_ctx: Any, sample_bank: str) -> None:
    cached = replace(default_ctx, unit_cache=UnitCache(1000))
    for query in ("Where does Alice work?", "What did Alice do in July 2024?"):
        body = RecallRequest.model_validate({"query": query, "query_timestamp": "2024-09-15T12:00:00+00:00"})
        plain = recall(sample_bank, body, default_ctx)
        for _ in range(2):  # cold, then every row from the cache
            answer = recall(sample_bank, body, cached)
            assert [r.id for r in answer.results] == [r.id for r in plain.results]
            # The cache's cosines agree with PostgreSQL's to ~1e-6 (see the module's docstring), and the
            # ranker's linear member is continuous in them: a final score may move in its 6th decimal.
            finals = [r.scores.final for r in plain.results]
            assert [r.scores.final for r in answer.results] == pytest.approx(finals, abs=1e-5)
    assert cached.unit_cache.hits > 0
