"""Exact top-k BM25 with term bounds (tempr.core.bm25_bounds): pruning never changes the answer."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempr.core.bm25_bounds import Attempt, TermStat, certified, pruned_attempts, term_bound, tf_part

K1, B = 1.2, 0.75
VOCAB = [f"w{i}" for i in range(8)]

# A bank: each document is a {term: tf} bag plus some filler length.
documents = st.lists(
    st.tuples(st.dictionaries(st.sampled_from(VOCAB), st.integers(1, 4), max_size=5), st.integers(0, 20)),
    min_size=1,
    max_size=120,
)


def _bank(docs: list[tuple[dict[str, int], int]]) -> tuple[list[dict[str, int]], list[int], float]:
    bags = [bag for bag, _ in docs]
    lengths = [sum(bag.values()) + filler for bag, filler in docs]
    return bags, lengths, max(sum(lengths) / len(lengths), 1.0)


def _stats(bags, lengths, avgdl, query) -> list[TermStat]:
    out = []
    for term in sorted(set(query)):
        holders = [i for i, bag in enumerate(bags) if term in bag]
        if not holders:
            continue
        df = len(holders)
        idf = math.log(1 + (len(bags) - df + 0.5) / (df + 0.5))
        max_tf = max(bags[i][term] for i in holders)
        min_len = min(lengths[i] for i in holders)
        out.append(TermStat(term, df, idf, term_bound(idf, max_tf, min_len, avgdl, K1, B)))
    return out


def _top(
    bags, lengths, avgdl, terms: list[TermStat], match: set[str], limit: int, *, every: bool = False
) -> list[tuple[float, int]]:
    """Score every document holding a ``match`` term (``every``: all of them) with every query term."""
    scored = []
    for i, bag in enumerate(bags):
        if not (match <= bag.keys() if every else match & bag.keys()):
            continue
        score = sum(t.idf * tf_part(bag[t.term], lengths[i], avgdl, K1, B) for t in terms if t.term in bag)
        scored.append((score, i))
    scored.sort(key=lambda p: (-p[0], p[1]))
    return scored[:limit]


@settings(max_examples=300, deadline=None)
@given(documents, st.lists(st.sampled_from(VOCAB), min_size=1, max_size=5), st.integers(1, 40))
def test_a_certified_pruned_answer_is_the_full_answer(docs, query, limit) -> None:
    bags, lengths, avgdl = _bank(docs)
    terms = _stats(bags, lengths, avgdl, query)
    full = _top(bags, lengths, avgdl, terms, {t.term for t in terms}, limit)
    attempts = pruned_attempts(terms, limit, units=len(bags), min_postings=0, min_share=0.0, max_attempts=10)
    # Every conjunction of two or more terms as well, not only the one pruned_attempts proposes.
    ordered = sorted(terms, key=lambda t: -t.bound)
    total = sum(t.bound for t in terms)
    for m in range(2, len(ordered) + 1):
        strong = ordered[:m]
        attempts.append(Attempt(tuple(t.term for t in strong), True, total - min(t.bound for t in strong)))
    for attempt in attempts:
        pruned = _top(bags, lengths, avgdl, terms, set(attempt.terms), limit, every=attempt.conjunctive)
        if certified([s for s, _ in pruned], limit, attempt.rest_bound):
            assert pruned == full


@settings(max_examples=200, deadline=None)
@given(documents, st.lists(st.sampled_from(VOCAB), min_size=1, max_size=5))
def test_no_document_outscores_the_bounds(docs, query) -> None:
    bags, lengths, avgdl = _bank(docs)
    for t in _stats(bags, lengths, avgdl, query):
        for i, bag in enumerate(bags):
            if t.term in bag:
                assert t.idf * tf_part(bag[t.term], lengths[i], avgdl, K1, B) <= t.bound * (1 + 1e-12)


def test_a_common_word_is_pruned_when_the_rare_ones_fill_the_top_k() -> None:
    # 'moved' is in most memories; 'silva' and 'maria' fill the top 2 on their own.
    terms = [TermStat("maria", 900, 4.6, 6.0), TermStat("silva", 1100, 4.4, 5.7), TermStat("move", 8000, 2.5, 3.2)]
    attempts = pruned_attempts(terms, 300)
    assert attempts == [Attempt(("maria", "silva"), False, 3.2)]
    assert certified([9.0, 7.5], 2, 3.2)
    assert not certified([9.0, 3.2], 2, 3.2)  # a tie at the bound could hide an unscored memory
    assert not certified([9.0], 2, 3.2)  # too few rows: the rest must fill the list


def test_small_or_single_term_queries_run_in_full() -> None:
    one = [TermStat("a", 10_000, 1.0, 2.0)]
    small = [TermStat("a", 100, 1.0, 2.0), TermStat("b", 4000, 0.5, 1.0)]
    assert pruned_attempts(one, 10) == []
    assert pruned_attempts(small, 10) == []  # 4,100 postings: one full query is cheap
    assert pruned_attempts([], 10) == []


def test_an_attempt_must_skip_enough_postings_and_reach_the_limit() -> None:
    rare_common = [TermStat("rare", 50, 8.0, 10.0), TermStat("common", 9000, 1.0, 1.5)]
    assert pruned_attempts(rare_common, 100) == []  # 50 postings cannot fill a top 100
    assert pruned_attempts(rare_common, 40) == [Attempt(("rare",), False, 1.5)]
    balanced = [TermStat("a", 5000, 2.0, 3.0), TermStat("b", 1000, 1.0, 1.0)]
    assert pruned_attempts(balanced, 10) == []  # skipping 17 % of postings is not worth a query


def test_bounds_take_the_largest_tf_and_the_shortest_memory() -> None:
    assert term_bound(2.0, 1, 4, 10.0, K1, B) == 2.0 * tf_part(1, 4, 10.0, K1, B)
    assert term_bound(2.0, 3, 4, 10.0, K1, B) > term_bound(2.0, 1, 4, 10.0, K1, B)
    assert term_bound(2.0, 1, 2, 10.0, K1, B) > term_bound(2.0, 1, 4, 10.0, K1, B)
    assert term_bound(2.0, 256, 0, 10.0, K1, B) < 2.0 * (K1 + 1)  # the default bound is valid and finite


def test_two_strong_terms_that_co_occur_are_tried_together_first() -> None:
    # A first and a last name (1 % of a 1M bank each) for a top 10: their few shared memories.
    names = [TermStat("ibrahim", 9_000, 4.7, 6.8), TermStat("iwasaki", 10_500, 4.6, 6.6)]
    (both,) = pruned_attempts(names, 10, units=1_000_000)
    # A memory missing one name scores at most the other's bound: the larger, 6.8.
    assert (both.terms, both.conjunctive, both.rest_bound) == (("ibrahim", "iwasaki"), True, pytest.approx(6.8))
    # For a top 300 the estimate (about 190 shared memories) is too few, and one name alone
    # would need a 300th score above the other's bound (6.6), far above one name's idf: no attempt.
    assert pruned_attempts(names, 300, units=1_000_000) == []
