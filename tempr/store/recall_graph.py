"""The graph strategy's walk: multi-hop spreading activation over entities and links.

From the seeds, each hop scores the memories adjacent to the current frontier
with three independent signals, as the reference's graph scoring does:

* entity overlap: tanh(0.5 * number of the frontier's entities the memory mentions),
  reading at most ``per_entity_limit`` memories per entity so a hub entity ("Alice",
  "user") cannot explode a hop;
* semantic links: the strongest kNN link weight to the frontier, in either direction;
* causal links: the strongest causal link weight, in either direction (ingest stores
  effect -> cause; following both lets "why" reach causes and "what followed" reach effects).

A hop's score is the sum of the three (each clamped to [0, 1]) times ``decay**(hop - 1)``;
a memory reached at several hops keeps its best score. The best ``beam`` of the memories
first reached at a hop (score, then id) are the next frontier; each hop may add an even
share of the budget still left (so a hub cannot starve the deeper hops), and the walk stops
when ``budget`` memories have been explored. One SQL round trip per hop.

Why a beam: without one, hop 2 of a budget-mid walk spreads from all 150 memories hop 1
reached; at 100k facts their ~260 entities fan out to ~19,000 candidate memories that SQL
must count and score to keep 150 (47 of a 54 ms walk, BENCHMARKS.md "The graph walk's
beam"). Spreading from the best few of them reaches the strongest second-hop neighbours
for a fraction of that work.

Filters: the walk moves only through memories of the bank that pass the tag filter. Tags
scope visibility, so a memory the caller may not see must not connect two it may see.
The fact-type filter only decides which reached memories are returned: an observation
can still lead from one world fact to another. Every reached memory counts towards the
budget, returned or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, TextClause, text

from tempr.core.types import Hit
from tempr.store.recall_filters import Filters, tag_clause, type_clause, valid_uuids, where_clause

_HOP = """
WITH frontier AS (
    SELECT m.id FROM memory_units m
    WHERE m.id = ANY(CAST(:frontier AS uuid[])) AND {walk}
),
frontier_entities AS (
    SELECT DISTINCT ue.entity_id FROM unit_entities ue JOIN frontier f ON f.id = ue.unit_id
),
entity_hits AS (
    SELECT t.unit_id AS id, count(*) AS shared
    FROM frontier_entities fe
    CROSS JOIN LATERAL (
        SELECT ue.unit_id FROM unit_entities ue {entity_join}
        WHERE ue.entity_id = fe.entity_id AND {entity_walk} AND ue.unit_id <> ALL(CAST(:exclude AS uuid[]))
        ORDER BY ue.unit_id
        LIMIT :per_entity
    ) t
    GROUP BY t.unit_id
),
link_edges AS (
    -- LATERAL: per frontier memory, two index lookups (memory_links_from / _to). A plain join
    -- let the planner pick a sequential scan of memory_links once the frontier grew (hop 2:
    -- 79 ms at 10k facts; bench/explain.py).
    SELECT x.id, x.link_type, x.weight
    FROM frontier f CROSS JOIN LATERAL (
        SELECT l.to_unit_id AS id, l.link_type, l.weight FROM memory_links l
        WHERE l.from_unit_id = f.id AND l.link_type IN ('semantic', 'causal')
        UNION ALL
        SELECT l.from_unit_id, l.link_type, l.weight FROM memory_links l
        WHERE l.to_unit_id = f.id AND l.link_type IN ('semantic', 'causal')
    ) x
),
link_hits AS (
    SELECT e.id,
           max(e.weight) FILTER (WHERE e.link_type = 'semantic') AS sem,
           max(e.weight) FILTER (WHERE e.link_type = 'causal') AS cau
    FROM link_edges e {link_join}
    WHERE {link_walk} AND e.id <> ALL(CAST(:exclude AS uuid[]))
    GROUP BY e.id
),
scored AS (
    SELECT COALESCE(eh.id, lh.id) AS id,
           tanh(0.5 * COALESCE(eh.shared, 0))
           + LEAST(GREATEST(COALESCE(lh.sem, 0), 0), 1)
           + LEAST(GREATEST(COALESCE(lh.cau, 0), 0), 1) AS score,
           COALESCE(eh.id, lh.id) = ANY(CAST(:visited AS uuid[])) AS seen
    FROM entity_hits eh FULL JOIN link_hits lh ON lh.id = eh.id
)
SELECT s.id::text, s.score, s.seen, {returnable} AS returnable
FROM scored s JOIN memory_units m ON m.id = s.id
WHERE s.seen OR s.id IN (SELECT n.id FROM scored n WHERE NOT n.seen ORDER BY n.score DESC, n.id LIMIT :room)
"""


def graph_search(
    conn: Connection,
    seeds: Sequence[str],
    filters: Filters,
    *,
    depth: int,
    budget: int,
    decay: float,
    per_entity_limit: int = 200,
    beam: int = 0,
) -> tuple[list[Hit], dict[str, Any]]:
    """Spread from the seed memories for up to `depth` hops, exploring at most `budget` memories.

    `beam` caps the frontier of hops after the first (0: every memory a hop reached first).

    Returns the reached memories that pass every filter (seeds excluded), best score
    first (ties by id), and {"hops": [{"hop", "frontier", "reached", "new"}], "explored"}.
    """
    if not 0.0 < decay <= 1.0:
        raise ValueError("decay must be in (0, 1]")
    seed_ids = valid_uuids(seeds)
    best: dict[str, float] = {}
    returnable: dict[str, bool] = {}
    hops: list[dict[str, int]] = []
    frontier = seed_ids
    statement, filter_params = _hop_statement(filters)
    for hop in range(1, depth + 1):
        room = _room(budget - len(best), depth - hop + 1)
        if not frontier or room <= 0:
            break
        rows = conn.execute(
            statement,
            {
                **filter_params,
                "frontier": frontier,
                "exclude": seed_ids + frontier,
                "visited": list(best),
                "room": room,
                "per_entity": per_entity_limit,
            },
        ).all()
        factor = decay ** (hop - 1)
        reached = [unit for unit in (_record(best, returnable, r, factor) for r in rows) if unit]
        hops.append({"hop": hop, "frontier": len(frontier), "reached": len(rows), "new": len(reached)})
        frontier = _next_frontier(reached, best, beam)
    hits = [Hit(unit, score) for unit, score in best.items() if returnable[unit] and score > 0]
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits, {"hops": hops, "explored": len(best)}


def _room(remaining: int, hops_left: int) -> int:
    """New memories this hop may add: an even share of what is left, unused shares roll over.

    Without the share a hub entity could spend the whole budget on the first hop, and the
    deeper hops the budget level paid for would never run.
    """
    return -(-remaining // hops_left) if remaining > 0 else 0


def _next_frontier(reached: list[str], best: dict[str, float], beam: int) -> list[str]:
    """The memories the next hop spreads from: the best `beam` of those first reached (0: all)."""
    if beam <= 0 or len(reached) <= beam:
        return reached
    return sorted(reached, key=lambda unit: (-best[unit], unit))[:beam]


def _record(best: dict[str, float], returnable: dict[str, bool], row: Any, factor: float) -> str | None:
    """Fold one hop row into the best scores; return the id when this hop reached it first."""
    unit, score, seen, ok = row[0], float(row[1]) * factor, bool(row[2]), bool(row[3])
    if seen:
        best[unit] = max(best[unit], score)
        return None
    best[unit], returnable[unit] = score, ok
    return unit


def _hop_statement(filters: Filters) -> tuple[TextClause, dict[str, Any]]:
    """The per-hop query with the walk (bank + tags) and result (types) filters built in.

    An entity belongs to one bank, and so do the memories that mention it: the entity lookup
    needs memory_units only for a tag filter. Without one it reads unit_entities alone (at 10k
    facts a hop read ~9,500 memory rows just to re-check their bank: 41 of its 49 ms). Links,
    too, join two memories of one bank (ingest makes them within a bank), so the link lookup
    joins memory_units only for a tag filter.

    Where the walk does check a memory, it has found it by id (the frontier, a link target),
    so the bank test keeps the planner off the bank index (``bank_index=False``): a bank written
    since the table was last analysed is estimated at one row, and the planner then scanned the
    whole bank once per frontier memory instead of looking each id up (a LoCoMo bank beside
    110,000 memories: 25-48 ms a hop instead of about 2; BENCHMARKS.md, "A new bank's graph
    walk")."""
    walk, walk_params = where_clause(filters, "m", types=False, bank_index=False)
    tags, tag_params = tag_clause(filters, "m")
    kinds, kind_params = type_clause(filters, "m")
    sql = _HOP.format(
        walk=walk,
        returnable=kinds or "true",
        entity_join="JOIN memory_units m ON m.id = ue.unit_id" if tags else "",
        entity_walk=tags or "true",
        link_join="JOIN memory_units m ON m.id = e.id" if tags else "",
        link_walk=walk if tags else "true",
    )
    return text(sql), {**walk_params, **tag_params, **kind_params}
