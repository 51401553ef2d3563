"""Recall queries against the real PostgreSQL+pgvector: filters inside the queries, HNSW with
iterative scans, true BM25, multi-hop graph spreading, temporal selection by relevance."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, event, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.types import Text

from config.errors import ValidationError
from tempr.core.types import TimeWindow
from tempr.ingest.facts import parse_array, parse_jsonl
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.store import recall_repo as repo
from tempr.store.ingest_repo import unit_uuid
from tempr.store.recall_repo import Filters

pytestmark = pytest.mark.integration

YEAR_2023 = TimeWindow(datetime(2023, 1, 1, tzinfo=UTC), datetime(2023, 12, 31, 23, 59, 59, tzinfo=UTC))


def _bank() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


def _ingest(resources, bank: str, facts: list[tuple[int, Any]]) -> dict[str, str]:
    ingest_facts(bank, facts, IngestDeps(resources.engine, resources.embedder, resources.extractor, resources.settings))
    return {f.key: unit_uuid(bank, f.key) for _, f in facts}


def _names(ids: dict[str, str], hits: list[Any]) -> list[str]:
    back = {v: k for k, v in ids.items()}
    return [back.get(h if isinstance(h, str) else h.id, "?") for h in hits]


def _embed(resources, sentence: str) -> list[float]:
    return [float(x) for x in resources.embedder.embed([sentence])[0]]


def _drop(resources, bank: str) -> None:
    with resources.engine.begin() as conn:
        conn.execute(text("DELETE FROM banks WHERE id = :b"), {"b": bank})


@pytest.fixture(scope="module")
def sample(resources, sample_facts: Path) -> Iterator[tuple[str, dict[str, str]]]:
    bank = _bank()
    ids = _ingest(resources, bank, list(parse_jsonl(sample_facts.read_text().splitlines())))
    yield bank, ids
    _drop(resources, bank)


# --- tags and types -------------------------------------------------------------------------

TAGGED = [  # key, fact type, tags
    ("u", "world", []),
    ("a", "experience", ["a"]),
    ("b", "observation", ["b"]),
    ("ab", "world", ["a", "b"]),
    ("abc", "experience", ["a", "b", "c"]),
]


@pytest.fixture(scope="module")
def tagged(resources) -> Iterator[tuple[str, dict[str, str]]]:
    bank = _bank()
    facts = [
        {
            "id": k,
            "text": f"Quarterly planning note {k} about the garden shed.",
            "fact_type": t,
            "tags": tags,
            "entities": ["garden shed"],
            "occurred_start": "2023-06-01",
        }
        for k, t, tags in TAGGED
    ]
    yield bank, _ingest(resources, bank, parse_array(facts))
    _drop(resources, bank)


TAG_CASES = [
    ("any", [], {"u", "a", "b", "ab", "abc"}),
    ("all", [], {"u", "a", "b", "ab", "abc"}),
    ("any_strict", [], {"u", "a", "b", "ab", "abc"}),
    ("all_strict", [], {"u", "a", "b", "ab", "abc"}),
    ("exact", [], {"u"}),
    ("any", ["a"], {"u", "a", "ab", "abc"}),
    ("any", ["a", "b"], {"u", "a", "b", "ab", "abc"}),
    ("all", ["a", "b"], {"u", "ab", "abc"}),
    ("any_strict", ["a"], {"a", "ab", "abc"}),
    ("any_strict", ["c", "zz"], {"abc"}),
    ("all_strict", ["a", "b"], {"ab", "abc"}),
    ("exact", ["b", "a"], {"ab"}),
    ("exact", ["a"], {"a"}),
]


@pytest.mark.parametrize(("mode", "tags", "expected"), TAG_CASES)
def test_tag_modes_apply_inside_every_query(resources, tagged, mode, tags, expected) -> None:
    bank, ids = tagged
    f = Filters(bank, tags=tuple(tags), tags_match=mode)
    vec = _embed(resources, "garden shed planning")
    with resources.engine.connect() as conn:
        seen = {
            "semantic": repo.semantic_search(conn, vec, f, 50),
            "keyword": repo.keyword_search(conn, "garden shed", f, 50),
            "temporal": [i for i, _, _ in repo.temporal_candidates(conn, vec, YEAR_2023, f, 50)],
        }
    for strategy, hits in seen.items():
        assert set(_names(ids, hits)) == expected, strategy


def test_tag_filter_on_graph_and_unknown_mode(resources, tagged) -> None:
    bank, ids = tagged
    with resources.engine.connect() as conn:
        hits, _ = repo.graph_search(
            conn, [ids["a"]], Filters(bank, tags=("a",), tags_match="all_strict"), depth=1, budget=10, decay=0.5
        )
        hidden_seed, _ = repo.graph_search(
            conn, [ids["u"]], Filters(bank, tags=("a",), tags_match="all_strict"), depth=1, budget=10, decay=0.5
        )
    assert set(_names(ids, hits)) == {"ab", "abc"}
    assert hidden_seed == []  # a seed the caller may not see leads nowhere
    with pytest.raises(ValidationError):
        Filters(bank, tags=("a",), tags_match="some")
    assert repo.tag_clause(Filters(bank)) == ("", {})
    assert repo.tag_clause(Filters(bank, tags_match="exact"))[0] == "m.tags = '{}'"


@pytest.mark.parametrize(
    ("types", "expected"), [(("experience",), {"a", "abc"}), (("world", "observation"), {"u", "b", "ab"})]
)
def test_type_filter(resources, tagged, types, expected) -> None:
    bank, ids = tagged
    f = Filters(bank, types=types)
    vec = _embed(resources, "garden shed")
    with resources.engine.connect() as conn:
        assert set(_names(ids, repo.semantic_search(conn, vec, f, 50))) == expected
        assert set(_names(ids, repo.keyword_search(conn, "shed", f, 50))) == expected
        assert set(_names(ids, [i for i, _, _ in repo.temporal_candidates(conn, vec, YEAR_2023, f, 50)])) == expected
        graph, _ = repo.graph_search(conn, [ids["u"]], f, depth=1, budget=10, decay=1.0)
    assert set(_names(ids, graph)) == expected - {"u"}


def test_empty_and_unknown_banks_return_nothing(resources) -> None:
    empty, missing = _bank(), _bank()
    with resources.engine.begin() as conn:
        conn.execute(text("INSERT INTO banks (id) VALUES (:b)"), {"b": empty})
    vec = _embed(resources, "anything at all")
    try:
        with resources.engine.connect() as conn:
            for bank in (empty, missing):
                f = Filters(bank, tags=("x",))
                assert repo.semantic_search(conn, vec, f, 10) == []
                assert repo.keyword_search(conn, "anything at all", f, 10) == []
                assert repo.keyword_search(conn, "the and of", Filters(bank), 10) == []  # stop words only
                ghost = repo.graph_search(conn, [str(uuid.uuid4()), "not-a-uuid"], f, depth=3, budget=50, decay=0.5)
                assert ghost == ([], {"hops": [{"hop": 1, "frontier": 1, "reached": 0, "new": 0}], "explored": 0})
                assert repo.graph_search(conn, [], f, depth=3, budget=50, decay=0.5) == (
                    [],
                    {"hops": [], "explored": 0},
                )
                assert repo.temporal_candidates(conn, vec, YEAR_2023, f, 10) == []
                assert repo.find_event_date(conn, vec, f) is None
                assert repo.fetch_units(conn, [str(uuid.uuid4()), "junk"]) == {}
                assert repo.fetch_chunks(conn, bank, ["c1"]) == {}
                assert repo.entity_unit_ids(conn, bank, ["Alice"]) == []
            assert isinstance(repo.bank_version(conn, empty), int)
            assert repo.bank_version(conn, missing) is None
    finally:
        _drop(resources, empty)


# --- semantic: HNSW, iterative scan, a small bank in a big table ----------------------------

# In the shared HNSW index (``ann_indexed``) like a big bank's memories written before migration 0014
# (the bank flagged ``shared_index``): the tests below take its path.
_INSERT_RANDOM = text("""
    INSERT INTO memory_units (id, bank_id, fact_id, text, fact_type, embedding, tags, search_vector, doc_len,
                              ann_indexed)
    VALUES (:id, :b, :fid, :text, 'world', :emb, :tags, to_tsvector('english', :text), 3, true)
