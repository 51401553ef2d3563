"""The schema constants code relies on say what the migration creates (no second, drifting copy)."""

from __future__ import annotations

import re
from pathlib import Path

from tempr.store.schema import EMBEDDING_DIM, FACT_TYPES, LINK_TYPES

MIGRATIONS = Path(__file__).resolve().parents[2] / "tempr" / "store" / "migrations" / "versions"


def _ddl() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(MIGRATIONS.glob("*.py")))


def _check_values(column: str) -> tuple[str, ...]:
    found = re.search(rf"{column}\s+text NOT NULL CHECK \({column} IN \(([^)]*)\)\)", _ddl())
    assert found, f"no CHECK on {column} in the migrations"
    return tuple(v.strip().strip("'") for v in found.group(1).split(","))


def test_embedding_dimension_matches_the_vector_columns() -> None:
    dims = {int(d) for d in re.findall(r"vector\((\d+)\)", _ddl())}
    assert dims == {EMBEDDING_DIM}


def test_fact_and_link_types_match_the_checks() -> None:
    assert _check_values("fact_type") == FACT_TYPES
    assert _check_values("link_type") == LINK_TYPES


def test_the_ann_index_threshold_and_definition_match_the_migration() -> None:
    """Code adds ``AND m.ann_indexed`` to every HNSW query: the index must be partial on exactly
    that, and no bank may take an HNSW path while its memories are still outside the index."""
    import importlib

    from tempr.store import links_repo, recall_filters
    from tempr.store.schema import ANN_INDEX_DDL, ANN_INDEX_MIN_UNITS

    migration = importlib.import_module("tempr.store.migrations.versions.0008_ann_index_big_banks")
    assert migration.MIN_UNITS == ANN_INDEX_MIN_UNITS
    assert ANN_INDEX_DDL in " ".join(_ddl().split()).replace('" "', "")  # its two literals joined
    assert links_repo.LINK_EXACT_MAX_UNITS <= ANN_INDEX_MIN_UNITS <= recall_filters.EXACT_SEARCH_MAX_UNITS
