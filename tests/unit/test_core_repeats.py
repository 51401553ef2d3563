"""Repeats of a source chunk step down (tempr.core.repeats)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core.repeats import penalise_repeats, repeat_levels

scores_and_keys = st.lists(
    st.tuples(st.floats(-10, 10, allow_nan=False), st.sampled_from(["a", "b", "c", None])), max_size=30
)


def test_examples() -> None:
    #           a1   b1   a2   a3   none  b2
    scores = [5.0, 4.0, 4.5, 1.0, 3.0, 0.5]
    keys = ["a", "b", "a", "a", None, "b"]
    assert repeat_levels(scores, keys) == [0, 0, 1, 2, 0, 1]
    assert penalise_repeats(scores, keys, 3.0) == [5.0, 4.0, 1.5, -5.0, 3.0, -2.5]
    # the second memory of chunk a (4.5) now ranks after chunk b's first (4.0) and the unchunked one
    ranked = sorted(range(6), key=lambda i: -penalise_repeats(scores, keys, 3.0)[i])
    assert ranked == [0, 1, 4, 2, 5, 3]


def test_ties_go_to_the_earlier_candidate() -> None:
    assert repeat_levels([1.0, 1.0, 1.0], ["k", "k", "k"]) == [0, 1, 2]


def test_off_and_bad_input() -> None:
    assert penalise_repeats([2.0, 1.0], ["k", "k"], 0.0) == [2.0, 1.0]
    assert penalise_repeats([], [], 3.0) == []
    with pytest.raises(ValueError):
        penalise_repeats([1.0], [], 3.0)


@given(scores_and_keys, st.floats(0.1, 10))
def test_properties(pairs: list[tuple[float, str | None]], penalty: float) -> None:
    scores, keys = [s for s, _ in pairs], [k for _, k in pairs]
    out = penalise_repeats(scores, keys, penalty)
    levels = repeat_levels(scores, keys)
    for i, (s, k) in enumerate(pairs):
        assert out[i] <= s  # never raised
        if k is None or levels[i] == 0:
            assert out[i] == s  # a chunk's best memory and unchunked memories keep their score
    for key in {k for k in keys if k is not None}:
        mine = sorted((i for i, k in enumerate(keys) if k == key), key=lambda i: (-scores[i], i))
        assert [levels[i] for i in mine] == list(range(len(mine)))  # 0, 1, 2, ... within a chunk
        assert [out[i] for i in mine] == sorted((out[i] for i in mine), reverse=True)  # order kept
