"""The sizing model of docs/deploy.md: workers per queue for a recall rate, and its plot.

    python -m bench.fleet.sizing     # prints the table, writes docs/sizing.png

A worker *slot* (one prefork child, or one thread of a threads pool) serves one task at a time,
so by Little's law a queue needs ``rate x time-per-recall-on-that-queue / utilisation`` slots;
at 70 % utilisation queues stay short (an M/M/c queue at 0.7 waits a fraction of a service time).
The times are the measured medians of BENCHMARKS.md (2-core machine, budget mid) at 1,000,000
facts per bank, which that file *extrapolates* from 10,000 and 100,000 measured facts: the
model inherits that uncertainty. The retrieve slots wait on PostgreSQL, so its CPU lands on the
database: that is the row to read for the database's size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

UTILISATION = 0.7
RATES = (100, 1_000, 10_000)
DOCS = Path(__file__).resolve().parents[2] / "docs"


@dataclass(frozen=True)
class QueueCost:
    queue: str
    slot_ms: float  # time one recall holds a slot of this queue
    cpu_ms: float  # CPU one recall burns for this queue (on the worker, or on the database for 'database')
    per_pod: int  # slots per pod in deploy/k8s (concurrency)
    source: str


# BENCHMARKS.md, "Scale" section of 2026-11-30, budget mid, 1,000,000 facts (extrapolated column).
COSTS = (
    QueueCost("fuse", 1.4 + 12 + 3.8 + 21, 1.4 + 12 + 3.8 + 21, 2, "cache lookup + analysis + fusion + boosts/packing"),
    QueueCost("retrieve", 26 + 596 + 1035 + 0.0, 0.05 * (26 + 596 + 1035), 4, "semantic + keyword + graph + temporal"),
    QueueCost("rerank (CPU cross-encoder)", 1586, 1586, 8, "MiniLM-L6-sized cross-encoder, 300 pairs, CPU"),
    QueueCost("database (PostgreSQL)", 26 + 596 + 1035, 26 + 596 + 1035, 1, "the four strategies' queries"),
)


def slots(rate: float, cost: QueueCost) -> int:
    return math.ceil(rate * cost.slot_ms / 1000 / UTILISATION)


def cores(rate: float, cost: QueueCost) -> float:
    return rate * cost.cpu_ms / 1000 / UTILISATION


def table() -> str:
    head = "| queue | ms per recall (slot) | " + " | ".join(f"slots / cores at {r:,}/s" for r in RATES) + " |"
    rows = [head, "|:---|---:|" + "---:|" * len(RATES)]
    for c in COSTS:
        cells = " | ".join(f"{slots(r, c):,} / {cores(r, c):,.0f}" for r in RATES)
        rows.append(f"| {c.queue} | {c.slot_ms:,.0f} | {cells} |")
    return "\n".join(rows)


def plot(path: Path = DOCS / "sizing.png") -> Path:
    """Left: worker slots per queue; right: CPU cores (workers and PostgreSQL), against the rate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rates = [10 * 10 ** (i / 16) for i in range(0, 49)]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6), dpi=110)
    styles = {"fuse": "-", "retrieve": "--", "rerank (CPU cross-encoder)": "-.", "database (PostgreSQL)": ":"}
    for c in COSTS:
        if c.queue != "database (PostgreSQL)":
            left.plot(rates, [r * c.slot_ms / 1000 / UTILISATION for r in rates], styles[c.queue], label=c.queue)
        right.plot(rates, [cores(r, c) for r in rates], styles[c.queue], label=c.queue)
    for ax, title in ((left, "worker slots (concurrency) needed"), (right, "CPU cores needed")):
        for r in RATES:
            ax.axvline(r, color="grey", lw=0.6, ls=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("recalls per second (1M facts per bank, budget mid)")
        ax.set_title(f"{title}, at {UTILISATION:.0%} utilisation", fontsize=10)
        ax.grid(True, which="major", lw=0.4)
        ax.legend(fontsize=8)
    right.text(
        0.02,
        0.02,
        "retrieve workers: 5% of their slot time on CPU (assumed: they wait on PostgreSQL)\n"
        "rerank on a GPU: not measured (no GPU was available)",
        transform=right.transAxes,
        fontsize=7,
    )
    fig.suptitle("tempr sizing model: stage times from BENCHMARKS.md (1M facts: extrapolated)", fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(table())
    print(plot())
