"""Top-k BM25 with term bounds returns exactly what scoring every posting returns (real PostgreSQL).

``keyword_repo.bm25_top`` skips memories that hold only common query words when the bounds
in ``bm25_terms`` prove they cannot reach the top k. Here a bank of synthetic facts (common
words such as a year or "moved" beside rarer names) is queried both ways: pruned (the
threshold lowered so a small bank prunes) and by the single full statement tempr ran before
the bounds existed, kept below as the oracle (it reads the memories' tsvectors; tempr now reads
``bm25_postings``, so the oracle also checks the postings). The bounds and the postings
themselves are checked against the memories, both as ingest writes them and as migrations 0006
and 0009 backfill them.
"""

from __future__ import annotations

import importlib
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from sqlalchemy import text

from bench import synthetic
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.providers.embedder.fake import FakeEmbedder
from tempr.store.keyword_repo import bm25_top
from tempr.store.recall_filters import Filters, where_clause

pytestmark = pytest.mark.integration

N = 1500

# The keyword strategy's statement before term bounds: every posting of every query term scored
# (its score rounded as now, so that ties order by id whatever order a plan sums in).
_ORACLE = r"""
WITH bank AS (
    SELECT b.unit_count::float8 AS n, GREATEST(b.total_len::float8 / b.unit_count, 1.0) AS avgdl,
           b.text_config
    FROM banks b WHERE b.id = :filter_bank AND b.unit_count > 0
),
query_terms AS (SELECT DISTINCT u.lexeme FROM bank, unnest(to_tsvector(bank.text_config, :query)) AS u),
terms AS (
    SELECT t.term, ln(1.0 + (bank.n - t.df + 0.5) / (t.df + 0.5)) AS idf
    FROM bank, query_terms q JOIN bm25_terms t ON t.bank_id = :filter_bank AND t.term = q.lexeme
    WHERE t.df > 0
)
SELECT m.id::text,
       round(CAST(sum(t.idf * tf.n * (:k1 + 1) / (tf.n + :k1 * (1 - :b + :b * m.doc_len / bank.avgdl)))
                  AS numeric), 10)::float8 AS score
FROM memory_units m
CROSS JOIN bank
CROSS JOIN LATERAL unnest(m.search_vector) AS u
JOIN terms t ON t.term = u.lexeme
CROSS JOIN LATERAL (SELECT GREATEST(cardinality(u.positions), 1)::float8 AS n) tf
WHERE {where}
  AND m.search_vector @@ (
      SELECT string_agg('''' || replace(replace(term, '\', '\\'), '''', '''''') || '''', ' | ')::tsquery
      FROM terms)
GROUP BY m.id
ORDER BY score DESC, m.id
LIMIT :limit
"""

_BOUNDS = """
SELECT u.lexeme, max(GREATEST(cardinality(u.positions), 1)), min(m.doc_len)
FROM memory_units m, unnest(m.search_vector) AS u WHERE m.bank_id = :b GROUP BY u.lexeme
"""


