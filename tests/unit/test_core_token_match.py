"""Token-level match (``tempr.core.token_match``): which tokens count, packing, MaxSim against brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tempr.core import token_match


def test_content_tokens_are_words_that_are_not_stopwords_and_later_word_pieces() -> None:
    tokens = ["[CLS]", "what", "games", "does", "nate", "play", "?", "val", "##or", "##ant", "[SEP]"]
    assert [t for t in tokens if token_match.keep(t)] == ["games", "nate", "play", "val", "##or", "##ant"]
    dates = ["on", "march", "8", ",", "2024", "tuesday", "tp", "##13", "##51"]  # dates are the temporal features'
    assert [t for t in dates if token_match.keep(t)] == ["tp"]


def test_a_text_of_stopwords_keeps_its_words_and_an_empty_one_has_none() -> None:
    hidden = np.eye(5, 384, dtype=np.float32)
    rows = token_match.select(["[CLS]", "who", "is", "she", "[SEP]"], hidden)
    assert rows is not None and rows.shape == (3, 384)
    assert token_match.select(["[CLS]", "[SEP]"], hidden[:2]) is None
    assert token_match.select(["[CLS]", "march", "8", "?", "[SEP]"], hidden) is None
    assert token_match.pack(None) is None and token_match.unpack(None) is None


unit_rows = arrays(np.float32, st.tuples(st.integers(1, 6), st.just(8)), elements=st.floats(-1, 1, width=32)).filter(
    lambda a: bool((np.linalg.norm(a, axis=1) > 0.1).all())
)


@given(unit_rows)
def test_packing_keeps_each_rows_direction(rows: np.ndarray) -> None:
    back = token_match.unpack(token_match.pack(rows), dim=8)
    assert back is not None and back.shape == rows.shape
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    assert np.einsum("ij,ij->i", back, unit) == pytest.approx(np.ones(len(rows)), abs=2e-3)


@given(unit_rows, st.lists(st.one_of(st.none(), unit_rows), min_size=1, max_size=6))
def test_maxsim_is_the_mean_of_each_query_tokens_best_cosine(query: np.ndarray, docs: list[np.ndarray | None]) -> None:
    q = token_match.unpack(token_match.pack(query), dim=8)
    packed = [token_match.pack(d) for d in docs]
    got = token_match.maxsim(q, packed, dim=8)
    for value, raw in zip(got, packed, strict=True):
        if raw is None:
            assert math.isnan(value)
            continue
        d = token_match.unpack(raw, dim=8)
        brute = np.mean([max(float(a @ b) for b in d) for a in q])  # type: ignore[union-attr]
        assert value == pytest.approx(brute, abs=1e-5)
        assert -1.0 - 1e-5 <= value <= 1.0 + 1e-5


def test_columns_give_gaps_to_the_best_and_fall_back_to_the_query_without_a_focus() -> None:
    a, b = np.eye(2, 8, dtype=np.float32)
    docs = [token_match.pack(a[None]), token_match.pack(b[None]), None]
    cols = token_match.columns(a[None], None, docs, dim=8)
    one_token = [[1.0, 0.0] * 4, [0.0, -1.0] * 4]  # one query token: weighting changes nothing
    assert cols[:2] == pytest.approx(np.array(one_token), abs=1e-6)
    assert np.isnan(cols[2]).all()
    focused = token_match.columns(a[None], b[None], docs, dim=8)
    assert focused[:2, 2].tolist() == pytest.approx([0.0, 1.0], abs=1e-6)
    assert np.isnan(token_match.columns(None, None, docs, dim=8)).all()


@given(unit_rows, st.lists(st.one_of(st.none(), unit_rows), min_size=1, max_size=6))
def test_the_idf_column_weights_each_query_token_by_how_few_candidates_match_it(
    query: np.ndarray, docs: list[np.ndarray | None]
) -> None:
    q = token_match.unpack(token_match.pack(query), dim=8)
    packed = [token_match.pack(d) for d in docs]
    got = token_match.columns(q, None, packed, dim=8)[:, 4]
    present = [token_match.unpack(raw, dim=8) for raw in packed if raw is not None]
    best = [[max(float(a @ b) for b in d) for d in present] for a in q]  # type: ignore[union-attr]
    weights = []
    for row in best:
        df = sum(1 for v in row if v >= token_match.MATCHED)
        weights.append(max(math.log((len(present) + 1) / (df + 0.5)), token_match.MIN_WEIGHT))
    at = 0
    for value, raw in zip(got, packed, strict=True):
        if raw is None:
            assert math.isnan(value)
            continue
        brute = sum(w * row[at] for w, row in zip(weights, best, strict=True)) / sum(weights)
        assert value == pytest.approx(brute, abs=1e-5)
        at += 1


def test_a_word_every_candidate_matches_counts_less_in_the_idf_column() -> None:
    name, topic = np.eye(2, 8, dtype=np.float32)
    docs = [token_match.pack(name[None]), token_match.pack(name[None]), token_match.pack(np.stack([name, topic]))]
    cols = token_match.columns(np.stack([name, topic]), None, docs, dim=8)
    assert cols[0, 0] == pytest.approx(0.5, abs=1e-6) and cols[2, 0] == pytest.approx(1.0, abs=1e-6)
    assert cols[2, 4] == pytest.approx(1.0, abs=1e-6)
    assert cols[0, 4] < 0.2  # the name alone: every candidate has it


def test_packed_bytes_of_the_wrong_width_are_refused() -> None:
    with pytest.raises(ValueError):
        token_match.unpack(b"\x01" * 10, dim=8)


VOCAB = "[PAD] [UNK] [CLS] [SEP] who is she games nate ##or ##ant march 8 ? tp".split()
MASKS = token_match.keep_masks(VOCAB)


@given(
    st.integers(1, 6).flatmap(
        lambda n: st.tuples(
            arrays(np.int64, (n, 7), elements=st.integers(0, len(VOCAB) - 1)),
            arrays(np.float32, (n, 7, 384), elements=st.floats(-4, 4, width=32)),
        )
    )
)
def test_a_batch_packs_the_bytes_each_text_packs_alone(batch: tuple[np.ndarray, np.ndarray]) -> None:
    """``select_packed`` (ingest, a batch at once) against ``pack(select(...))`` text by text, byte for byte:
    stopword-only texts fall back to their words, texts of only dates or specials pack to None."""
    ids, hidden = batch
    alone = [
        token_match.pack(token_match.select([VOCAB[i] for i in row], h)) for row, h in zip(ids, hidden, strict=True)
    ]
    assert token_match.select_packed(ids, hidden, MASKS) == alone


def test_the_masks_follow_keep_and_keep_word() -> None:
    content, words = MASKS
    assert [t for t, k in zip(VOCAB, content, strict=True) if k] == ["games", "nate", "##or", "##ant", "tp"]
    assert [t for t, k in zip(VOCAB, words, strict=True) if k] == "who is she games nate ##or ##ant tp".split()
