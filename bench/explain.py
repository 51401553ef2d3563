"""Each strategy's SQL, explained on a real bank: ``python -m bench.explain --bank B [--write]``.

Runs the four strategies for a few questions with a hook that records every statement they send
(text and bound parameters, as the driver saw them), then replays each recorded transaction with
``EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`` in front of every query (other statements, such as
``SET LOCAL hnsw.ef_search``, run as they are, so the plan is the one the strategy got). Prints, per
strategy and statement: execution and planning time, rows, shared buffers hit/read, and the scan
nodes used (an index scan names its index; a sequential scan over memory_units, unit_entities or
memory_links at 100k facts is the thing to look for).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from bench import report

SCAN_NODES = ("Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Index Scan", "Bitmap Heap Scan")
QUESTIONS = (
    "Where does the user work now?",
    "What did Alice do last summer?",
    "Which projects mention the database migration?",
    "When did the team move offices?",
    "What happened after the product launch in 2024?",
)


@contextmanager
def recording(engine: Any) -> Iterator[list[tuple[str, Any]]]:
    seen: list[tuple[str, Any]] = []

    def hook(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        seen.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", hook)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", hook)


def _scans(node: dict[str, Any]) -> list[str]:
    out = []
    kind = node.get("Node Type", "")
    if kind in SCAN_NODES:
        target = node.get("Index Name") or node.get("Relation Name") or ""
        out.append(f"{kind} {target}".strip())
    for child in node.get("Plans") or []:
        out += _scans(child)
    return out


def explain(engine: Any, statements: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """Replay one strategy's statements in a transaction, explaining the queries."""
    rows = []
    with engine.connect() as conn:
        tx = conn.begin()
        for sql, params in statements:
            head = sql.lstrip().split(None, 1)[0].upper()
            if head not in ("SELECT", "WITH") or "set_config(" in sql:  # settings apply, as they did
                conn.exec_driver_sql(sql, params)
                continue
            plan = conn.exec_driver_sql("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params).scalar()
            top = (json.loads(plan) if isinstance(plan, str) else plan)[0]
            root = top["Plan"]
            rows.append(
                {
                    "sql": " ".join(sql.split())[:70],
                    "exec_ms": top["Execution Time"],
                    "plan_ms": top["Planning Time"],
                    "rows": root.get("Actual Rows"),
                    "hit": root.get("Shared Hit Blocks", 0),
                    "read": root.get("Shared Read Blocks", 0),
                    "scans": sorted(set(_scans(root))),
                }
            )
        tx.rollback()
    return rows


def run(bank: str, budget: str = "mid") -> dict[str, list[list[dict[str, Any]]]]:
    from tempr.core.types import ALL_STRATEGIES
    from tempr.recall.models import parse_request
    from tempr.recall.plan import analyse
    from tempr.recall.strategies import run_strategy
    from workers.resources import get_resources, recall_context

    res = get_resources()
    ctx = recall_context(embedder=True)
    out: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
    for q in QUESTIONS:
        plan = analyse(bank, parse_request({"query": q, "budget": budget}), ctx)
        for s in ALL_STRATEGIES:
            with recording(res.engine) as seen:
                run_strategy(s.value, plan, recall_context(embedder=False))
            out[s.value].append(explain(res.engine, seen))
    return out


def _same_statements(runs: list[list[dict[str, Any]]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """The statements of every question, grouped by text and occurrence, in first-seen order.

    Not by position: questions send different numbers of statements (BM25 tries a pruned query
    first, and the graph sends its keyword seeds from a second connection at the same time).
    """
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for statements in runs:
        seen: dict[str, int] = defaultdict(int)
        for st in statements:
            key = (st["sql"][:48], seen[st["sql"][:48]])
            seen[st["sql"][:48]] += 1
            groups.setdefault(key, []).append(st)
    return groups


def render(bank: str, size: int, found: dict[str, list[list[dict[str, Any]]]]) -> str:
    lines = [
        f"## Each strategy's SQL, explained ({size:,} facts)",
        "",
        f"`python -m bench.explain --bank {bank}` ({size:,} facts, budget mid, {len(QUESTIONS)} questions): each "
        "strategy's statements replayed under `EXPLAIN (ANALYZE, BUFFERS)`; median over the questions that "
        "sent each statement (a pruned BM25 query that settles the top k saves the next).",
        "",
    ]
    rows = []
    for strategy, runs in found.items():
        for i, stmts in enumerate(_same_statements(runs).values()):
            scans = sorted({s for st in stmts for s in st["scans"]})
            rows.append(
                [
                    strategy,
                    i + 1,
                    f"`{stmts[0]['sql'][:48]}…`",
                    report.fmt(statistics.median(st["exec_ms"] for st in stmts), 2),
                    report.fmt(statistics.median(st["plan_ms"] for st in stmts), 2),
                    int(statistics.median(st["hit"] + st["read"] for st in stmts)),
                    "; ".join(scans) or "-",
                ]
            )
    lines.append(report.table(["strategy", "#", "statement", "exec ms", "plan ms", "buffers", "scans"], rows))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bank", required=True)
    ap.add_argument("--write", action="store_true", help="write the `explain` section of BENCHMARKS.md")
    args = ap.parse_args(argv)
    from bench.banks import unit_count
    from workers.resources import get_resources

    found = run(args.bank)
    text = render(args.bank, unit_count(get_resources().engine, args.bank), found)
    print(text)
    if args.write:
        report.write_section("explain", text)


if __name__ == "__main__":
    main()