@pytest.fixture(scope="module")
def bank(resources) -> Iterator[str]:
    bank_id = f"t-bm25-{uuid.uuid4().hex[:10]}"
    facts = list(parse_array(list(synthetic.facts(N))))
    settings = resources.settings.model_copy(update={"semantic_link_top_k": 0})
    # Two batches, so the bounds are merged on conflict as well as inserted.
    for part in (facts[: N // 2], facts[N // 2 :]):
        ingest_facts(bank_id, part, IngestDeps(resources.engine, FakeEmbedder(), resources.extractor, settings))
    yield bank_id
    with resources.engine.begin() as conn:
        conn.execute(text("DELETE FROM banks WHERE id = :b"), {"b": bank_id})


def _oracle(conn, query: str, filters: Filters, limit: int) -> list[tuple[str, float]]:
    where, params = where_clause(filters)
    rows = conn.execute(
        text(_ORACLE.format(where=where)), {**params, "query": query, "limit": limit, "k1": 1.2, "b": 0.75}
    )
    return [(r[0], float(r[1])) for r in rows]


def _same(got, want) -> None:
    assert got == want


EXTRA = [
    "Who moved to Lisbon in 2015?",
    "moved in 2012 2013 2014",
    "What happened in June 2015?",
    "May 2012 March",
    "How many hours and minutes did the marathon take?",  # words that always come together
    "Who signed a contract worth euros?",
]


@pytest.mark.parametrize(("limit", "any_of", "all_of"), [(5, 20, 2), (10, 20, 0), (50, 10, 0), (300, 0, 0)])
def test_pruned_top_k_equals_scoring_every_posting(resources, bank, limit, any_of, all_of) -> None:
    queries = synthetic.queries(40, N) + EXTRA
    scored: Counter[str] = Counter()
    with resources.engine.connect() as conn:
        for query in queries:
            for filters in (Filters(bank), Filters(bank, types=("world",))):
                hits, info = bm25_top(conn, query, filters, limit, min_postings=0)
                _same([(h.id, h.score) for h in hits], _oracle(conn, query, filters, limit))
                scored[str(info["scored"]).split(" of ")[0]] += 1
    print(f"limit {limit}: {dict(scored)}")
    # The bank must exercise both kinds of pruning, or this compares the full query with itself.
    assert scored["any"] >= any_of and scored["all"] >= all_of


def test_the_default_threshold_scores_small_banks_in_one_statement(resources, bank) -> None:
    with resources.engine.connect() as conn:
        hits, info = bm25_top(conn, "What happened in Lisbon in 2015?", Filters(bank), 300)
    assert hits and info == {"terms": 2, "scored": "all postings", "queries": 1}  # "happened" is in no fact


def test_bounds_hold_for_every_memory_as_ingest_and_the_migration_write_them(resources, bank) -> None:
    with resources.engine.begin() as conn:
        actual = {r[0]: (r[1], r[2]) for r in conn.execute(text(_BOUNDS), {"b": bank})}
        stored = {
            r[0]: (r[1], r[2])
            for r in conn.execute(text("SELECT term, max_tf, min_len FROM bm25_terms WHERE bank_id = :b"), {"b": bank})
        }
        assert stored == actual
        assert any(tf > 1 for tf, _ in stored.values())  # some term repeats in a memory
        # Migration 0006 on a database written before it: the loosest bounds, then the backfill.
        conn.execute(text("UPDATE bm25_terms SET max_tf = 256, min_len = 0 WHERE bank_id = :b"), {"b": bank})
        migration = importlib.import_module("tempr.store.migrations.versions.0006_bm25_bounds")
        conn.execute(text(migration.BACKFILL))
        backfilled = {
            r[0]: (r[1], r[2])
            for r in conn.execute(text("SELECT term, max_tf, min_len FROM bm25_terms WHERE bank_id = :b"), {"b": bank})
        }
    assert backfilled == actual


_POSTINGS = """
SELECT u.lexeme, m.id::text, GREATEST(cardinality(u.positions), 1), m.doc_len
FROM memory_units m, unnest(m.search_vector) AS u WHERE m.bank_id = :b
"""


def test_postings_hold_every_term_of_every_memory_as_ingest_and_the_migration_write_them(resources, bank) -> None:
    """Migration 0009: BM25 reads ``bm25_postings``, one row per (term, memory) of the tsvectors."""
    read = "SELECT term, unit_id::text, tf, doc_len FROM bm25_postings WHERE bank_id = :b"
    with resources.engine.begin() as conn:
        actual = sorted(conn.execute(text(_POSTINGS), {"b": bank}).all())
        assert sorted(conn.execute(text(read), {"b": bank}).all()) == actual
        assert any(tf > 1 for _, _, tf, _ in actual)
        # On a database written before 0009: no postings, then the backfill.
        conn.execute(text("DELETE FROM bm25_postings WHERE bank_id = :b"), {"b": bank})
        migration = importlib.import_module("tempr.store.migrations.versions.0009_bm25_postings")
        conn.execute(text(migration.BACKFILL))
        backfilled = sorted(conn.execute(text(read), {"b": bank}).all())
        conn.rollback()
    assert backfilled == actual


def test_bm25_reads_the_postings_index_and_no_text_index_is_left(resources, bank) -> None:
    """The postings' key leads with (bank, term) and carries tf and doc_len: the score needs no heap row."""
    with resources.engine.connect() as conn:
        defs = dict(
            conn.execute(
                text("SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('memory_units', 'bm25_postings')")
            ).all()
        )
    assert "(bank_id, term, unit_id) INCLUDE (tf, doc_len)" in defs["bm25_postings_pkey"]
    assert not [d for d in defs.values() if "search_vector" in d]


def test_a_deleted_bank_leaves_no_postings(resources) -> None:
    """Postings carry no foreign key (its per-row check halved ingest's added cost): a trigger on
    ``banks`` removes them with the bank, as the memories' cascade removes those."""
    bank_id = f"t-bm25-gone-{uuid.uuid4().hex[:10]}"
    facts = list(parse_array(list(synthetic.facts(20))))
    settings = resources.settings.model_copy(update={"semantic_link_top_k": 0})
    ingest_facts(bank_id, facts, IngestDeps(resources.engine, FakeEmbedder(), resources.extractor, settings))
    count = text("SELECT count(*) FROM bm25_postings WHERE bank_id = :b")
    with resources.engine.begin() as conn:
        assert conn.execute(count, {"b": bank_id}).scalar_one() > 20
        conn.execute(text("DELETE FROM banks WHERE id = :b"), {"b": bank_id})
        assert conn.execute(count, {"b": bank_id}).scalar_one() == 0
