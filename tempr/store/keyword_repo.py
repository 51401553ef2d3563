"""The keyword strategy's SQL: Okapi BM25 over a bank's memories, exact top k.

The query's lexemes come from the bank's own text search configuration, so they match the
stored tsvectors, ``bm25_terms`` and ``bm25_postings`` exactly (stemmed words, but also whole
URLs, hosts, hyphenated identifiers and numbers, which the parser keeps as single lexemes).
They travel as a text array, never as tsquery text, so query text is never parsed as query
syntax. Only memories with a posting of a query term are scored, with the non-negative idf
ln(1 + (N - df + 0.5) / (df + 0.5)), from the postings alone (migration 0009).

In a large bank a common query word has postings in a good share of the bank, and scoring
them is most of the work; ``tempr.core.bm25_bounds`` says when the memories holding only
such words provably cannot reach the top k, so they are never scored (same answer).
"""

from __future__ import annotations

from sqlalchemy import Connection, text

from tempr.core.bm25_bounds import MIN_POSTINGS, TermStat, certified, pruned_attempts, term_bound
from tempr.core.types import Hit
from tempr.store.recall_filters import Filters, tag_clause, type_clause, where_clause

__all__ = ["bm25_top", "keyword_search", "query_terms"]

_TERMS = """
WITH bank AS (
    SELECT b.unit_count::float8 AS n, GREATEST(b.total_len::float8 / b.unit_count, 1.0) AS avgdl,
           b.text_config
    FROM banks b WHERE b.id = :bank AND b.unit_count > 0
),
query_terms AS (
    SELECT DISTINCT u.lexeme FROM bank, unnest(to_tsvector(bank.text_config, :query)) AS u
)
SELECT t.term, t.df, ln(1.0 + (bank.n - t.df + 0.5) / (t.df + 0.5)) AS idf, t.max_tf, t.min_len, bank.avgdl, bank.n
FROM bank, query_terms q JOIN bm25_terms t ON t.bank_id = :bank AND t.term = q.lexeme
WHERE t.df > 0
ORDER BY t.term
"""

# Every query term scores. A pruned attempt first lists the memories holding ``:need`` of its
# ``:match`` terms (1: any of them; all of them for a conjunctive attempt; a memory has one
# posting per distinct term), then adds up the postings of every query term for those memories
# only: the common terms' postings are read but never aggregated for memories that cannot win.
# Scoring every posting needs no such list. Scores are rounded to 10 decimals so equal scores are
# equal whatever order a plan sums them in, and ties then go by id: the same answer from every
# plan (the bounds allow for it). Rounding (a numeric per row) cost more than the sum itself at
# 1M facts, so only the rows that can still reach the top are rounded: a row whose unrounded
# score is below the k-th best minus 1e-9 has k rows that beat it after rounding (which moves a
# score by at most 5e-11), so ``cut`` drops it without changing the answer. The postings'
# primary key leads with (bank, term) and carries tf and doc_len, so each term is one B-tree
# range and no heap row is read; a type or tag filter joins the memories the aggregate kept,
# before the LIMIT. Each term's idf is picked from the parameter array by position, not joined
# from an unnest: joined, the planner guessed 125 postings a term where a 1M bank had 29,000,
# and hashed the wrong side (BENCHMARKS.md).
_SCORE = """
WITH {candidates}scored AS (
    SELECT p.unit_id,
           sum((CAST(:idfs AS float8[]))[array_position(CAST(:terms AS text[]), p.term)] * p.tf::float8 * (:k1 + 1)
               / (p.tf::float8 + :k1 * (1 - :b + :b * p.doc_len / CAST(:avgdl AS float8)))) AS raw
    FROM bm25_postings p
    WHERE p.bank_id = :filter_bank AND p.term = ANY(CAST(:terms AS text[])){among}
    GROUP BY p.unit_id
),
kept AS MATERIALIZED (SELECT s.unit_id, s.raw FROM scored s {filter}),
cut AS (SELECT min(top.raw) - 1e-9 AS raw FROM (SELECT raw FROM kept ORDER BY raw DESC LIMIT :limit) top)
SELECT k.unit_id::text, round(CAST(k.raw AS numeric), 10)::float8 AS score
FROM kept k, cut
WHERE k.raw >= cut.raw
ORDER BY score DESC, k.unit_id
LIMIT :limit
"""
_CANDIDATES = """candidates AS MATERIALIZED (
    SELECT p.unit_id FROM bm25_postings p
    WHERE p.bank_id = :filter_bank AND p.term = ANY(CAST(:match AS text[]))
    GROUP BY p.unit_id
    HAVING count(*) >= :need
), """


