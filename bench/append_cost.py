"""Ingest into a bank that already holds memories: where the link search against the bank costs.

    .venv/bin/python -m bench.append_cost [--facts 4750] [--append 250] [--rounds 2] [--write]

Why: a fresh bank's links are found among the new facts alone, in memory, so `tempr bench ingest`
(fresh banks) never times the search against memories already stored. That search runs for every
later ingest into the bank and for each block after the first of a file's publish (blocks of
``TEMPR_INGEST_CHUNK_FACTS``). This times both on synthetic facts (``bench/synthetic.py``): a file of
``--facts`` imported in-process (`tempr ingest --in-process`'s path, blocks of 2,000), then
``--append`` more facts into that bank in one transaction, each with its ``link_semantic`` stage
(the search) and its ``embed`` stage beside it. ``--write`` puts the table in BENCHMARKS.md (section
append_cost). Uses the running services (`tempr services up`), as the other benchmarks do.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench import banks, stack
from bench.ingest import write_synthetic
from bench.report import fmt, machine_line, table, write_section

SECTION = "append_cost"


def one_round(deps: Any, big: Path, small: Path) -> dict[str, float]:
    from tempr.ingest import imports
    from tempr.ingest.facts import parse_jsonl
    from tempr.ingest.pipeline import ingest_facts

    bank = f"bench-append-{uuid.uuid4().hex[:8]}"
    try:
        started = time.perf_counter()
        report = imports.ingest_file(big, bank, deps, chunk_facts=2000)
        file_s = time.perf_counter() - started
        facts = list(parse_jsonl(small.read_text(encoding="utf-8").splitlines()))
        started = time.perf_counter()
        added = ingest_facts(bank, facts, deps)
        append_s = time.perf_counter() - started
    finally:
        banks.delete_bank(deps.engine, bank)
    return {
        "file_s": file_s,
        "file_links_s": float(report["stages"].get("link_semantic", 0.0)),
        "append_s": append_s,
        "append_links_s": added.stages.get("link_semantic", 0.0),
        "append_embed_s": added.stages.get("embed", 0.0),
    }


def measure(n_file: int, n_append: int, rounds: int) -> list[dict[str, float]]:
    from tempr.ingest.pipeline import IngestDeps
    from workers.resources import get_resources

    stack.services_up()
    res = get_resources()
    deps = IngestDeps(res.engine, res.embedder, res.extractor, res.settings)
    tmp = Path(tempfile.mkdtemp(prefix="tempr-append-"))
    big, small = tmp / "file.jsonl", tmp / "append.jsonl"
    write_synthetic(big, n_file, 7)
    write_synthetic(small, n_append, 8)
    lines = [json.loads(line) for line in small.read_text(encoding="utf-8").splitlines() if line.strip()]
    small.write_text("".join(json.dumps({**o, "id": f"later-{i}"}) + "\n" for i, o in enumerate(lines)))
    return [one_round(deps, big, small) for _ in range(rounds)]


def render(got: list[dict[str, float]], n_file: int, n_append: int) -> str:
    def cell(key: str) -> str:
        if key not in got[0]:
            return "–"
        return ", ".join(fmt(r[key], 2) for r in got) + f" (median {fmt(statistics.median(r[key] for r in got), 2)})"

    rows = [
        [
            f"a {n_file:,}-fact file, in process (blocks of 2,000)",
            cell("file_s"),
            cell("file_links_s"),
            cell("file_embed_s"),
        ],
        [f"{n_append:,} facts into that bank", cell("append_s"), cell("append_links_s"), cell("append_embed_s")],
    ]
    return "\n".join(
        [
            "## Ingest into a bank that holds memories (`python -m bench.append_cost`)",
            "",
            "Seconds per round; *links*: the `link_semantic` stage (each new fact's nearest memories among "
            "those already in the bank, and among the batch); *embed* beside it for scale (a file's report "
            "is its publish's, which embeds nothing: its facts were embedded while staged).",
            "",
            table(["what", "s", "links s", "embed s"], rows),
            "",
            machine_line(),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.append_cost", description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=4750)
    parser.add_argument("--append", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="write the section into BENCHMARKS.md")
    args = parser.parse_args(argv)
    text = render(measure(args.facts, args.append, args.rounds), args.facts, args.append)
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
