"""Redis keys: one builder, and distinct parts never meet in one key."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.jobs.keys import idempotency_key, recall_cache_key, redis_key

parts = st.text(alphabet=st.sampled_from("ab:%3A_-."), max_size=8)


def test_the_reported_collision_is_gone() -> None:
    assert idempotency_key("", "tA", "rN:k") != idempotency_key("", "tA:rN", "k")
    assert idempotency_key("t1", "b", "k") != idempotency_key("t2", "b", "k")
    assert recall_cache_key("a:v1", 2, "f", "d") != recall_cache_key("a", 1, "f", "d")


@given(st.tuples(parts, parts, parts), st.tuples(parts, parts, parts))
def test_distinct_parts_give_distinct_keys(one: tuple[str, str, str], two: tuple[str, str, str]) -> None:
    assert (idempotency_key(*one) == idempotency_key(*two)) == (one == two)


@given(st.lists(parts, max_size=4))
def test_only_separators_are_colons(values: list[str]) -> None:
    key = redis_key("recall", *values)
    assert key.count(":") == 1 + len(values)


def test_unknown_kind_and_untyped_part_are_refused() -> None:
    with pytest.raises(ValueError):
        redis_key("jobz", "x")
    with pytest.raises(TypeError):
        redis_key("job", 1.5)  # type: ignore[arg-type]
