"""What the learned ranker's focus features cost per recall (issue 9 allows the new stage 5 ms at p50).

    .venv/bin/python -m bench.focus_cost [--size 10000] [--queries 60] [--write]

On a synthetic bank already in the database (``tempr bench latency --sizes 10000`` builds it),
each query runs the work the focus adds, with and without it, alternating in one process so
that load moves both sides alike:

* *embedding*: the analysis's one embedder call, ``[query, focus]`` against ``[query]``;
* *rank stage*: ``tempr.recall.scoring.rerank`` (rows, cosines, features, the model's predict) for the
  same fused candidates, the plan with its focus vector against the same plan without one; once
  with the reranking process's row cache warm (as in a fleet that has seen the bank), once
  reading every row from PostgreSQL (no cache: the focus adds two cosines to the statement);
* *message*: the plan's JSON, which the fusion callback's message carries (the strategy
  messages go without the focus).

Each step is repeated (``--repeats``) and its median kept per query; the table gives the median
and the 95th percentile over queries.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import banks, synthetic
from bench.metrics import median

REFERENCE = datetime(2025, 1, 1, tzinfo=UTC)


def _ms(call: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return median(times)


def _pair(on: Callable[[], Any], off: Callable[[], Any], repeats: int, flip: bool) -> tuple[float, float]:
    """(with, without), the order of the two alternating from query to query."""
    if flip:
        without = _ms(off, repeats)
        return _ms(on, repeats), without
    with_ = _ms(on, repeats)
    return with_, _ms(off, repeats)


def measure(size: int, queries: int, repeats: int) -> dict[str, list[tuple[float, float]]]:
    from dataclasses import replace

    from tempr.core.query_focus import focus_text
    from tempr.recall.models import RecallRequest
    from tempr.recall.pipeline import run_strategies
    from tempr.recall.plan import analyse
    from tempr.recall.scoring import fuse, rerank
    from workers.resources import get_resources, recall_context

    bank = banks.bank_id(size)
    ctx = recall_context()
    cold = replace(ctx, unit_cache=None)
    if ctx.embedder is None:
        raise SystemExit("this process has no embedder")
    steps = ("embedding", "rank, row cache warm", "rank, from PostgreSQL", "plan JSON, KB")
    out: dict[str, list[tuple[float, float]]] = {step: [] for step in steps}
    version = _bank_version(get_resources().engine, bank)
    for j in range(queries):
        text = synthetic.query(j, size)
        request = RecallRequest(query=text, budget="mid", query_timestamp=REFERENCE + timedelta(seconds=j))
        plan = analyse(bank, request, ctx, version=version)
        if plan.focus is None:
            continue
        focus = focus_text(text) or ""
        candidates = fuse(plan, run_strategies(plan, ctx), ctx.settings)
        rerank(plan, candidates, ctx)  # the row cache warm, as in a fleet that has seen the bank
        for step, pair in _one_query(text, focus, plan, candidates, (ctx, cold), repeats, bool(j % 2)).items():
            out[step].append(pair)
    return out


def _one_query(
    text: str, focus: str, plan: Any, candidates: Any, contexts: tuple[Any, Any], repeats: int, flip: bool
) -> dict[str, tuple[float, float]]:
    """(with, without) per step for one query."""
    from tempr.recall.scoring import rerank

    warm, cold = contexts
    bare = plan.model_copy(update={"focus": None})
    embed = warm.embedder.embed
    return {
        "embedding": _pair(lambda: embed([text, focus]), lambda: embed([text]), repeats, flip),
        "rank, row cache warm": _pair(
            lambda: rerank(plan, candidates, warm), lambda: rerank(bare, candidates, warm), repeats, flip
        ),
        "rank, from PostgreSQL": _pair(
            lambda: rerank(plan, candidates, cold), lambda: rerank(bare, candidates, cold), repeats, flip
        ),
        "plan JSON, KB": (len(plan.model_dump_json()) / 1024, len(bare.model_dump_json()) / 1024),
    }


def _bank_version(engine: Any, bank: str) -> int:
    from config.errors import NotFound
    from tempr.store import banks_repo

    try:
        with engine.connect() as conn:
            return banks_repo.bank_state(conn, bank)[0]
    except NotFound:
        raise SystemExit(f"no bank {bank}: build it first with `tempr bench latency --sizes ...`") from None


def _p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def render(size: int, results: dict[str, list[tuple[float, float]]], load: tuple[float, ...]) -> str:
    return paired_section(
        "Cost of the focus features (`python -m bench.focus_cost`)",
        f"{len(results['embedding'])} queries naming someone, on the {size:,}-fact synthetic bank "
        f"(`{banks.bank_id(size)}`), budget mid; per query the median of repeated calls, with and without "
        "the focus, alternating in one process",
        results,
        load,
        "focus",
    )


def paired_section(
    title: str, setup: str, results: dict[str, list[tuple[float, float]]], load: tuple[float, ...], what: str
) -> str:
    """A paired bench's BENCHMARKS.md section: its title, how it ran (and the load), its table."""
    from bench.report import machine_line

    loads = f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}. {machine_line()}"
    return "\n".join([f"## {title}", "", f"{setup}; {loads}", "", *paired_table(results, what)])


