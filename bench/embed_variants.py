"""The exports of all-MiniLM-L6-v2 side by side: texts/s, one query, and how far each moves the vectors.

    .venv/bin/python -m bench.embed_variants [--rounds 3] [--write]

Why: a quantised export is faster but writes vectors of its own space (``embedder.spaces``), so
choosing one is a trade of speed against recall. This prints the speed side of it on the texts
ingest embeds (the LoCoMo dev facts and, separately, their source chunks): texts/s at the default
batch size (median of ``--rounds``, variants interleaved within a round so machine load moves them
alike), one query's p50, and each variant's cosine to the exact vectors (mean and minimum over the
facts). The recall side is `tempr ranker train --cv-seeds 5` with ``TEMPR_EMBEDDER`` set to each
(BENCHMARKS.md, "The quantised embedders rechecked"). ``--write`` puts the table in BENCHMARKS.md (section
embed_variants).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.embed_batch import corpora
from bench.report import fmt, machine_line, table, write_section

KINDS = ("onnx", "onnx-int8-mixed", "onnx-int8")
QUERIES = 60


def query_p50_ms(embedder: Any, texts: Sequence[str]) -> float:
    took = []
    for text in texts[:QUERIES]:
        started = time.perf_counter()
        embedder.embed([text])
        took.append(time.perf_counter() - started)
    return statistics.median(took) * 1000


def measure(kinds: Sequence[str], rounds: int) -> list[dict[str, Any]]:
    from config.settings import get_settings
    from tempr.providers.embedder import make_embedder

    settings = get_settings()
    texts = corpora()
    models = {k: make_embedder(k, batch_size=settings.embed_batch_size, cache_dir=settings.models_dir) for k in kinds}
    exact = models[kinds[0]].embed(texts["facts"])
    rows: dict[str, dict[str, Any]] = {}
    for kind, model in models.items():
        cosine = (model.embed(texts["facts"]) * exact).sum(axis=1)
        rows[kind] = {"kind": kind, "cos_mean": float(np.mean(cosine)), "cos_min": float(np.min(cosine))}
        rows[kind] |= {f"{name}_rates": [] for name in texts} | {"query_ms": []}
    for _ in range(rounds):
        for kind, model in models.items():
            for name, group in texts.items():
                started = time.perf_counter()
                model.embed(group)
                rows[kind][f"{name}_rates"].append(len(group) / (time.perf_counter() - started))
            rows[kind]["query_ms"].append(query_p50_ms(model, texts["facts"]))
    for row in rows.values():
        for key in [k for k in row if k.endswith("_rates") or k == "query_ms"]:
            row[key] = statistics.median(row[key])
        print(
            f"{row['kind']:<18} facts {row['facts_rates']:6.0f}/s  chunks {row['chunks_rates']:6.0f}/s  "
            f"query {row['query_ms']:5.2f} ms  cosine {row['cos_mean']:.4f} (min {row['cos_min']:.4f})",
            flush=True,
        )
    return list(rows.values())


def render(rows: list[dict[str, Any]], rounds: int) -> str:
    base = rows[0]
    body = [
        [
            f"`{r['kind']}`",
            fmt(r["facts_rates"], 0),
            f"{r['facts_rates'] / base['facts_rates']:.2f}x",
            fmt(r["chunks_rates"], 0),
            f"{r['query_ms']:.2f}",
            f"{r['cos_mean']:.4f}",
            f"{r['cos_min']:.4f}",
        ]
        for r in rows
    ]
    return "\n".join(
        [
            "## The embedder's exports side by side (`python -m bench.embed_variants`)",
            "",
            f"One process, the runtime's default threads; texts/s at the default batch size (median of {rounds}"
            " rounds, variants interleaved); *query*: one text, p50 of 60; cosine to the exact vectors over"
            " the LoCoMo dev facts.",
            "",
            table(["embedder", "facts/s", "vs exact", "chunks/s", "query ms", "cosine mean", "cosine min"], body),
            "",
            machine_line(),
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--write", action="store_true", help="write the table to BENCHMARKS.md")
    args = ap.parse_args()
    rows = measure(KINDS, args.rounds)
    if args.write:
        write_section("embed_variants", render(rows, args.rounds))


if __name__ == "__main__":
    main()
