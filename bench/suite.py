"""The benchmarks as `tempr bench` runs them: presets (full / --quick) and `all` in one go.

`all` runs ingest, quality, latency and scale in that order; quality starts a worker fleet
per cross-validation fold, latency and scale share one (started once, stopped at the end);
scale reuses the latency run's single-client samples; a summary section holds the headline
numbers and each benchmark's wall time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import ingest, latency, quality, report, scale, stack
from bench.metrics import KS, percentile
from bench.progress import log

SECTIONS = ("summary", "quality", "chord", "latency", "scale", "ingest")
"""Their order in BENCHMARKS.md."""


@dataclass
class Options:
    quick: bool = False
    write: bool | None = None
    """None: write BENCHMARKS.md and plots for full runs only (a --quick run only prints)."""
    locomo: Path = quality.DEFAULT_LOCOMO
    conversations: list[str] | None = None
    questions: int | None = None
    via_workers: bool = True
    sizes: tuple[int, ...] | None = None
    facts: int | None = None
    bulk: bool = False

    @property
    def writes(self) -> bool:
        return (not self.quick) if self.write is None else self.write


def quality_config(o: Options) -> quality.QualityConfig:
    cfg = quality.QualityConfig(locomo_dir=o.locomo, via_workers=o.via_workers, write=o.writes, plots=o.writes)
    if o.quick:
        cfg.conversations, cfg.max_questions = ["26"], 20
    if o.conversations:
        cfg.conversations = o.conversations
    if o.questions is not None:
        cfg.max_questions = o.questions
    return cfg


def latency_config(o: Options) -> latency.LatencyConfig:
    cfg = latency.LatencyConfig(write=o.writes, plots=o.writes, bulk=o.bulk)
    if o.quick:
        cfg.sizes, cfg.budgets, cfg.concurrency = (1000, 2000), ("mid",), (1, 4)
        cfg.samples, cfg.rounds, cfg.cache_hits, cfg.overhead_pairs = {1: 6, 4: 8}, 1, 3, 3
    if o.sizes:
        cfg.sizes = o.sizes
    return cfg


def scale_config(o: Options) -> scale.ScaleConfig:
    cfg = scale.ScaleConfig(write=o.writes, plots=o.writes, bulk=o.bulk)
    if o.quick:
        cfg.sizes, cfg.budgets, cfg.samples, cfg.rerank_pairs = (1000, 2000), ("mid",), 4, 32
    if o.sizes:
        cfg.sizes = o.sizes
    return cfg


def ingest_config(o: Options) -> ingest.IngestConfig:
    cfg = ingest.IngestConfig(facts=o.facts or (300 if o.quick else 5000), write=o.writes)
    if o.quick:
        cfg.workers, cfg.peer = (1,), False
    return cfg


@dataclass
class Timed:
    wall_s: dict[str, float] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)


def run_all(o: Options) -> Timed:
    started = time.perf_counter()
    out = Timed()
    if o.writes:
        report.ensure_sections(SECTIONS)
    stack.services_up()
    t = time.perf_counter()
    out.results["ingest"] = ingest.main(ingest_config(o))
    out.wall_s["ingest"] = time.perf_counter() - t
    lat_cfg, scale_cfg = latency_config(o), scale_config(o)
    scale_cfg.sizes = tuple(lat_cfg.sizes)
    t = time.perf_counter()
    log("building the synthetic banks")
    built = latency.prepare_banks(lat_cfg.sizes, lat_cfg.seed, bulk=o.bulk)
    out.wall_s["banks"] = time.perf_counter() - t
    t = time.perf_counter()
    out.results["quality"] = quality.main(quality_config(o))
    out.wall_s["quality"] = time.perf_counter() - t
    fleet = stack.BenchWorkers(stack.default_fleet(), exclusive=True)
    try:
        fleet.start()
        t = time.perf_counter()
        out.results["latency"] = latency.main(lat_cfg, fleet, built)
        out.wall_s["latency"] = time.perf_counter() - t
        t = time.perf_counter()
        out.results["scale"] = scale.main(scale_cfg, out.results["latency"], fleet)
        out.wall_s["scale"] = time.perf_counter() - t
    finally:
        fleet.stop()
    out.wall_s["total"] = time.perf_counter() - started
    text = summary(out)
    print(text)
    if o.writes:
        report.write_section("summary", text)
    return out


def summary(out: Timed) -> str:
    lines = ["## Summary (`make bench` / `tempr bench all`)", ""]
    q = out.results.get("quality")
    if q is not None:
        main = quality.WORKERS if quality.WORKERS in q.variants() else quality.DEFAULT
        rows = [
            [f"tempr, {main}", *[report.fmt(q.recall(main, k)[0], 1) for k in KS]],
            [quality.DRAGON[0], *[str(quality.DRAGON[1][k]) for k in KS]],
        ]
        lines += [
            f"LoCoMo evidence recall@k (%), {len(q.asked)} questions:",
            "",
            report.table(["", *[f"R@{k}" for k in KS]], rows),
            "",
        ]
    lat = out.results.get("latency")
    if lat is not None:
        rows = []
        for (size, budget, conc), run in sorted(lat.runs.items()):
            if budget == "mid" and conc in (1, 8, 16):
                ok = [s.wall_ms for s in run.samples if not s.error]
                rows.append(
                    [f"{size:,}", conc, latency._fmt_ms(percentile(ok, 50)), latency._fmt_ms(percentile(ok, 95))]
                )
        lines += [
            "Recall latency through the workers, budget mid (ms):",
            "",
            report.table(["facts", "clients", "p50", "p95"], rows),
            "",
        ]
    ing = out.results.get("ingest")
    if ing is not None and ing.runs:
        parts = [f"{label}: {rep['facts_per_s']:.0f} facts/s" for label, rep in ing.runs.items()]
        lines += [f"Ingest of {ing.facts:,} facts: " + "; ".join(parts) + ".", ""]
    rows = [[k, f"{v / 60:.1f}"] for k, v in out.wall_s.items()]
    lines += ["Wall time of this run (minutes):", "", report.table(["part", "min"], rows), "", report.machine_line()]
    return "\n".join(lines)


def run_one(name: str, o: Options) -> Any:
    if name == "quality":
        return quality.main(quality_config(o))
    if name == "latency":
        return latency.main(latency_config(o))
    if name == "scale":
        return scale.main(scale_config(o))
    if name == "ingest":
        return ingest.main(ingest_config(o))
    if name == "all":
        return run_all(o)
    raise ValueError(f"unknown benchmark {name!r}")