""").bindparams(bindparam("emb", type_=Vector(384)), bindparam("tags", type_=ARRAY(Text)))


def _random_units(conn, bank: str, vectors: np.ndarray, rare_every: int = 0) -> list[str]:
    conn.execute(text("INSERT INTO banks (id, shared_index) VALUES (:b, true)"), {"b": bank})
    rows = [
        {
            "id": str(uuid.uuid4()),
            "b": bank,
            "fid": f"r{i}",
            "text": f"filler memory {i}",
            "emb": v,
            "tags": ["rare"] if rare_every and i % rare_every == 0 else [],
        }
        for i, v in enumerate(vectors)
    ]
    conn.execute(_INSERT_RANDOM, rows)
    return [r["id"] for r in rows]


def _unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def big_table(resources) -> Iterator[dict[str, Any]]:
    """3,000 filler rows in one bank, and a 200-row bank (10 tagged 'rare') beside it."""
    rng = np.random.default_rng(7)
    filler, small = _bank(), _bank()
    small_vecs = _unit_vectors(rng, 200)
    with resources.engine.begin() as conn:
        _random_units(conn, filler, _unit_vectors(rng, 3000))
        small_ids = _random_units(conn, small, small_vecs, rare_every=20)
        conn.execute(text("ANALYZE memory_units"))
    yield {"filler": filler, "small": small, "ids": small_ids, "vecs": small_vecs, "query": _unit_vectors(rng, 1)[0]}
    _drop(resources, filler)
    _drop(resources, small)


class _Recorder:
    """A connection proxy that remembers the last statement that read memory_units."""

    def __init__(self, conn) -> None:
        self.conn, self.last = conn, None

    def execute(self, stmt, params=None):
        if "FROM memory_units" in str(stmt):
            self.last = (stmt, params)
        return self.conn.execute(stmt, params)


def _explain(conn, recorded) -> str:
    stmt, params = recorded  # the embedding travels as float8[]; the statement casts it to vector
    return "\n".join(r[0] for r in conn.execute(text("EXPLAIN (COSTS OFF) " + stmt.text), params))


def test_semantic_filtered_small_bank_is_exact_with_the_planners_choice(resources, big_table) -> None:
    small, ids, vecs, query = (big_table[k] for k in ("small", "ids", "vecs", "query"))
    rare = [i for i in range(len(ids)) if i % 20 == 0]
    exact = sorted(rare, key=lambda i: -float(vecs[i] @ query))[:8]
    with resources.engine.connect() as conn:
        hits = repo.semantic_search(conn, query.tolist(), Filters(small, tags=("rare",), tags_match="any_strict"), 8)
    assert [h.id for h in hits] == [ids[i] for i in exact]
    assert [round(h.score, 4) for h in hits] == [round(float(vecs[i] @ query), 4) for i in exact]


@pytest.fixture
def hnsw_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """These banks are small: searched exactly by default. Make every bank take the HNSW path."""
    monkeypatch.setattr(repo, "EXACT_SEARCH_MAX_UNITS", -1)  # these fixture banks record no unit_count


def test_a_small_bank_is_searched_exactly_beside_a_big_one(resources, big_table) -> None:
    small, ids, vecs, query = (big_table[k] for k in ("small", "ids", "vecs", "query"))
    with resources.engine.connect() as conn:
        spy = _Recorder(conn)
        hits = repo.semantic_search(spy, query.tolist(), Filters(small), 20)
        plan = _explain(conn, spy.last)
    assert "memory_units_embedding_hnsw" not in plan
    exact = sorted(range(len(ids)), key=lambda i: (-float(vecs[i] @ query), ids[i]))[:20]
    assert [h.id for h in hits] == [ids[i] for i in exact]


@pytest.mark.usefixtures("hnsw_always")
def test_semantic_hnsw_iterative_scan_fills_the_limit_under_a_selective_filter(resources, big_table) -> None:
    small, ids, query = (big_table[k] for k in ("small", "ids", "query"))
    f, limit = Filters(small, tags=("rare",), tags_match="any_strict"), 8  # 10 of 3,200 rows qualify
    with resources.engine.connect() as conn:
        # Take the btree/GIN + sort plans away so the planner must walk the HNSW index.
        for knob in ("enable_sort", "enable_bitmapscan", "enable_seqscan"):
            conn.execute(text(f"SET LOCAL {knob} = off"))
        spy = _Recorder(conn)
        hits = repo.semantic_search(spy, query.tolist(), f, limit)
        plan = _explain(conn, spy.last)
        assert "memory_units_embedding_hnsw" in plan
        assert len(hits) == limit and set(h.id for h in hits) <= {ids[i] for i in range(0, 200, 20)}
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        # Control: the same statement without the iterative scan starves (ef_search rows, then the filter).
        conn.execute(text("SET LOCAL hnsw.iterative_scan = off"))
        starved = conn.execute(*spy.last).all()
    assert len(starved) < limit


@pytest.mark.usefixtures("hnsw_always")
def test_semantic_uses_hnsw_on_a_big_bank(resources, big_table) -> None:
    with resources.engine.connect() as conn:
        spy = _Recorder(conn)
        hits = repo.semantic_search(spy, big_table["query"].tolist(), Filters(big_table["filler"]), 50)
        plan = _explain(conn, spy.last)
        ef = conn.execute(text("SHOW hnsw.ef_search")).scalar_one()
    assert "memory_units_embedding_hnsw" in plan and "Sort Key: s.dist" in plan
    assert len(hits) == 50 and ef == "50"


# --- keyword: true BM25 ---------------------------------------------------------------------

BM25_FACTS = [
    ("rare", "zebra seen near river"),
    ("common", "apple seen near river"),
    ("c1", "apple pie recipe"),
    ("c2", "apple juice stand"),
    ("c3", "green apple tree"),
    ("c4", "apple market prices"),
    ("short", "kiwi harvest"),
    ("long", "kiwi harvest festival parade music food crowd lanterns"),
    ("url", "Docs live at http://example.com/a'b?x=1 for now."),
    ("twice", "mango mango tart"),
    ("once", "mango pear tart"),
]


@pytest.fixture(scope="module")
def bm25(resources) -> Iterator[tuple[str, dict[str, str]]]:
    bank = _bank()
    yield bank, _ingest(resources, bank, parse_array([{"id": k, "text": t, "entities": []} for k, t in BM25_FACTS]))
    _drop(resources, bank)


def _bm25(conn, bank: str, unit: str, terms: list[str], tf: int = 1, k1: float = 1.2, b: float = 0.75) -> float:
    n, total = conn.execute(text("SELECT unit_count, total_len FROM banks WHERE id = :b"), {"b": bank}).one()
    doc_len = conn.execute(text("SELECT doc_len FROM memory_units WHERE id = :u"), {"u": unit}).scalar_one()
    score = 0.0
    for term in terms:
        df = conn.execute(
            text("SELECT df FROM bm25_terms WHERE bank_id = :b AND term = :t"), {"b": bank, "t": term}
        ).scalar_one()
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / (total / n)))
    return score


def test_bm25_rare_terms_outscore_common_ones(resources, bm25) -> None:
    bank, ids = bm25
    with resources.engine.connect() as conn:
        hits = repo.keyword_search(conn, "apple zebra", Filters(bank), 10)
        names = _names(ids, hits)
        assert names[0] == "rare" and names.index("rare") < names.index("common")
        assert set(names) == {"rare", "common", "c1", "c2", "c3", "c4"}
        scores = dict(zip(names, (h.score for h in hits), strict=True))
        assert scores["rare"] == pytest.approx(_bm25(conn, bank, ids["rare"], ["zebra"]))
        assert scores["common"] == pytest.approx(_bm25(conn, bank, ids["common"], ["appl"]))


def test_bm25_normalises_length(resources, bm25) -> None:
    bank, ids = bm25
    with resources.engine.connect() as conn:
        hits = repo.keyword_search(conn, "kiwi", Filters(bank), 10)
        flat = repo.keyword_search(conn, "kiwi", Filters(bank), 10, b=0.0)
        assert _names(ids, hits) == ["short", "long"] and hits[0].score > hits[1].score
        assert hits[1].score == pytest.approx(_bm25(conn, bank, ids["long"], ["kiwi"]))
    assert flat[0].score == pytest.approx(flat[1].score)


def test_bm25_term_frequency_saturates(resources, bm25) -> None:
    bank, ids = bm25
    with resources.engine.connect() as conn:
        hits = repo.keyword_search(conn, "mango", Filters(bank), 10)
        assert _names(ids, hits) == ["twice", "once"]
        assert hits[0].score == pytest.approx(_bm25(conn, bank, ids["twice"], ["mango"], tf=2))
    assert hits[0].score < 2 * hits[1].score


def test_bm25_query_text_is_never_tsquery_syntax(resources, bm25) -> None:
    bank, ids = bm25
    with resources.engine.connect() as conn:
        odd = repo.keyword_search(conn, "zebra & !apple | (:* <-> 'x\\", Filters(bank), 10)
        url = repo.keyword_search(conn, "http://example.com/a'b?x=1", Filters(bank), 10)
    assert _names(ids, odd)[0] == "rare"
    assert _names(ids, url) == ["url"]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("Alice works at Google", None),
        ("https://alicechen.dev", "a55"),
        ("alice-chen-ml", "a55"),
        ("port 9464", "a57"),
        ("9464", "a57"),
        ("pgvector", "a56"),
        ("Tidepool", "a08"),
    ],
)
def test_bm25_matches_names_urls_and_identifiers_exactly(resources, sample, query, first) -> None:
    bank, ids = sample
    with resources.engine.connect() as conn:
        hits = repo.keyword_search(conn, query, Filters(bank), 5)
        texts = [repo.fetch_units(conn, [h.id], with_entities=False)[h.id]["text"] for h in hits]
    if first is None:  # every top hit mentions Google, the best mentions Alice, work and Google
        assert all("Google" in t for t in texts[:3]) and _names(ids, hits)[0] == "a26"
    else:
        assert _names(ids, hits)[0] == first
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


# --- graph ----------------------------------------------------------------------------------


def _scores(ids: dict[str, str], hits: list[Any]) -> dict[str, float]:
    return dict(zip(_names(ids, hits), (h.score for h in hits), strict=True))


def test_graph_reaches_the_managers_teams_projects_only_with_more_hops(resources, sample) -> None:
    bank, ids = sample
    with resources.engine.connect() as conn:
        shared = conn.execute(
            text("""
            SELECT count(*) FROM unit_entities a JOIN unit_entities b ON a.entity_id = b.entity_id
            WHERE a.unit_id = :seed AND b.unit_id = ANY(CAST(:p AS uuid[]))"""),
            {"seed": ids["a05"], "p": [ids["a07"], ids["a08"]]},
        ).scalar_one()
        linked = conn.execute(
            text("""
            SELECT count(*) FROM memory_links WHERE link_type <> 'temporal'
              AND ((from_unit_id = :seed AND to_unit_id = ANY(CAST(:p AS uuid[])))
                OR (to_unit_id = :seed AND from_unit_id = ANY(CAST(:p AS uuid[]))))"""),
            {"seed": ids["a05"], "p": [ids["a07"], ids["a08"]]},
        ).scalar_one()
        assert shared == 0 and linked == 0  # the projects are not one hop from "Alice's manager"
        runs = {
            d: repo.graph_search(conn, [ids["a05"]], Filters(bank), depth=d, budget=100, decay=0.5) for d in (1, 2, 3)
        }
        flat, _ = repo.graph_search(conn, [ids["a05"]], Filters(bank), depth=2, budget=100, decay=1.0)
    one, two, three = (_scores(ids, runs[d][0]) for d in (1, 2, 3))
    assert "a07" not in one and "a08" not in one and "a05" not in one
    assert one["a06"] == pytest.approx(math.tanh(1.0))  # Carol Nguyen + Google
    assert {"a07", "a08"} <= set(three) and "a05" not in three
    assert three["a07"] < three["a06"]
    assert two["a07"] == pytest.approx(_scores(ids, flat)["a07"] * 0.5)  # first reached at hop 2: decayed once
    hits, detail = runs[3]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert [hop["hop"] for hop in detail["hops"]] == [1, 2, 3][: len(detail["hops"])] and len(detail["hops"]) >= 2
    assert detail["explored"] == len(hits) <= 100


def test_graph_budget_and_hub_cap(resources, sample) -> None:
    bank, ids = sample
    with resources.engine.connect() as conn:
        hits, detail = repo.graph_search(conn, [ids["a05"]], Filters(bank), depth=3, budget=5, decay=0.5)
        _, capped = repo.graph_search(
            conn, [ids["a05"]], Filters(bank), depth=1, budget=100, decay=0.5, per_entity_limit=1
        )
        _, uncapped = repo.graph_search(conn, [ids["a05"]], Filters(bank), depth=1, budget=100, decay=0.5)
    assert detail["explored"] == 5 and len(hits) == 5
    assert [hop["new"] for hop in detail["hops"]] == [2, 2, 1]  # each hop gets a share, deeper hops still run
    assert capped["hops"][0]["reached"] <= 3 < uncapped["hops"][0]["reached"]  # a05 has 3 entities, no links


def test_graph_beam_spreads_from_the_best_of_the_hop_before(resources, sample) -> None:
    bank, ids = sample
    with resources.engine.connect() as conn:
        one, _ = repo.graph_search(conn, [ids["a05"]], Filters(bank), depth=1, budget=100, decay=0.5)
        full, full_detail = repo.graph_search(conn, [ids["a05"]], Filters(bank), depth=2, budget=100, decay=0.5)
        beamed, detail = repo.graph_search(conn, [ids["a05"]], Filters(bank), depth=2, budget=100, decay=0.5, beam=1)
        best = min(one, key=lambda h: (-h.score, h.id)).id
        from_best, _ = repo.graph_search(conn, [best], Filters(bank), depth=1, budget=100, decay=0.5)
    assert full_detail["hops"][1]["frontier"] == len(one) > 1 and detail["hops"][1]["frontier"] == 1
    first_hop = {h.id for h in one}
    assert {h.id for h in beamed} <= {h.id for h in full}  # hop 1 is the same walk; hop 2 a part of it
    assert first_hop <= {h.id for h in beamed}
    # What hop 2 first reached, it reached from the best memory of hop 1 alone (decayed once);
    # whether that memory has neighbours hop 1 missed depends on the sample's (random) ids.
    second = {h.id: h.score for h in beamed if h.id not in first_hop}
    assert set(second) <= {h.id for h in from_best}
    assert all(second[u] == pytest.approx(h.score * 0.5) for h in from_best if (u := h.id) in second)


def test_graph_hops_find_a_new_banks_memories_by_id(resources, sample_facts: Path) -> None:
    """A bank written after the table was last analysed is estimated at one row; a hop must still
    look its frontier and link targets up by id, not scan the bank once per frontier memory."""
    with resources.engine.begin() as conn:
        conn.execute(text("ANALYZE memory_units"))
    bank = _bank()
    facts = list(parse_jsonl(sample_facts.read_text().splitlines()))
    ids = _ingest(resources, bank, facts)  # after the ANALYZE: the statistics do not know this bank
    statements: list[tuple[str, Any]] = []

    def hook(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        if "frontier" in statement:
            statements.append((statement, parameters))

    event.listen(resources.engine, "before_cursor_execute", hook)
    try:
        with resources.engine.connect() as conn:
            hits, detail = repo.graph_search(
                conn, [ids["a05"], ids["a27"]], Filters(bank), depth=2, budget=100, decay=0.5
            )
    finally:
        event.remove(resources.engine, "before_cursor_execute", hook)
    try:
        assert hits and len(statements) == len(detail["hops"]) == 2
        with resources.engine.connect() as conn:
            for sql, params in statements:
                plan = "\n".join(r[0] for r in conn.exec_driver_sql("EXPLAIN " + sql, params))
                assert "memory_units_bank" not in plan, plan  # no bank index: memories found by id
    finally:
        _drop(resources, bank)


CHAIN = [  # a <- b <- c by caused_by; b is hidden by tags and is the only path from a to c
    {"id": "a", "text": "The datacenter cooling failed during the heatwave.", "tags": ["public"], "entities": []},
    {
        "id": "b",
        "text": "Nightly backups crashed on the storage cluster.",
        "fact_type": "observation",
        "tags": ["secret"],
        "entities": [],
        "caused_by": ["a"],
    },
    {
        "id": "c",
        "text": "Quarterly invoices went out a week late.",
        "tags": ["public"],
        "entities": [],
        "caused_by": ["b"],
    },
    {"id": "z", "text": "The office plants were repotted.", "tags": ["public"], "entities": []},
]


def test_graph_follows_causal_links_both_ways_and_walks_only_visible_memories(resources) -> None:
    bank = _bank()
    ids = _ingest(resources, bank, parse_array(CHAIN))
    try:
        with resources.engine.connect() as conn:
            other = conn.execute(
                text("""
                SELECT count(*) FROM memory_links l JOIN memory_units m ON m.id = l.from_unit_id
                WHERE m.bank_id = :b AND l.link_type = 'semantic'"""),
                {"b": bank},
            ).scalar_one()
            assert other == 0  # causal links are the only edges

            def run(seed: str, f: Filters, depth: int = 1) -> dict[str, float]:
                return _scores(ids, repo.graph_search(conn, [ids[seed]], f, depth=depth, budget=10, decay=0.5)[0])

            everything = Filters(bank)
            assert run("a", everything) == {"b": 1.0}  # cause -> effect, against the stored effect -> cause
            assert run("b", everything) == {"a": 1.0, "c": 1.0}
            assert run("a", everything, depth=2) == {"b": 1.0, "c": 0.5}
            # A type filter hides b from the results but the walk still passes through it.
            assert run("a", Filters(bank, types=("world",)), depth=2) == {"c": 0.5}
            # A tag filter hides b entirely: nothing may be reached through it.
            assert run("a", Filters(bank, tags=("public",), tags_match="any_strict"), depth=2) == {}
    finally:
        _drop(resources, bank)


# --- temporal -------------------------------------------------------------------------------

DATED = [
    {"id": "point", "text": "Planted tomatoes in the backyard.", "occurred_start": "2023-05-10"},
    {
        "id": "span",
        "text": "Renovated the kitchen with new cabinets.",
        "occurred_start": "2022-12-01",
        "occurred_end": "2023-02-15",
    },
    {"id": "before", "text": "Renovated the bathroom with new tiles.", "occurred_start": "2022-11-01"},
    {"id": "mention", "text": "Mentioned wanting a new kitchen table.", "mentioned_at": "2023-03-03"},
    {
        "id": "occurred-in",
        "text": "Bought kitchen knives.",
        "occurred_start": "2023-04-01",
        "mentioned_at": "2024-01-01",
    },
    {
        "id": "occurred-out",
        "text": "Painted the kitchen walls.",
        "occurred_start": "2021-01-01",
        "mentioned_at": "2023-06-01",
    },
    {"id": "end-only", "text": "Finished the garden fence.", "occurred_end": "2023-07-07"},
    {"id": "late", "text": "Hosted a dinner party in the dining room.", "occurred_start": "2023-12-20"},
]


def test_temporal_overlap_and_relevance_order(resources) -> None:
    bank = _bank()
    ids = _ingest(resources, bank, parse_array([{**f, "entities": []} for f in DATED]))
    vec = _embed(resources, "kitchen renovation with new cabinets")
    try:
        with resources.engine.connect() as conn:
            rows = repo.temporal_candidates(conn, vec, YEAR_2023, Filters(bank), 50)
            top2 = repo.temporal_candidates(conn, vec, YEAR_2023, Filters(bank), 2)
    finally:
        _drop(resources, bank)
    names = _names(ids, [r[0] for r in rows])
    assert set(names) == {"point", "span", "mention", "occurred-in", "end-only", "late"}
    assert names[0] == "span"  # the oldest in-window memory, but the most relevant one
    assert [r[2] for r in rows] == sorted((r[2] for r in rows), reverse=True)
    assert [r[1] for r in rows] != sorted((r[1] for r in rows), reverse=True)
    assert [r[0] for r in top2] == [r[0] for r in rows[:2]]
    dates = dict(zip(names, (r[1] for r in rows), strict=True))
    assert dates["span"] == datetime(2023, 1, 23, 12, tzinfo=UTC)  # mid-overlap, Jan 1 .. Feb 15
    assert dates["point"] == datetime(2023, 5, 10, tzinfo=UTC)
    assert dates["mention"] == datetime(2023, 3, 3, tzinfo=UTC)
    assert dates["end-only"] == datetime(2023, 7, 7, tzinfo=UTC)
    assert all(d.tzinfo is not None for d in dates.values())


def test_find_event_date(resources, sample) -> None:
    bank, ids = sample
    joined = _embed(resources, "Alice joined Google")
    a52 = _embed(resources, "Alice thinks evaluation tooling is more important than model architecture.")
    with resources.engine.connect() as conn:
        found = repo.find_event_date(conn, joined, Filters(bank))
        strict = repo.find_event_date(conn, joined, Filters(bank), min_similarity=0.99)
        undated = repo.find_event_date(conn, a52, Filters(bank))
        hidden = repo.find_event_date(conn, joined, Filters(bank, tags=("personal",), tags_match="any_strict"))
    assert found == (ids["a04"], datetime(2022, 9, 12, tzinfo=UTC))
    assert strict is None
    assert undated is None or undated[0] != ids["a52"]  # a52 is the same text, but has no date
    assert hidden is None or hidden[0] != ids["a04"]


# --- units, chunks, entities, versions ------------------------------------------------------


def test_fetch_units_chunks_entities_and_version(resources, sample) -> None:
    bank, ids = sample
    with resources.engine.connect() as conn:
        units = repo.fetch_units(conn, [ids["a01"], ids["a07"], "junk"])
        bare = repo.fetch_units(conn, [ids["a01"]], with_entities=False)
        chunks = repo.fetch_chunks(conn, bank, [units[ids["a01"]]["chunk_id"], "missing"])
        carol = repo.entity_unit_ids(conn, bank, ["carol NGUYEN", "  "])
        version = repo.bank_version(conn, bank)
    a01, a07 = units[ids["a01"]], units[ids["a07"]]
    assert set(units) == {ids["a01"], ids["a07"]}
    assert a01["fact_id"] == "a01" and a01["type"] == "world" and a01["tags"] == ["career"]
    assert a01["occurred_start"] == datetime(2022, 6, 3, tzinfo=UTC) and a01["occurred_start"].tzinfo is not None
    assert a01["event_date"] == a01["occurred_start"] and a01["proof_count"] == 1 and a01["metadata"] == {}
    assert "MIT" in a01["entities"] and a01["document_id"] == "chat-2022"
    assert a07["occurred_end"] == datetime(2023, 11, 30, tzinfo=UTC) and a07["chunk_id"] is None
    assert "entities" not in bare[ids["a01"]]
    assert chunks == {
        "chat-2022-06-03": {
            "id": "chat-2022-06-03",
            "document_id": "chat-2022",
            "text": chunks["chat-2022-06-03"]["text"],
        }
    }
    assert chunks["chat-2022-06-03"]["text"].startswith("Alice: I finally defended")
    assert set(_names(ids, carol)) == {"a05", "a06", "a46"}
    assert isinstance(version, int)


def test_fetch_units_reads_cosine_and_chunk_text_in_the_same_statement(resources, sample, monkeypatch) -> None:
    """What the learned ranker needs in one round trip; the plain fields as without the options."""
    from tempr.ingest.backfill import embed_missing_chunks
    from tempr.store import binary_rows

    bank, ids = sample
    embed_missing_chunks(resources.ingest_deps(), bank)  # the chunks' own vectors, as after any ingest
    vec = _embed(resources, "Alice finished her doctorate")
    wanted = [ids[k] for k in ("a01", "a02", "a03", "a18", "a07")]
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        statements.append(statement)

    def binary(conn, sql, params):  # the statements read in binary format skip SQLAlchemy's events
        statements.append(sql)
        return binary_rows.binary_rows(conn, sql, params)

    with resources.engine.connect() as conn:
        event.listen(resources.engine, "before_cursor_execute", count)
        monkeypatch.setattr(repo, "binary_rows", binary)
        try:
            full = repo.fetch_units(conn, [*wanted, "junk"], embedding=vec, with_chunks=True)
        finally:
            event.remove(resources.engine, "before_cursor_execute", count)
            monkeypatch.undo()
        plain = repo.fetch_units(conn, wanted)
        chunks = repo.fetch_chunks(conn, bank, ["chat-2022-06-03", "chat-2023-05-02"])
        exact = {h.id: h.score for h in repo.semantic_search(conn, vec, Filters(bank), 100)}
    assert len(statements) == 1 and set(full) == set(wanted)
    for i in wanted:
        assert {k: v for k, v in full[i].items() if k not in ("cosine", "chunk_text", "chunk_cosine")} == plain[i]
        assert full[i]["cosine"] == pytest.approx(exact[i], abs=1e-6)
    shared = chunks["chat-2022-06-03"]["text"]
    with resources.engine.connect() as conn:  # the stored vector: a quantised embedder's depends on its batch
        stored = conn.execute(
            text("SELECT embedding FROM chunks WHERE bank_id = :b AND id = 'chat-2022-06-03'"), {"b": bank}
        ).scalar_one()
    chunk_vec = np.asarray(stored.to_list() if hasattr(stored, "to_list") else stored, dtype=np.float64)
    assert float(np.dot(chunk_vec, _embed(resources, shared))) >= 0.98  # and it is that chunk's text
    expected = float(sum(a * b for a, b in zip(vec, chunk_vec, strict=True)))
    assert full[ids["a01"]]["chunk_cosine"] == full[ids["a02"]]["chunk_cosine"] == pytest.approx(expected, abs=1e-5)
    assert full[ids["a07"]]["chunk_cosine"] is None  # no chunk
    assert full[ids["a01"]]["chunk_text"] == full[ids["a02"]]["chunk_text"] == full[ids["a03"]]["chunk_text"] == shared
    assert full[ids["a18"]]["chunk_text"] == chunks["chat-2023-05-02"]["text"]
    assert full[ids["a07"]]["chunk_text"] is None


def test_binary_rows_read_what_the_text_format_reads(resources, sample) -> None:
    """Every column type the rank stage reads (text, timestamps, jsonb, arrays, bytes, a cosine to a
    vector parameter), the same values and the same printed dates in both formats."""
    from tempr.store.binary_rows import binary_rows, float32_vector

    _, ids = sample
    vec = _embed(resources, "Where does Alice work?")
    sql = """SELECT m.id::text, m.text, m.occurred_start, m.mentioned_at, m.tags, m.metadata, m.proof_count,
                    vector_send(m.embedding), m.tokens, 1 - (m.embedding <=> CAST(:q AS vector)), '100%' AS pct
             FROM memory_units m WHERE m.id = ANY(CAST(:ids AS uuid[])) ORDER BY m.id"""
    wanted = [ids[k] for k in ("a01", "a07", "a18", "a54")]
    with resources.engine.connect() as conn:
        rows = binary_rows(conn, sql, {"ids": wanted, "q": float32_vector(vec)})
        expected = conn.execute(
            text(sql).bindparams(bindparam("q", type_=Vector(len(vec)))), {"ids": wanted, "q": vec}
        ).all()
    assert len(rows) == len(expected) == 4
    for got, want in zip(rows, expected, strict=True):
        assert got[:9] == tuple(want[:9]) and got[10] == "100%"
        assert [d.isoformat() for d in got[2:4] if d] == [d.isoformat() for d in want[2:4] if d]
        assert got[9] == pytest.approx(want[9], abs=1e-6)
