"""One rule for bank ids, and the bank patterns API keys are scoped to."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.errors import ValidationError
from tempr.bank_ids import bank_matches, check_bank_id, check_bank_pattern, in_scope, is_bank_id, pattern_covered

# The banks.id CHECK of migration 0001, applied the way PostgreSQL applies it (whole string).
DB_CHECK = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}\Z")


@pytest.mark.parametrize("good", ["a", "A1", "t-123", "tA:rN", "a.b_c-d", "x" * 128])
def test_valid_ids(good: str) -> None:
    assert check_bank_id(good) == good


@pytest.mark.parametrize("bad", ["", "-a", "a b", "a/b", "x" * 129, "bank\n", "bank\x00", "é", None, 5])
def test_invalid_ids_are_a_validation_error_naming_the_field(bad: object) -> None:
    with pytest.raises(ValidationError) as info:
        check_bank_id(bad)
    assert info.value.field == "bank_id"


@given(st.text(max_size=140))
def test_the_rule_is_the_database_check(value: str) -> None:
    assert is_bank_id(value) == (DB_CHECK.search(value) is not None)


def test_patterns() -> None:
    assert [check_bank_pattern(p) for p in ("*", "acme", "acme-*")] == ["*", "acme", "acme-*"]
    for bad in ("", "**", "a b*", "-x*", "a*b"):
        with pytest.raises(ValidationError):
            check_bank_pattern(bad)
    assert bank_matches("acme-*", "acme-1") and not bank_matches("acme-*", "acme")
    assert bank_matches("acme", "acme") and not bank_matches("acme", "acme-1")
    assert in_scope(("x", "acme-*"), "acme-2") and not in_scope(("x", "acme-*"), "y")
    assert in_scope(("*",), "anything")


def test_pattern_coverage() -> None:
    assert pattern_covered("acme-1", ["acme-*"]) and pattern_covered("acme-*", ["acme-*"])
    assert pattern_covered("acme-x*", ["acme-*"]) and pattern_covered("*", ["*"]) and pattern_covered("x", ["x"])
    assert not pattern_covered("acme*", ["acme-*"]) and not pattern_covered("*", ["acme-*"])
    assert not pattern_covered("x*", ["x"]) and not pattern_covered("y", ["x", "z*"])


_PATTERN = st.one_of(
    st.just("*"),
    st.text(alphabet="ab-", min_size=1, max_size=4).map(lambda s: "a" + s),
    st.text(alphabet="ab-", max_size=3).map(lambda s: "a" + s + "*"),
)


@given(_PATTERN, st.lists(_PATTERN, min_size=1, max_size=3), st.text(alphabet="ab-", max_size=6))
def test_a_covered_pattern_never_reaches_a_bank_outside_the_scope(pattern: str, scope: list[str], tail: str) -> None:
    bank = "a" + tail
    if pattern_covered(pattern, scope) and bank_matches(pattern, bank):
        assert in_scope(scope, bank)