def query_terms(
    conn: Connection, bank_id: str, query: str, *, k1: float, b: float
) -> tuple[list[TermStat], float, int]:
    """The query's terms the bank holds (df > 0), with idf and bound; the bank's avgdl and size."""
    rows = conn.execute(text(_TERMS), {"bank": bank_id, "query": query}).all()
    if not rows:
        return [], 1.0, 0
    avgdl, units = float(rows[0][5]), int(rows[0][6])
    stats = [
        TermStat(term, int(df), float(idf), term_bound(float(idf), int(max_tf), int(min_len), avgdl, k1, b))
        for term, df, idf, max_tf, min_len, _, _ in rows
    ]
    return stats, avgdl, units


def keyword_search(
    conn: Connection, query: str, filters: Filters, limit: int, *, k1: float = 1.2, b: float = 0.75
) -> list[Hit]:
    """BM25 over the bank's memories, computed in PostgreSQL from the bank's term statistics.

    Rare terms outweigh common ones (idf from ``bm25_terms.df`` and ``banks.unit_count``);
    term frequency saturates with k1 and is normalised by length against the bank's
    average (``banks.total_len / unit_count``) with b.
    """
    return bm25_top(conn, query, filters, limit, k1=k1, b=b)[0]


def bm25_top(
    conn: Connection,
    query: str,
    filters: Filters,
    limit: int,
    *,
    k1: float = 1.2,
    b: float = 0.75,
    min_postings: int = MIN_POSTINGS,
) -> tuple[list[Hit], dict[str, int | str]]:
    """The full query's top ``limit``, and how it was found (for the trace).

    Pruned attempts (see the module docstring) only make it cheaper: ``terms`` is how many
    query terms the bank holds, ``scored`` which memories were scored ("all postings", or
    those holding "any of 2" / "all of 2" of the strongest terms when that was proven
    enough), ``queries`` the scoring statements run.
    """
    if limit <= 0 or not query.strip():
        return [], {"terms": 0, "scored": "nothing", "queries": 0}
    terms, avgdl, units = query_terms(conn, filters.bank_id, query, k1=k1, b=b)
    if not terms:
        return [], {"terms": 0, "scored": "nothing", "queries": 0}
    memory_filter = _memory_filter(filters)
    pruned_sql = text(
        _SCORE.format(
            candidates=_CANDIDATES, among=" AND p.unit_id IN (SELECT unit_id FROM candidates)", filter=memory_filter
        )
    )
    base = {
        **where_clause(filters)[1],
        "terms": [t.term for t in terms],
        "idfs": [t.idf for t in terms],
        "avgdl": avgdl,
        "k1": k1,
        "b": b,
        "limit": limit,
    }
    queries = 0
    for attempt in pruned_attempts(terms, limit, units=units, min_postings=min_postings):
        need = len(attempt.terms) if attempt.conjunctive else 1
        rows = conn.execute(pruned_sql, {**base, "match": list(attempt.terms), "need": need}).all()
        queries += 1
        if certified([float(r[1]) for r in rows], limit, attempt.rest_bound):
            matched = f"all of {len(attempt.terms)}" if attempt.conjunctive else f"any of {len(attempt.terms)}"
            return [Hit(r[0], float(r[1])) for r in rows], {
                "terms": len(terms),
                "scored": matched,
                "queries": queries,
            }
    every_sql = text(_SCORE.format(candidates="", among="", filter=memory_filter))
    rows = conn.execute(every_sql, base).all()
    info: dict[str, int | str] = {"terms": len(terms), "scored": "all postings", "queries": queries + 1}
    return [Hit(r[0], float(r[1])) for r in rows], info


def _memory_filter(filters: Filters) -> str:
    """The join that applies a type or tag filter to the scored memories; "" for a whole bank."""
    if not (type_clause(filters)[0] or tag_clause(filters)[0]):
        return ""
    where, _ = where_clause(filters, bank_index=False)
    return f"JOIN memory_units m ON m.id = s.unit_id WHERE {where}"
