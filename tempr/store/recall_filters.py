"""Recall filters as SQL fragments, plus the shared knobs of the ANN queries.

Every recall query applies the bank, fact-type and tag filters in its own
WHERE clause, before any LIMIT, so a selective filter narrows the candidates
instead of emptying a list that was cut first (the reference's defect).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, text

from config.errors import ValidationError
from tempr.store.schema import FACT_TYPES

TAG_MODES = ("any", "all", "any_strict", "all_strict", "exact")

# pgvector's hard ceiling for hnsw.ef_search; 40 is its default and our floor.
EF_SEARCH_MIN, EF_SEARCH_MAX = 40, 1000
# An iterative scan visits at most this many tuples; 100 per wanted row keeps a 1%-selective filter
# answerable, and the ceiling bounds the cost when the filter matches fewer than `limit` rows.
MAX_SCAN_TUPLES_MIN, MAX_SCAN_TUPLES_MAX, SCAN_TUPLES_PER_ROW = 20_000, 200_000, 100
# Banks up to this size are searched exactly (every memory of the bank scored, no HNSW). One HNSW
# index serves every bank, so a small bank's neighbours sit among other banks' nodes: with a
# 100k-fact bank in the same index, a 10k-fact bank's mid-budget search walked 91 ms of graph
# (and may miss neighbours the iterative scan gave up on) where the exact scan took ~17 ms.
EXACT_SEARCH_MAX_UNITS = 20_000


@dataclass(frozen=True)
class Filters:
    """Which memories a recall may see: one bank, optionally some fact types and tags."""

    bank_id: str
    types: tuple[str, ...] = ()  # empty = all of world/experience/observation
    tags: tuple[str, ...] = ()
    tags_match: str = "any"  # any | all | any_strict | all_strict | exact

    def __post_init__(self) -> None:
        # Callers build these from JSON lists; normalise so the value stays hashable and comparable.
        object.__setattr__(self, "types", tuple(dict.fromkeys(self.types)))
        object.__setattr__(self, "tags", tuple(dict.fromkeys(self.tags)))
        if self.tags_match not in TAG_MODES:
            raise ValidationError(f"tags_match must be one of {', '.join(TAG_MODES)}", field="tags_match")
        unknown = [t for t in self.types if t not in FACT_TYPES]
        if unknown:
            raise ValidationError(f"unknown fact type(s): {', '.join(unknown)}", field="types")


def tag_clause(filters: Filters, alias: str = "m") -> tuple[str, dict[str, Any]]:
    """The tag predicate for ``filters.tags_match``; ``("", {})`` when it filters nothing.

    any/all include untagged memories (global scope); the *_strict modes exclude them;
    exact is set equality, and exact with no tags selects only untagged memories.
    """
    col, tags, mode = f"{alias}.tags", list(filters.tags), filters.tags_match
    if not tags:
        return (f"{col} = '{{}}'", {}) if mode == "exact" else ("", {})
    param = "CAST(:filter_tags AS text[])"
    sql = {
        "any": f"({col} = '{{}}' OR {col} && {param})",
        "all": f"({col} = '{{}}' OR {col} @> {param})",
        "any_strict": f"({col} <> '{{}}' AND {col} && {param})",
        "all_strict": f"({col} <> '{{}}' AND {col} @> {param})",
        "exact": f"({col} @> {param} AND {col} <@ {param})",
    }[mode]
    return sql, {"filter_tags": tags}


def type_clause(filters: Filters, alias: str = "m") -> tuple[str, dict[str, Any]]:
    if not filters.types:
        return "", {}
    return f"{alias}.fact_type = ANY(CAST(:filter_types AS text[]))", {"filter_types": list(filters.types)}


def where_clause(
    filters: Filters, alias: str = "m", *, types: bool = True, bank_index: bool = True
) -> tuple[str, dict[str, Any]]:
    """bank AND types AND tags, as one fragment (``types=False`` leaves the type filter out).

    ``bank_index=False`` writes the bank test so that no index can serve it (``|| ''``): for
    statements that find their rows by id and only re-check the bank, where an estimate for a
    bank the statistics do not know yet (one row) would make the planner scan the bank instead."""
    bank = f"{alias}.bank_id = :filter_bank" if bank_index else f"{alias}.bank_id || '' = :filter_bank"
    parts = [(bank, {"filter_bank": filters.bank_id}), tag_clause(filters, alias)]
    if types:
        parts.append(type_clause(filters, alias))
    sql = " AND ".join(s for s, _ in parts if s)
    params: dict[str, Any] = {}
    for _, p in parts:
        params.update(p)
    return sql, params


def set_ann_scan(conn: Connection, limit: int) -> None:
    """Size the HNSW scan for this query, for the rest of the transaction (SET LOCAL semantics).

    ef_search follows the LIMIT (pgvector caps it at 1000). The iterative scan keeps
    walking the graph until `limit` rows pass the WHERE clause, so a filtered query is not
    starved; relaxed_order is faster than strict_order, and callers re-sort exactly.
    """
    ef = min(max(limit, EF_SEARCH_MIN), EF_SEARCH_MAX)
    tuples = min(max(limit * SCAN_TUPLES_PER_ROW, MAX_SCAN_TUPLES_MIN), MAX_SCAN_TUPLES_MAX)
    conn.execute(
        text(
            "SELECT set_config('hnsw.ef_search', :ef, true), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
            "set_config('hnsw.max_scan_tuples', :tuples, true)"
        ),
        {"ef": str(ef), "tuples": str(tuples)},
    )


_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def valid_uuids(ids: Iterable[str]) -> list[str]:
    """Ids that can be memory-unit ids, in order, without duplicates; others cannot match a row.

    Ids come back in canonical form. Those already in it (every id tempr itself hands on) are kept as
    they are: parsing 300 of them into ``uuid.UUID`` and back cost 0.7 ms of the ranker's read."""
    out: dict[str, None] = {}
    for raw in ids:
        text_id = str(raw)
        if _CANONICAL_UUID.fullmatch(text_id):
            out[text_id] = None
            continue
        try:
            out[str(uuid.UUID(text_id))] = None
        except ValueError:
            continue
    return list(out)
