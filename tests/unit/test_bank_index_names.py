"""The own index's name and predicate are built from a bank id: bounded, stable, never injectable."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.errors import ValidationError
from tempr.bank_ids import BANK_ID
from tempr.store.bank_index import bank_clause, index_name


@given(st.from_regex(BANK_ID, fullmatch=True))
def test_every_bank_id_gives_a_short_distinct_name_and_a_quoted_literal(bank_id: str) -> None:
    name = index_name(bank_id)
    assert len(name) <= 63 and name == index_name(bank_id)  # PostgreSQL's limit; stable across processes
    assert name.startswith("memory_units_hnsw_") and name.isascii() and name.replace("_", "").isalnum()
    assert bank_clause(bank_id) == f"m.bank_id = '{bank_id}'" and "'" not in bank_id


def test_names_differ_between_banks() -> None:
    assert index_name("a") != index_name("b") != index_name("A")


@pytest.mark.parametrize("bad", ["x'; DROP TABLE banks; --", "", "a b", "é"])
def test_a_bad_bank_id_never_reaches_the_sql(bad: str) -> None:
    with pytest.raises(ValidationError):
        bank_clause(bad)
    with pytest.raises(ValidationError):
        index_name(bad)
