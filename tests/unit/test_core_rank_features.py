"""The learned ranker's features (``tempr.core.rank_features``): values pinned on small lists."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core import token_match
from tempr.core.rank_features import (
    FEATURE_NAMES,
    TOKEN_FEATURES,
    RankCandidate,
    RankQuery,
    content_terms,
    coverage,
    entity_hits,
    feature_matrix,
    pool_idf,
    wh_code,
    words,
)
from tempr.core.types import TimeWindow
from tempr.providers.embedder.fake import FakeEmbedder

NOW = datetime(2025, 6, 1, tzinfo=UTC)
FAKE = FakeEmbedder()


def col(rows: list[list[float]], name: str) -> list[float]:
    i = FEATURE_NAMES.index(name)
    return [r[i] for r in rows]


def cand(i: str, text: str, cos: float, **kw: object) -> RankCandidate:
    return RankCandidate(id=i, text=text, cos_fact=cos, **kw)  # type: ignore[arg-type]


def test_words_trim_inflections_and_terms_drop_stopwords() -> None:
    assert words("Alice works at Helix; she joined in 2024") == [
        "alice",
        "work",
        "at",
        "helix",
        "she",
        "join",
        "in",
        "2024",
    ]
    assert content_terms("Where does Alice work? Where?") == ["alice", "work"]


def test_pool_idf_and_coverage() -> None:
    docs = [{"alice", "helix"}, {"alice", "google"}, {"bob"}]
    idf = pool_idf(docs, ["alice", "helix"])
    assert idf["alice"] == pytest.approx(math.log(1 + (3 - 2 + 0.5) / 2.5))
    assert idf["helix"] == pytest.approx(math.log(1 + (3 - 1 + 0.5) / 1.5))
    assert coverage(["alice", "helix"], docs[0], idf) == 1.0
    assert coverage(["alice", "helix"], docs[1], idf) == pytest.approx(idf["alice"] / (idf["alice"] + idf["helix"]))
    assert coverage([], docs[0], idf) == 0.0


def test_entity_hits_whole_words_case_insensitive() -> None:
    assert entity_hits("Where does Alice Smith work?", ["alice smith", "Smith", "Ali", "Bob"]) == 2.0


def test_wh_code() -> None:
    assert wh_code("When did Alice move?") == 2.0
    assert wh_code("So where is it?") == 3.0
    assert wh_code("Alice's job") == 0.0


def test_one_row_per_candidate_in_order_with_every_feature() -> None:
    q = RankQuery("Where does Alice work?", NOW)
    cands = [
        cand("a", "Alice joined Helix Health", 0.6, ranks={"semantic": 2, "keyword": 1}, scores={"semantic": 0.6}),
        cand("b", "Bob likes tea", 0.2, ranks={"graph": 4}),
    ]
    rows = feature_matrix(q, cands)
    assert len(rows) == 2 and all(len(r) == len(FEATURE_NAMES) for r in rows)
    assert col(rows, "rr_semantic") == [0.5, 0.0]
    assert col(rows, "rr_keyword") == [1.0, 0.0]
    assert col(rows, "rr_graph") == [0.0, 0.25]
    assert col(rows, "score_semantic") == [0.6, 0.0]
    assert col(rows, "n_strategies") == [2.0, 1.0]
    assert col(rows, "cos_fact_gap") == pytest.approx([0.0, -0.4])
    assert col(rows, "cos_fact_rr") == [1.0, 0.5]
    assert col(rows, "lex_fact")[1] == 0.0 and col(rows, "lex_fact")[0] > 0.0
    assert col(rows, "undated") == [1.0, 1.0]
    assert col(rows, "has_window") == [0.0, 0.0]
    assert all(math.isnan(v) for v in col(rows, "ce"))
    assert feature_matrix(q, []) == []


def test_chunk_text_is_the_second_representation() -> None:
    q = RankQuery("What instrument does Mel play?", NOW)
    cands = [
        cand("a", "Mel has a hobby", 0.5, chunk_text="Mel: I play the violin every day"),
        cand("b", "Mel plays chess", 0.5),
    ]
    rows = feature_matrix(q, cands)
    lex_fact, lex_chunk = col(rows, "lex_fact"), col(rows, "lex_chunk")
    assert lex_chunk[0] > lex_fact[0]  # "play" is in the chunk only
    assert lex_chunk[1] == lex_fact[1]  # no chunk: the fact stands in
    assert col(rows, "cos_chunk") == [0.5, 0.5]  # no chunk embedding: the fact's cosine stands in


def test_time_window_features() -> None:
    window = TimeWindow(datetime(2024, 5, 1, tzinfo=UTC), datetime(2024, 5, 31, tzinfo=UTC), granularity="month")
    q = RankQuery("What happened in May 2024?", NOW, (window,))
    cands = [
        cand("in", "x", 0.1, occurred=datetime(2024, 5, 16, tzinfo=UTC)),
        cand("out", "y", 0.1, occurred=datetime(2023, 1, 1, tzinfo=UTC)),
        cand("undated", "z", 0.1),
    ]
    rows = feature_matrix(q, cands)
    assert col(rows, "has_window") == [1.0, 1.0, 1.0]
    assert col(rows, "in_window") == [1.0, 0.0, 0.0]
    assert col(rows, "temporal_proximity")[0] > 0.9 and col(rows, "temporal_proximity")[1:] == [0.0, 0.5]
    assert col(rows, "undated") == [0.0, 0.0, 1.0]
    assert col(rows, "recency")[2] == 0.5


def test_support_counts_top_neighbours_sharing_session_or_entity() -> None:
    q = RankQuery("q", NOW)
    cands = [
        cand("a", "t", 0.9, document="s1", entities=("Alice",)),
        cand("b", "t", 0.8, document="s1", entities=("alice", "Bob")),
        cand("c", "t", 0.7, document="s2", entities=("Bob",)),
    ]
    rows = feature_matrix(q, cands)
    assert col(rows, "session_support") == [1.0, 1.0, 0.0]
    assert col(rows, "entity_support") == [1.0, 1.0, 1.0]


def test_cross_encoder_score_is_a_feature_when_given() -> None:
    rows = feature_matrix(RankQuery("q", NOW), [cand("a", "t", 0.1, ce=2.5)])
    assert col(rows, "ce") == [2.5]


texts = st.text(alphabet="abcdefgh xyz", max_size=30)


@given(
    st.lists(st.tuples(texts, st.floats(-1, 1), st.integers(0, 800)), min_size=1, max_size=12),
    texts,
)
def test_rows_are_finite_and_do_not_depend_on_candidate_order(items: list[tuple[str, float, int]], query: str) -> None:
    _, packed = FAKE.embed_tokens([t for t, _, _ in items] + [query])
    cands = [
        cand(str(i), t, c, occurred=NOW - timedelta(days=d), ranks={"semantic": i + 1}, tokens=packed[i])
        for i, (t, c, d) in enumerate(items)
    ]
    q = RankQuery(query, NOW, tokens=token_match.unpack(packed[-1]))
    rows = feature_matrix(q, cands)
    may_miss = {FEATURE_NAMES.index(n) for n in TOKEN_FEATURES}  # a text of stopwords only has no tokens
    for row in rows:
        assert all(math.isfinite(v) for i, v in enumerate(row[:-1]) if i not in may_miss)  # nor has ce
    flipped = feature_matrix(q, list(reversed(cands)))
    by_id = {c.id: r for c, r in zip(reversed(cands), flipped, strict=True)}
    skip = {
        FEATURE_NAMES.index("cos_fact_rr"),
        FEATURE_NAMES.index("session_support"),
        FEATURE_NAMES.index("entity_support"),
    }
    for c, row in zip(cands, rows, strict=True):
        other = by_id[c.id]
        for i, (x, y) in enumerate(zip(row[:-1], other[:-1], strict=True)):
            if i not in skip:  # ties in cosine may break differently
                assert x == pytest.approx(y, nan_ok=True), FEATURE_NAMES[i]


def test_session_features_summarise_each_document_over_both_representations() -> None:
    q = RankQuery("Where does Alice work?", NOW)
    cands = [
        cand("a", "Alice joined Helix Health", 0.5, cos_chunk=0.8, document="s1"),
        cand("b", "Alice likes tea", 0.3, cos_chunk=0.2, document="s1"),
        cand("c", "Bob runs", 0.6, document="s2"),  # no chunk vector: the fact's cosine stands in
        cand("d", "Carol sings", 0.1),  # no document: a session of its own
    ]
    rows = feature_matrix(q, cands)
    both = [0.5 + 0.4 * 0.8, 0.3 + 0.4 * 0.2, 0.6 + 0.4 * 0.6, 0.1 + 0.4 * 0.1]
    assert col(rows, "both") == pytest.approx(both)
    assert col(rows, "both_gap") == pytest.approx([b - max(both) for b in both])
    assert col(rows, "session_best") == pytest.approx([both[0], both[0], both[2], both[3]])
    assert col(rows, "session_best_gap")[1] == pytest.approx(both[0] - max(both))
    assert col(rows, "session_mean") == pytest.approx([(both[0] + both[1]) / 2] * 2 + [both[2], both[3]])
    assert col(rows, "session_size") == [2.0, 2.0, 1.0, 1.0]


def test_focus_features_use_the_focus_cosines_and_fall_back_as_both_does() -> None:
    q = RankQuery("Where does Alice work?", NOW)
    focused = [
        cand("a", "Alice joined Helix Health", 0.5, cos_chunk=0.8, cos_focus=0.7, cos_focus_chunk=0.6),
        cand("b", "Alice likes tea", 0.6, cos_chunk=0.2, cos_focus=0.1),  # no chunk vector for the focus
    ]
    rows = feature_matrix(q, focused)
    focus = [0.7 + 0.4 * 0.6, 0.1 + 0.4 * 0.1]
    assert col(rows, "focus_both") == pytest.approx(focus)
    assert col(rows, "focus_both_gap") == pytest.approx([0.0, focus[1] - focus[0]])
    assert col(rows, "both") == pytest.approx([0.5 + 0.4 * 0.8, 0.6 + 0.4 * 0.2])  # the plain cosines untouched

    plain = [cand("a", "x", 0.5, cos_chunk=0.8), cand("b", "y", 0.6)]  # a query naming nobody: its own focus
    rows = feature_matrix(RankQuery("where does she work?", NOW), plain)
    assert col(rows, "focus_both") == col(rows, "both")
    assert col(rows, "focus_both_gap") == col(rows, "both_gap")


def test_token_features_match_words_and_are_missing_without_token_vectors() -> None:
    _, packed = FAKE.embed_tokens(
        ["Nate won a Valorant games final", "Nate likes tea", "What games does Nate play?", "games"]
    )
    q = RankQuery("What games does Nate play?", NOW, tokens=token_match.unpack(packed[2]))
    cands = [
        cand("a", "Nate won a Valorant games final", 0.5, tokens=packed[0]),
        cand("b", "Nate likes tea", 0.5, tokens=packed[1]),
        cand("c", "stored before token vectors", 0.5),
    ]
    rows = feature_matrix(q, cands)
    fact = col(rows, "tok_fact")
    assert fact[:2] == pytest.approx([2 / 3, 1 / 3]) and math.isnan(fact[2])  # games, nate, play: 2 and 1
    assert col(rows, "tok_fact_gap")[0] == 0.0 and col(rows, "tok_fact_gap")[1] < 0.0
    assert col(rows, "tok_focus") == pytest.approx(fact, nan_ok=True)  # no focus: the query is its own
    focused = RankQuery(q.text, NOW, tokens=q.tokens, focus_tokens=token_match.unpack(packed[3]))
    assert col(feature_matrix(focused, cands), "tok_focus")[:2] == pytest.approx([1.0, 0.0], abs=1e-6)
    assert all(math.isnan(v) for v in col(feature_matrix(RankQuery(q.text, NOW), cands), "tok_fact"))
