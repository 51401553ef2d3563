"""Ingest's one-statement insert (``ingest_repo.insert_units``) writes the BM25 postings and statistics
that a recount from the stored tsvectors gives (real PostgreSQL)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.store import ingest_repo

pytestmark = pytest.mark.integration


def test_bm25_statistics_equal_a_recount_after_batches_that_overlap(resources) -> None:
    """Two ingests into one bank, the second repeating facts of the first and naming one fact twice:
    the bank's N and total length, every term's df / max tf / min length, and the postings equal
    what the stored tsvectors give."""
    bank = f"stage-stats-{uuid.uuid4().hex[:8]}"
    deps = IngestDeps(resources.engine, resources.embedder, resources.extractor, resources.settings)
    first = [{"id": f"a{i}", "text": f"mango tart {'mango ' * i}number {i}", "entities": []} for i in range(6)]
    pear = {"id": "b1", "text": "pear tart pear", "entities": []}
    second = [*first[3:], first[5], pear, pear, {"id": "b2", "text": "the"}]
    ingest_facts(bank, parse_array(first), deps)
    report = ingest_facts(bank, parse_array(second), deps)
    assert report.inserted == 2
    try:
        with resources.engine.connect() as conn:
            n, total = conn.execute(text("SELECT unit_count, total_len FROM banks WHERE id = :b"), {"b": bank}).one()
            want_n, want_total = conn.execute(
                text("SELECT count(*), sum(doc_len) FROM memory_units WHERE bank_id = :b"), {"b": bank}
            ).one()
            lens = conn.execute(
                text("""SELECT m.doc_len, coalesce((SELECT sum(GREATEST(cardinality(u.positions), 1))
                        FROM unnest(m.search_vector) u), 0) FROM memory_units m WHERE bank_id = :b"""),
                {"b": bank},
            ).all()
            terms = conn.execute(
                text("SELECT term, df, max_tf, min_len FROM bm25_terms WHERE bank_id = :b ORDER BY term"), {"b": bank}
            ).all()
            recount = conn.execute(
                text("""SELECT u.lexeme, count(*), max(GREATEST(cardinality(u.positions), 1)), min(m.doc_len)
                        FROM memory_units m, unnest(m.search_vector) u WHERE m.bank_id = :b
                        GROUP BY u.lexeme ORDER BY u.lexeme"""),
                {"b": bank},
            ).all()
            postings = conn.execute(
                text("SELECT count(*), sum(tf) FROM bm25_postings WHERE bank_id = :b"), {"b": bank}
            ).one()
    finally:
        with resources.engine.begin() as conn:
            ingest_repo.delete_bank(conn, bank)
    assert (n, total) == (want_n, want_total) == (8, want_total)
    assert all(stored == counted for stored, counted in lens)
    assert [tuple(t) for t in terms] == [tuple(r) for r in recount]
    assert postings == (sum(r[1] for r in recount), want_total)


def test_a_row_staged_twice_is_inserted_and_counted_once(resources) -> None:
    """The pipeline drops a repeated fact before it stages a batch; the statement must not count one
    twice if a caller does not (its lexemes are split once per distinct id)."""
    from tempr.ingest.pipeline import IngestReport, prepare_rows

    bank = f"stage-twice-{uuid.uuid4().hex[:8]}"
    deps = IngestDeps(resources.engine, resources.embedder, resources.extractor, resources.settings)
    facts = parse_array([{"id": "p", "text": "pear tart pear", "entities": []}, {"id": "q", "text": "plum"}])
    rows, _ = prepare_rows(bank, facts, deps, IngestReport(bank, received=2), None)
    with resources.engine.connect() as conn:
        tx = conn.begin()
        try:
            cfg = ingest_repo.lock_bank(conn, bank, resources.settings.text_search_config, deps.embedder.space)
            ingest_repo.stage_batch(conn, [*rows, rows[0]])
            inserted = ingest_repo.insert_units(conn, bank, cfg, ann_indexed=False)
            stats = conn.execute(text("SELECT unit_count, total_len FROM banks WHERE id = :b"), {"b": bank}).one()
            terms = dict(conn.execute(text("SELECT term, df FROM bm25_terms WHERE bank_id = :b"), {"b": bank}).all())
            tf = conn.execute(text("SELECT sum(tf) FROM bm25_postings WHERE bank_id = :b"), {"b": bank}).scalar_one()
        finally:
            tx.rollback()
    assert len(inserted) == 2
    assert tuple(stats) == (2, 4)  # pear x2 + tart, plum
    assert terms == {"pear": 1, "tart": 1, "plum": 1}
    assert tf == 4
