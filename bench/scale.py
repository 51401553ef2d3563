"""How latency and memory grow with bank size: measured at 10k and 100k facts, extrapolated to 1M.

Latency per stage comes from single-client recalls through the workers (each response's
``timings_ms``), so stages are timed without queueing behind other requests. Storage per
bank is each table's total size (heap + indexes, HNSW included) apportioned by the
bank's share of that table's rows. The 1M column is an EXTRAPOLATION, not a measurement:
each quantity is fitted with a power law through the two largest measured sizes
(t = a·n^b) and evaluated at 1,000,000; storage is extrapolated linearly (bytes per fact).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text

from bench import banks, latency, report, stack, synthetic
from bench.progress import bar, log
from tempr.store import bank_index

TARGET = 1_000_000


def target(sizes: list[int] | tuple[int, ...]) -> int:
    """The size the extrapolated column is for: 1M, or ten times the largest bank once 1M is measured."""
    return TARGET if max(sizes) < TARGET else 10 * max(sizes)


STAGES = (
    ("analyse", "analysis"),
    ("strategy.semantic", "semantic"),
    ("strategy.keyword", "keyword"),
    ("strategy.graph", "graph"),
    ("strategy.temporal", "temporal"),
    ("strategies", "strategies (wall)"),
    ("fuse", "fusion"),
    ("finish", "boosts + packing"),
    ("total", "total on workers"),
)
TABLES = (
    "memory_units",
    "memory_links",
    "unit_entities",
    "entities",
    "bm25_terms",
    "bm25_postings",
    "chunks",
    "documents",
)


@dataclass
class ScaleConfig:
    sizes: tuple[int, ...] = (10_000, 100_000)
    budgets: tuple[str, ...] = latency.BUDGETS
    samples: int = 16
    rerank_pairs: int = 300
    """Pairs for the cross-encoder cost estimate (the reranker's candidate cap); 0 skips it."""
    seed: int = synthetic.DEFAULT_SEED
    write: bool = True
    plots: bool = True
    bulk: bool = False
    """Build missing synthetic banks with ``bench.bulk_bank`` (facts, then index and links)."""


@dataclass
class ScaleResult:
    cfg: ScaleConfig
    samples: dict[tuple[int, str], list[latency.Sample]]
    storage: dict[int, dict[str, float]]
    rss: dict[str, float]
    settings: dict[str, str]
    machine: dict[str, Any]
    source: str
    fleet: list[str] = field(default_factory=list)
    rerank: dict[str, Any] = field(default_factory=dict)
    saturation: dict[tuple[int, str], tuple[float, int]] = field(default_factory=dict)
    """(size, budget) -> (best recalls/s, at clients), from the latency run when there was one."""


NEGLIGIBLE_MS = 0.5
"""Below this a stage is noise (e.g. a strategy that was skipped): it is not fitted."""


def fit(points: dict[int, float], at: int) -> tuple[float, float]:
    """Power law through the two largest sizes: (value at `at`, exponent b).

    Values at or below NEGLIGIBLE_MS (or NaN) are not fitted: the larger value is carried
    over with b = NaN.
    """
    (n1, y1), (n2, y2) = sorted(points.items())[-2:]
    if not (y1 > NEGLIGIBLE_MS and y2 > NEGLIGIBLE_MS) or n1 == n2:
        values = [v for v in (y1, y2) if v == v]
        return (max(values) if values else float("nan")), float("nan")
    b = math.log(y2 / y1) / math.log(n2 / n1)
    return y2 * (at / n2) ** b, b


def crossing(points: dict[int, float], limit: float) -> float | None:
    """Bank size at which the fitted power law reaches `limit` (None if it never grows)."""
    (n1, y1), (n2, y2) = sorted(points.items())[-2:]
    if not (y1 > NEGLIGIBLE_MS and y2 > NEGLIGIBLE_MS) or y2 <= y1:
        return None
    b = math.log(y2 / y1) / math.log(n2 / n1)
    return n2 * (limit / y2) ** (1 / b)


def storage(engine: Any, bank_ids: dict[int, str]) -> dict[int, dict[str, float]]:
    """Bytes per bank and table: the table's total size times the bank's share of its rows."""
    out: dict[int, dict[str, float]] = {n: {} for n in bank_ids}
    with engine.connect() as conn:
        for table in TABLES:
            total_bytes = int(conn.execute(text(f"SELECT pg_total_relation_size('{table}')")).scalar_one())
            total_rows = int(conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()) or 1
            for n, bank in bank_ids.items():
                rows = int(conn.execute(text(_ROWS[table]), {"b": bank}).scalar_one())
                out[n][table] = total_bytes * rows / total_rows
        hnsw = int(conn.execute(text("SELECT pg_relation_size('memory_units_embedding_hnsw')")).scalar_one())
        units = int(conn.execute(text("SELECT count(*) FROM memory_units WHERE ann_indexed")).scalar_one()) or 1
        for n, bank in bank_ids.items():
            rows = int(conn.execute(text(_ROWS["memory_units"]), {"b": bank}).scalar_one())
            own = conn.execute(
                text("SELECT pg_relation_size(to_regclass(:i))"), {"i": bank_index.index_name(bank)}
            ).scalar()
            # the bank's own index (tempr.store.bank_index) where it has one, else its share of the shared one
            out[n]["hnsw index (part of memory_units)"] = float(own) if own is not None else hnsw * rows / units
            out[n]["rows"] = rows
    return out


_ROWS = {
    "memory_units": "SELECT count(*) FROM memory_units WHERE bank_id = :b",
    "memory_links": "SELECT count(*) FROM memory_links l JOIN memory_units m ON m.id = l.from_unit_id WHERE m.bank_id = :b",
    "unit_entities": "SELECT count(*) FROM unit_entities ue JOIN memory_units m ON m.id = ue.unit_id WHERE m.bank_id = :b",
    "entities": "SELECT count(*) FROM entities WHERE bank_id = :b",
    "bm25_terms": "SELECT count(*) FROM bm25_terms WHERE bank_id = :b",
    "bm25_postings": "SELECT count(*) FROM bm25_postings WHERE bank_id = :b",
    "chunks": "SELECT count(*) FROM chunks WHERE bank_id = :b",
    "documents": "SELECT count(*) FROM documents WHERE bank_id = :b",
}


def _pss(proc: Any) -> int:
    """Proportional set size (shared pages split between their users), else RSS."""
    try:
        return int(proc.memory_full_info().pss)
    except Exception:  # noqa: BLE001 - no smaps access: fall back to RSS (over-counts shared memory)
        return int(proc.memory_info().rss)


def process_memory(fleet: stack.BenchWorkers | None, pg_dir: Any) -> dict[str, float]:
    """Memory (MiB, PSS) of the bench workers (main processes and children) and of PostgreSQL."""
    import psutil

    out: dict[str, float] = {}
    if fleet is not None:
        from tempr.services import process

        total = 0
        for spec in fleet.specs:
            pid = process.read_pid(fleet.detached.pidfile(spec.name))
            if pid and process.pid_alive(pid):
                proc = psutil.Process(pid)
                total += sum(_pss(p) for p in [proc, *proc.children(recursive=True)])
        out["workers"] = total / 2**20
    pg = 0
    for p in psutil.process_iter(["cmdline"]):
        try:
            cmd = " ".join(p.info["cmdline"] or [])
            if "postgres" in cmd and str(pg_dir) in cmd:
                pg += sum(_pss(c) for c in [p, *p.children(recursive=True)])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    out["postgres"] = pg / 2**20
    return out


def run(
    cfg: ScaleConfig, measured: latency.LatencyResult | None = None, fleet: stack.BenchWorkers | None = None
) -> ScaleResult:
    from workers.resources import get_resources

    stack.services_up()
    res = get_resources()
    latency.prepare_banks(cfg.sizes, cfg.seed, bulk=cfg.bulk)
    bank_of = {n: banks.bank_id(n, cfg.seed) for n in cfg.sizes}
    samples: dict[tuple[int, str], list[latency.Sample]] = {}
    source = "single-client samples of the latency benchmark in the same run"
    have = measured is not None and all((n, b, 1) in measured.runs for n in cfg.sizes for b in cfg.budgets)
    own = fleet is None and not have
    if own:
        fleet = stack.BenchWorkers(stack.default_fleet(), exclusive=True)
    try:
        if own:
            fleet.start()
        if have:
            assert measured is not None
            for n in cfg.sizes:
                for b in cfg.budgets:
                    samples[(n, b)] = [s for s in measured.runs[(n, b, 1)].samples if not s.error]
        else:
            source = f"{cfg.samples} single-client recalls per size and budget, interleaved"
            stack.clear_cache(list(bank_of.values()))
            reqs = latency.Requests(cfg.seed + 1)
            latency.warm_up(bank_of[min(cfg.sizes)], min(cfg.sizes), reqs, sum(s.concurrency for s in fleet.specs))
            with bar(cfg.samples * len(cfg.sizes) * len(cfg.budgets), "scale: 1-client recalls", "recall") as progress:
                for _i in range(cfg.samples):
                    for n in cfg.sizes:
                        for b in cfg.budgets:
                            s = latency.through_workers(bank_of[n], reqs.next(n, b))
                            if not s.error:
                                samples.setdefault((n, b), []).append(s)
                            progress.update(1)
        log("measuring storage and process memory")
        stored = storage(res.engine, bank_of)
        rss = process_memory(fleet, res.settings.pg_dir)
        with res.engine.connect() as conn:
            settings = {
                k: str(conn.execute(text(f"SHOW {k}")).scalar_one())
                for k in ("shared_buffers", "work_mem", "effective_cache_size")
            }
        described = fleet.fleet() if fleet is not None else (measured.fleet if measured else [])
    finally:
        if own and fleet is not None:
            fleet.stop()
    rerank: dict[str, Any] = {}
    if cfg.rerank_pairs:
        from bench import rerank_cost

        log(f"cross-encoder cost estimate: {cfg.rerank_pairs} pairs on CPU")
        rerank = rerank_cost.measure(cfg.rerank_pairs)
    saturation: dict[tuple[int, str], tuple[float, int]] = {}
    if measured is not None:
        for (n, b, c), r in measured.runs.items():
            if r.busy_s and n in cfg.sizes:
                rate = len(r.samples) / r.busy_s
                if rate > saturation.get((n, b), (0.0, 0))[0]:
                    saturation[(n, b)] = (rate, c)
    return ScaleResult(cfg, samples, stored, rss, settings, report.machine(), source, described, rerank, saturation)


def main(
    cfg: ScaleConfig, measured: latency.LatencyResult | None = None, fleet: stack.BenchWorkers | None = None
) -> ScaleResult:
    from bench.scale_render import plot, render

    started = time.perf_counter()
    result = run(cfg, measured, fleet)
    text = render(result) + f"\nScale benchmark wall time {time.perf_counter() - started:.0f} s.\n"
    print(text)
    dropped = sizes_it_would_drop(report.read_document(), cfg.sizes) if cfg.write or cfg.plots else []
    if dropped:
        log(
            f"BENCHMARKS.md's scale section was measured at {', '.join(f'{n:,}' for n in dropped)} facts too, "
            "which this run did not measure: it and its plot are kept, and this run's table only printed "
            f"(rerun with --sizes {','.join(str(n) for n in sorted(set(cfg.sizes) | set(dropped)))} to replace them)"
        )
        return result
    if cfg.plots:
        plot(result, report.REPO / "bench" / "plots" / "scale.png")
    if cfg.write:
        report.write_section("scale", text)
    return result


def sizes_it_would_drop(document: str, sizes: tuple[int, ...] | list[int]) -> list[int]:
    """The sizes ``document``'s scale section was measured at that a run of ``sizes`` does not measure.

    Such a run must not replace the section: the 1,000,000-fact column takes hours to build, and
    ``tempr bench all`` measures 10k and 100k only."""
    return sorted(recorded_sizes(document) - set(sizes))


_MEASURED_AT = re.compile(r"Measured at ([\d, ]+?) facts")


def recorded_sizes(document: str) -> set[int]:
    """The bank sizes the scale section of ``document`` was measured at (empty: no such section)."""
    match = _MEASURED_AT.search(report.read_section(document, "scale") or "")
    return {int(n.replace(",", "")) for n in re.findall(r"\d{1,3}(?:,\d{3})*", match.group(1))} if match else set()
