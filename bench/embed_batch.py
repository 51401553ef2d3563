"""Texts per second of the embedder at several batch sizes, on LoCoMo facts and their source chunks.

    .venv/bin/python -m bench.embed_batch [--rounds 4] [--sizes 8,16,32,64] [--write]

Why: the batch size (``TEMPR_EMBED_BATCH_SIZE``) is a speed choice with no effect on the vectors
(``tests/unit/test_embedder_onnx.py`` pins that), and on CPU a bigger batch is not faster: the
attention tensors of a 64-text batch outgrow the caches. The texts are those ingest embeds: the
facts of the LoCoMo dev conversations and, separately, their source turns (chunks, about twice as
long). Each size is timed ``--rounds`` times, sizes interleaved within a round so machine load
moves them alike; the median is reported. Once with one ONNX Runtime thread (what each process of
`tempr services up`'s ingest and analyse pools uses on 2 cores) and once with the runtime's
default (a single ingesting process). ``--write`` puts the table in BENCHMARKS.md (section
embed_batch).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

from bench import locomo
from bench.quality import DEFAULT_LOCOMO
from bench.report import fmt, machine_line, table, write_section


def corpora() -> dict[str, list[str]]:
    """LoCoMo facts and their distinct source chunks, in file order."""
    facts = [f for c in locomo.load(DEFAULT_LOCOMO.resolve()) for f in c.facts]
    chunks = list(dict.fromkeys(f["chunk"]["text"] for f in facts if f.get("chunk")))
    return {"facts": [f["text"] for f in facts], "chunks": chunks}


def rates(embedder: object, texts: Sequence[str], sizes: Sequence[int], rounds: int) -> dict[int, float]:
    """Median texts/s per batch size."""
    seen: dict[int, list[float]] = {s: [] for s in sizes}
    embedder.embed(list(texts[:16]))  # type: ignore[attr-defined]  # the session opened and warm
    for _ in range(rounds):
        for size in sizes:
            embedder.batch_size = size  # type: ignore[attr-defined]
            started = time.perf_counter()
            embedder.embed(list(texts))  # type: ignore[attr-defined]
            seen[size].append(len(texts) / (time.perf_counter() - started))
    return {s: statistics.median(v) for s, v in seen.items()}


def main() -> None:
    from config.settings import get_settings
    from tempr.providers.embedder import make_embedder

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--sizes", default="8,16,32,64")
    ap.add_argument("--write", action="store_true", help="write the table to BENCHMARKS.md")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    settings = get_settings()
    texts = corpora()
    rows = []
    for threads in (1, 0):
        embedder = make_embedder(settings.embedder, cache_dir=settings.models_dir, threads=threads or None)
        for name, group in texts.items():
            got = rates(embedder, group, sizes, args.rounds)
            best = max(got, key=got.__getitem__)
            label = "1" if threads else "runtime default"
            rows.append([label, f"{name} ({len(group):,})", *(fmt(got[s], 0) for s in sizes), str(best)])
            print(f"threads {label:<16} {name:<7}", "  ".join(f"{s}: {got[s]:.0f}" for s in sizes), flush=True)
    body = "\n".join(
        [
            "## Embedding batch size (`python -m bench.embed_batch`)",
            "",
            f"Embedder `{settings.embedder}`, texts/s (median of {args.rounds} rounds, sizes interleaved) by"
            " texts per model call; the LoCoMo dev facts and, separately, their source chunks. The default"
            f" (`TEMPR_EMBED_BATCH_SIZE`) is {settings.embed_batch_size}.",
            "",
            table(["ONNX threads", "texts", *(f"batch {s}" for s in sizes), "fastest"], rows),
            "",
            machine_line(),
        ]
    )
    if args.write:
        write_section("embed_batch", body)


if __name__ == "__main__":
    main()