def paired_table(results: dict[str, list[tuple[float, float]]], what: str) -> list[str]:
    """The markdown table of (with, without) pairs per step: medians, 95th percentiles, the difference."""
    lines = [
        f"| step | with {what} p50 | without p50 | added p50 | with {what} p95 | without p95 | added p95 |",
        "|:---|---:|---:|---:|---:|---:|---:|",
    ]
    for step, pairs in results.items():
        with_ = [a for a, _ in pairs]
        without = [b for _, b in pairs]
        added = [a - b for a, b in pairs]
        unit = "" if "KB" in step else " ms"
        lines.append(
            f"| {step} | {median(with_):.2f} | {median(without):.2f} | **{median(added):+.2f}**{unit} | "
            f"{_p95(with_):.2f} | {_p95(without):.2f} | {_p95(added):+.2f} |"
        )
    return lines


def paired_parser(doc: str) -> argparse.ArgumentParser:
    """The options every paired bench takes (``--queries``, ``--repeats``, ``--write``)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="write the table to BENCHMARKS.md")
    return parser


def run_paired(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    section: str,
    measure: Callable[[], dict[str, list[tuple[float, float]]]],
    render: Callable[[dict[str, list[tuple[float, float]]], tuple[float, ...]], str],
) -> None:
    """Measure with the load average taken around it, print the table, and write it if asked."""
    if args.queries < 1 or args.repeats < 1:
        parser.error("--queries and --repeats must be 1 or more")
    before = os.getloadavg()
    results = measure()
    load = tuple(max(a, b) for a, b in zip(before, os.getloadavg(), strict=True))
    body = render(results, load)
    print(body)
    if args.write:
        from bench.report import write_section

        write_section(section, body)


def locomo_main(
    argv: Sequence[str] | None,
    doc: str,
    section: str,
    measure: Callable[[Any, int, int], dict[str, list[tuple[float, float]]]],
    render: Callable[[dict[str, list[tuple[float, float]]], tuple[float, ...]], str],
) -> None:
    """``main`` of a paired bench over the LoCoMo dev banks: ``measure(folder, queries, repeats)``."""
    from bench.quality import DEFAULT_LOCOMO

    parser = paired_parser(doc)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO, help="folder of LoCoMo conversations")
    args = parser.parse_args(argv)
    if not args.locomo.is_dir():
        parser.error(f"no LoCoMo folder at {args.locomo}")
    run_paired(parser, args, section, lambda: measure(args.locomo, args.queries, args.repeats), render)


def main(argv: Sequence[str] | None = None) -> None:
    parser = paired_parser(__doc__ or "")
    parser.add_argument("--size", type=int, default=10_000, help="the synthetic bank's size (built beforehand)")
    args = parser.parse_args(argv)

    def named_queries() -> dict[str, list[tuple[float, float]]]:
        results = measure(args.size, args.queries, args.repeats)
        if not results["embedding"]:
            raise SystemExit("none of the queries named anyone: nothing to compare")
        return results

    run_paired(parser, args, "focus_cost", named_queries, lambda results, load: render(args.size, results, load))


if __name__ == "__main__":
    main()
