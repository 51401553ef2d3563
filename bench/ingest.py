"""Ingest throughput: a 5,000-fact JSONL file through `tempr ingest`, and the write path alone.

* ``tempr ingest`` runs as a subprocess on a generated JSONL file, exactly as a user
  would run it: validation, embeddings with the real model, entities (spaCy + rules when
  the file gives none), links and BM25 statistics, one transaction. Measured twice, with
  and without ``entities`` in the file. The command's own facts/s (from ``--json``) and
  the process's wall time (which adds start-up and model loading) are both reported.
* The write path alone: the same number of facts through ``ingest_facts`` in-process with
  precomputed (cached) embeddings and given entities.

Each measurement uses a fresh bank that is deleted afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import banks, report, synthetic
from bench.progress import log

OFFSET = 1_000_000
"""JSONL facts are synthetic facts OFFSET.. so their text is new to every bank and to the embedding cache."""


@dataclass
class IngestConfig:
    facts: int = 5000
    write: bool = True
    seed: int = synthetic.DEFAULT_SEED


@dataclass
class IngestResult:
    cfg: IngestConfig
    cli: dict[str, dict[str, Any]] = field(default_factory=dict)
    write_path: dict[str, Any] = field(default_factory=dict)
    table_rows: int = 0
    machine: dict[str, Any] = field(default_factory=dict)


def write_jsonl(path: Path, n: int, seed: int, *, entities: bool) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i in range(OFFSET, OFFSET + n):
            fact = synthetic.fact(i, seed)
            fact["id"] = f"jsonl-{i}"
            if not entities:
                fact.pop("entities")
            out.write(json.dumps(fact) + "\n")


def run_cli(path: Path, bank: str) -> dict[str, Any]:
    script = Path(sys.executable).with_name("tempr")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "tempr.cli.main"]
    cmd = [*head, "ingest", "--bank", bank, str(path), "--json"]
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"tempr ingest failed ({done.returncode}): {done.stderr[-2000:]}")
    rep = json.loads(done.stdout.strip().splitlines()[-1])
    return {**rep, "wall_s": round(wall, 1)}


def run(cfg: IngestConfig) -> IngestResult:
    from bench import stack
    from workers.resources import get_resources

    stack.services_up()
    res = get_resources()
    result = IngestResult(cfg, machine=report.machine())
    nonce = uuid.uuid4().hex[:8]
    with tempfile.TemporaryDirectory(prefix="tempr-bench-ingest-") as tmp:
        for label, with_entities in (
            ("entities extracted (spaCy + rules)", False),
            ("entities given in the file", True),
        ):
            path = Path(tmp) / f"facts-{int(with_entities)}.jsonl"
            write_jsonl(path, cfg.facts, cfg.seed, entities=with_entities)
            bank = f"bench-ingest-{nonce}-{int(with_entities)}"
            log(f"tempr ingest of {cfg.facts:,} facts ({label})")
            try:
                result.cli[label] = run_cli(path, bank)
            finally:
                banks.delete_bank(res.engine, bank)
    bank = f"bench-ingest-{nonce}-write"
    log(f"write path: {cfg.facts:,} facts with cached embeddings")
    try:
        build = banks.ensure_bank(cfg.facts, res, banks.make_cache(res), seed=cfg.seed, bank=bank)
        result.write_path = {
            "facts": build.inserted,
            "seconds": round(build.ingest_s, 1),
            "facts_per_s": round(build.facts_per_s, 1),
        }
    finally:
        banks.delete_bank(res.engine, bank)
    from sqlalchemy import text

    with res.engine.connect() as conn:
        result.table_rows = int(conn.execute(text("SELECT count(*) FROM memory_units")).scalar_one())
    result.machine = report.machine()
    return result


def render(result: IngestResult) -> str:
    n = result.cfg.facts
    rows = []
    for label, rep in result.cli.items():
        rows.append(
            [
                f"`tempr ingest`, {label}",
                f"{rep['inserted']:,}",
                report.fmt(rep["elapsed_s"], 1),
                report.fmt(rep["facts_per_s"], 0),
                report.fmt(rep["wall_s"], 1),
                report.fmt(rep["inserted"] / rep["wall_s"], 0),
            ]
        )
    w = result.write_path
    if w:
        rows.append(
            [
                "write path only (`ingest_facts`, cached embeddings, entities given)",
                f"{w['facts']:,}",
                report.fmt(w["seconds"], 1),
                report.fmt(w["facts_per_s"], 0),
                "–",
                "–",
            ]
        )
    return "\n".join(
        [
            "## Ingest throughput",
            "",
            f"A {n:,}-fact JSONL file (synthetic facts, `bench/synthetic.py`) ingested with `tempr ingest --bank B FILE "
            "--json` into a fresh bank, deleted afterwards. *ingest s* and *facts/s* are the command's own report "
            "(validation done, then embed, entities, links, BM25 statistics and the transaction); *process s* adds "
            "interpreter start-up and model loading.",
            "",
            report.machine_line(result.machine),
            "",
            report.table(["what", "facts", "ingest s", "facts/s", "process s", "facts/s incl. start-up"], rows),
            "",
            f"Other banks in the database during this run: {result.table_rows:,} facts. Semantic links are an HNSW k-NN "
            "query per new fact over the one index all banks share, so ingest slows as the database grows; the "
            "latency section times the write path again while building the 10k and 100k banks.",
        ]
    )


def main(cfg: IngestConfig) -> IngestResult:
    result = run(cfg)
    text = render(result)
    print(text)
    if cfg.write:
        report.write_section("ingest", text)
    return result
