"""A bank's own HNSW index against the search it replaces, through the chord, in one run.

The synthetic banks (``bench.latency``'s, built in bulk) each get their own index
(``tempr.store.bank_index``); this bench then alternates blocks of recalls with the bank's
``own_index`` flag on and off. Off is exactly the path before the index existed for a bank of at
most ``EXACT_SEARCH_MAX_UNITS`` memories (and, since migration 0014, the path of any bank until its
index is ready): the exact scan, whose ``+ 0`` keeps every index out.
Larger banks are refused: with the flag off, one written before migration 0014 would walk the
shared index, but PostgreSQL plans a statement with its bound bank id and so still finds the bank's
own index through ``m.bank_id = :filter_bank``; only dropping the index gives their "before"
(measured by hand, BENCHMARKS.md). Every recall is a cache miss (its own query_timestamp), one client, budget mid,
on the benchmark's fleet.

    python -m bench.own_index [--sizes 10000] [--rounds 4] [--per-block 10] [--write]

It prints the medians (client wall, the semantic strategy, the strategies' dispatch to last
done) and, with ``--write``, replaces its section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text

from bench import banks, latency, report, stack, synthetic
from bench.metrics import percentile
from bench.progress import bar, log
from tempr.store.recall_filters import EXACT_SEARCH_MAX_UNITS

SECTION = "own-index"
MODES = ("own index", "before (exact scan)")


@dataclass
class Cell:
    wall: list[float] = field(default_factory=list)
    semantic: list[float] = field(default_factory=list)
    strategies: list[float] = field(default_factory=list)


def _set_flag(engine: Any, bank: str, on: bool) -> None:
    with engine.begin() as conn:
        conn.execute(text("UPDATE banks SET own_index = :on WHERE id = :b"), {"on": on, "b": bank})


def run(sizes: Sequence[int], rounds: int, per_block: int, seed: int = synthetic.DEFAULT_SEED) -> dict[str, Any]:
    from workers.resources import get_resources

    too_big = [n for n in sizes if n > EXACT_SEARCH_MAX_UNITS]
    if too_big:
        raise SystemExit(
            f"bench.own_index: sizes above {EXACT_SEARCH_MAX_UNITS:,} have no flag-off baseline: {too_big}"
        )
    stack.services_up()
    builds = latency.prepare_banks(sizes, seed, bulk=True)
    engine = get_resources().engine
    bank_of = {n: banks.bank_id(n, seed) for n in sizes}
    stack.clear_cache(list(bank_of.values()))
    reqs = latency.Requests(seed + 1)
    cells = {(n, m): Cell() for n in sizes for m in MODES}
    fleet = stack.BenchWorkers(stack.default_fleet(), exclusive=True)
    fleet.start()
    try:
        latency.warm_up(bank_of[min(sizes)], min(sizes), reqs, sum(s.concurrency for s in fleet.specs))
        with bar(rounds * len(cells) * per_block, "own index vs before", "recall") as progress:
            for r in range(rounds):
                for n in sizes:
                    order = MODES if r % 2 == 0 else MODES[::-1]
                    for mode in order:
                        _set_flag(engine, bank_of[n], mode == MODES[0])
                        jobs = [(bank_of[n], reqs.next(n, "mid")) for _ in range(per_block)]
                        samples, _ = latency.closed_loop(latency.through_workers, jobs, 1, progress)
                        _keep(cells[(n, mode)], samples)
        described = fleet.fleet()
    finally:
        fleet.stop()
        for bank in bank_of.values():
            _set_flag(engine, bank, True)
    return {"cells": cells, "sizes": list(sizes), "fleet": described, "builds": builds, "machine": report.machine()}


def _keep(cell: Cell, samples: Sequence[Any]) -> None:
    for s in samples:
        if s.error:
            continue
        cell.wall.append(s.wall_ms)
        if "strategy.semantic" in s.timings:
            cell.semantic.append(s.timings["strategy.semantic"])
        if "strategies" in s.timings:
            cell.strategies.append(s.timings["strategies"])


def _median(xs: Sequence[float]) -> str:
    return report.fmt(statistics.median(xs), 1) if xs else "-"


def render(result: dict[str, Any]) -> str:
    rows = []
    for n in result["sizes"]:
        for mode in MODES:
            c = result["cells"][(n, mode)]
            p95 = report.fmt(percentile(c.wall, 95), 0) if c.wall else "-"
            rows.append(
                [f"{n:,}", mode, str(len(c.wall)), _median(c.wall), p95, _median(c.semantic), _median(c.strategies)]
            )
    head = ["facts", "search", "n", "wall p50", "wall p95", "semantic p50", "strategies p50"]
    built = ", ".join(f"{n:,}: {b.own_index_s:.1f} s" for n, b in sorted(result["builds"].items()) if b.own_index_s)
    return "\n".join(
        [
            "## A bank's own HNSW index, through the chord (`python -m bench.own_index`)",
            "",
            report.machine_line(result["machine"]),
            "",
            "Blocks of recalls alternate between the bank's own index and the search it replaces (the bank's "
            "`own_index` flag switched off: the exact scan that banks of up to 20,000 memories had), one client, "
            "budget mid, each recall a cache miss. Milliseconds; *semantic*: the strategy's own time; "
            "*strategies*: dispatch to the last strategy done.",
            "",
            report.table(head, rows),
            "",
            f"Fleet: {'; '.join(result['fleet'])}." + (f" Own indexes built in this run: {built}." if built else ""),
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--per-block", type=int, default=10)
    parser.add_argument("--write", action="store_true", help="replace this bench's section of BENCHMARKS.md")
    args = parser.parse_args(argv)
    result = run([int(s) for s in args.sizes.split(",")], args.rounds, args.per_block)
    text_ = render(result)
    print(text_)
    if args.write:
        report.write_section(SECTION, text_)
        log("BENCHMARKS.md updated")


if __name__ == "__main__":
    main()
