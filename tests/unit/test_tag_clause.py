"""The tag predicate (store/recall_filters.tag_clause) means what its docstring says, for every mode.

The SQL fragment is evaluated here over Python sets (``=``/``<>`` '{}', ``&&``, ``@>``, ``<@``, AND,
OR), so the test checks the predicate's meaning, not its spelling."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.errors import ValidationError
from tempr.store.recall_filters import TAG_MODES, Filters, tag_clause, where_clause

TAGS = st.frozensets(st.sampled_from(["a", "b", "c", "d"]), max_size=4)
PARAM = r"CAST\(:filter_tags AS text\[\]\)"


def evaluate(sql: str, params: dict[str, list[str]], row: frozenset[str]) -> bool:
    if not sql:
        return True
    expr = sql.replace("m.tags = '{}'", "(not R)").replace("m.tags <> '{}'", "bool(R)")
    expr = re.sub(rf"m\.tags && {PARAM}", "bool(R & T)", expr)
    expr = re.sub(rf"m\.tags @> {PARAM}", "(T <= R)", expr)
    expr = re.sub(rf"m\.tags <@ {PARAM}", "(R <= T)", expr)
    expr = expr.replace(" OR ", " or ").replace(" AND ", " and ")
    assert re.fullmatch(r"[\w\s()&<=.]+", expr), f"unparsed SQL left: {expr}"
    return bool(eval(expr, {"R": row, "T": frozenset(params.get("filter_tags", []))}))


def expected(mode: str, wanted: frozenset[str], row: frozenset[str]) -> bool:
    if not wanted:
        return not row if mode == "exact" else True
    return {
        "any": not row or bool(row & wanted),
        "all": not row or wanted <= row,
        "any_strict": bool(row) and bool(row & wanted),
        "all_strict": bool(row) and wanted <= row,
        "exact": row == wanted,
    }[mode]


@given(mode=st.sampled_from(TAG_MODES), wanted=TAGS, row=TAGS)
def test_every_mode_selects_what_it_promises(mode: str, wanted: frozenset[str], row: frozenset[str]) -> None:
    sql, params = tag_clause(Filters("b", tags=tuple(sorted(wanted)), tags_match=mode))
    assert evaluate(sql, params, row) == expected(mode, wanted, row)


def test_where_clause_joins_bank_types_and_tags() -> None:
    sql, params = where_clause(Filters("bank", types=("world",), tags=("a",), tags_match="all"))
    assert params == {"filter_bank": "bank", "filter_tags": ["a"], "filter_types": ["world"]}
    assert sql.count(" AND ") >= 2
    no_types, _ = where_clause(Filters("bank", types=("world",)), types=False)
    assert "filter_types" not in no_types


@pytest.mark.parametrize(("kwargs", "field"), [({"tags_match": "some"}, "tags_match"), ({"types": ("x",)}, "types")])
def test_bad_filters_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        Filters("b", **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field
