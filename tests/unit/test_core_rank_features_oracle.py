"""The fast ``feature_matrix`` returns exactly the rows of the first version (kept as an oracle).

The shipped ranker model was trained on the first version's rows, so the rewrite for speed
must not move a single float: same values, same order, NaN where NaN. Random candidate
lists cover shared chunk texts, inflected words (the stemmer), entity names, naive and
aware dates in several time zones, open and closed query windows, and missing values.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st
from rank_features_oracle import entity_hits as old_entity_hits
from rank_features_oracle import feature_matrix as old_feature_matrix
from rank_features_oracle import words as old_words

from tempr.core import token_match
from tempr.core.rank_features import (
    FEATURE_NAMES,
    STRATEGIES,
    TOKEN_FEATURES,
    RankCandidate,
    RankQuery,
    entity_hits,
    feature_array,
    feature_matrix,
    words,
)
from tempr.core.rank_text import WORD, forms, padded, stem, tokens
from tempr.core.types import TimeWindow
from tempr.providers.embedder.fake import FakeEmbedder

VOCAB = (
    "Alice works working worked work Helix Health joins joined join the in at May 2024 Mel plays playing "
    "violin es ses sing sings bed beds ring rings s ed ing goes gone when where who why how what did Caroline "
    "LGBTQ support group painting paints Smith 7 1999 X ray x-ray café naïve İstanbul Straße a\x1cb\tc\nd WORKS"
).split()
NAMES = ("Alice", "alice smith", "Alice Smith", "Helix Health", "Bob", "", "!!", "LGBTQ", "Mel", "caroline")
ZONES = (UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8)), None)
BASE = datetime(2024, 1, 1, tzinfo=UTC)
FAKE = FakeEmbedder()

sentences = st.lists(st.sampled_from(VOCAB), max_size=25).flatmap(
    lambda ws: st.sampled_from((" ", ", ", "; ", "'s ", "? ")).map(lambda sep: sep.join(ws))
)
cosines = st.one_of(st.floats(-1, 1), st.just(math.nan), st.just(0.5))


@st.composite
def dates(draw: st.DrawFn) -> datetime | None:
    if draw(st.booleans()) and draw(st.booleans()):
        return None
    moment = BASE + timedelta(minutes=draw(st.integers(-3 * 525_600, 2 * 525_600)))
    zone = draw(st.sampled_from(ZONES))
    return moment.replace(tzinfo=None) if zone is None else moment.astimezone(zone)


@st.composite
def windows(draw: st.DrawFn) -> TimeWindow:
    start = BASE + timedelta(hours=draw(st.integers(-20_000, 15_000)))
    end = start + timedelta(hours=draw(st.integers(0, 9_000)))
    side = draw(st.sampled_from((None, "before", "after")))
    if side is None:
        return TimeWindow(start, end, granularity=draw(st.sampled_from(("day", "month", "span"))))
    anchor = end if side == "before" else start
    return TimeWindow(start, end, granularity="span", open_side=side, anchor=anchor)


@st.composite
def candidate_lists(draw: st.DrawFn) -> list[RankCandidate]:
    chunks = draw(st.lists(sentences, min_size=1, max_size=4))
    n = draw(st.integers(1, 25))
    out = []
    for i in range(n):
        strategies = draw(st.lists(st.sampled_from(STRATEGIES), unique=True, max_size=4))
        out.append(
            RankCandidate(
                id=f"c{i}",
                text=draw(sentences),
                cos_fact=draw(cosines),
                ranks={s: draw(st.integers(1, 300)) for s in strategies},
                scores={s: draw(st.floats(-5, 50)) for s in strategies if draw(st.booleans())},
                rrf=draw(st.floats(0, 0.1)),
                chunk_text=draw(st.one_of(st.none(), st.sampled_from(chunks))),
                cos_chunk=draw(st.one_of(st.none(), cosines)),
                entities=tuple(draw(st.lists(st.sampled_from(NAMES), max_size=3))),
                occurred=draw(dates()),
                proof_count=draw(st.integers(-1, 200)),
                fact_type=draw(st.sampled_from(("world", "experience", "observation", "opinion"))),
                document=draw(st.sampled_from((None, "d1", "d2", "d3"))),
                ce=draw(st.one_of(st.none(), st.floats(-10, 10))),
                cos_focus=draw(st.one_of(st.none(), cosines)),
                cos_focus_chunk=draw(st.one_of(st.none(), cosines)),
                tokens=draw(st.one_of(st.none(), sentences.map(_packed))),
            )
        )
    return out


def _packed(text: str) -> bytes | None:
    return FAKE.embed_tokens([text])[1][0]


def _unpacked(text: str) -> object:
    return token_match.unpack(_packed(text))


@st.composite
def queries(draw: st.DrawFn) -> RankQuery:
    now = BASE + timedelta(days=draw(st.integers(0, 900)))
    text = draw(sentences)
    focus = draw(st.one_of(st.none(), sentences))
    return RankQuery(
        text,
        now,
        tuple(draw(st.lists(windows(), max_size=2))),
        tokens=_unpacked(text) if draw(st.booleans()) else None,
        focus_tokens=None if focus is None else _unpacked(focus),
    )


def same(x: float, y: float, tolerance: float = 0.0) -> bool:
    return abs(x - y) <= tolerance or x == y or (math.isnan(x) and math.isnan(y))


TOLERANCE = {name: 1e-5 for name in TOKEN_FEATURES}
"""The token features sum float32 products in another order than the oracle's loops: equal to ~1e-7."""


@settings(max_examples=300)
@given(queries(), candidate_lists())
def test_rows_equal_the_first_version_exactly(query: RankQuery, candidates: list[RankCandidate]) -> None:
    old = old_feature_matrix(query, candidates)
    new = feature_matrix(query, candidates)
    assert len(new) == len(old) == len(candidates)
    for cand, a, b in zip(candidates, old, new, strict=True):
        assert len(a) == len(b) == len(FEATURE_NAMES)
        for name, x, y in zip(FEATURE_NAMES, a, b, strict=True):
            assert same(x, y, TOLERANCE.get(name, 0.0)), (cand.id, name, x, y)
            assert type(y) is float
    array = feature_array(query, candidates)
    assert array.shape == (len(candidates), len(FEATURE_NAMES))
    assert all(
        same(x, y, TOLERANCE.get(name, 0.0))
        for row, a in zip(array.tolist(), old, strict=True)
        for name, x, y in zip(FEATURE_NAMES, row, a, strict=True)
    )


@given(sentences)
def test_words_and_entity_hits_equal_the_first_version(text: str) -> None:
    assert words(text) == old_words(text)
    assert entity_hits(text, NAMES) == old_entity_hits(text, NAMES)


def test_an_empty_list_has_no_rows() -> None:
    query = RankQuery("anything", BASE)
    assert feature_matrix(query, []) == old_feature_matrix(query, []) == []
    assert feature_array(query, []).shape == (0, len(FEATURE_NAMES))


@given(st.text(max_size=60))
def test_the_ascii_fast_path_tokenises_like_the_regex(text: str) -> None:
    assert tokens(text) == WORD.findall(text.lower())
    assert padded(text).split() == WORD.findall(text.lower())


@given(st.from_regex(r"[a-z0-9]{1,12}", fullmatch=True))
def test_every_token_is_among_the_forms_of_its_stem(token: str) -> None:
    assert token in forms(stem(token))
    assert all(stem(w) == stem(token) for w in forms(stem(token)))
