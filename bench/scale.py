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

from bench import banks, bulk_bank, latency, report, stack, synthetic
from bench.metrics import percentile
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


def _stage_points(result: ScaleResult, budget: str, key: str) -> dict[int, float]:
    return {n: latency.stage_value(result.samples.get((n, budget), []), key) for n in result.cfg.sizes}


def render(result: ScaleResult) -> str:
    cfg = result.cfg
    sizes = list(cfg.sizes)
    TARGET = target(sizes)  # noqa: N806 - the module constant, or past it once measured
    lines = [
        "## Scale: latency and memory against bank size",
        "",
        f"Measured at {', '.join(f'{n:,}' for n in sizes)} facts (synthetic banks, real embeddings); the "
        f"{_built(cfg)}**{TARGET:,} column is extrapolated, not measured**: each row is fitted with a power law t = a·n^b "
        f"through the two largest measured sizes (exponent b shown), storage linearly. Latencies: median ms of "
        f"{result.source}, from the responses' `timings_ms`.",
        "",
        report.machine_line(result.machine),
        "",
    ]
    dominant: dict[str, tuple[str, float]] = {}
    for budget in cfg.budgets:
        rows = []
        for key, label in STAGES:
            pts = _stage_points(result, budget, key)
            if all(v != v for v in pts.values()):
                continue
            ext, b = fit(pts, TARGET)
            rows.append([label, *[latency._fmt_ms(pts[n]) for n in sizes], f"*{latency._fmt_ms(ext)}*", _b(b)])
        walls = {n: [s.wall_ms for s in result.samples.get((n, budget), [])] for n in sizes}
        p50 = {n: percentile(walls[n], 50) for n in sizes}
        p95 = {n: percentile(walls[n], 95) for n in sizes}
        for label, pts in (("client wall p50", p50), ("client wall p95", p95)):
            ext, b = fit(pts, TARGET)
            rows.append([f"**{label}**", *[latency._fmt_ms(pts[n]) for n in sizes], f"*{latency._fmt_ms(ext)}*", _b(b)])
        lines += [
            f"### Budget {budget}: median ms per stage",
            "",
            report.table(["stage", *[f"{n:,}" for n in sizes], f"{TARGET:,} (extrapolated)", "b"], rows),
            "",
        ]
        biggest = sizes[-1]
        cands = {
            label: latency.stage_value(result.samples.get((biggest, budget), []), key)
            for key, label in STAGES
            if key not in ("strategies", "total")
        }
        cands = {k: v for k, v in cands.items() if v == v}
        if cands:
            name = max(cands, key=lambda k: cands[k])
            dominant[budget] = (name, cands[name])
    lines += _storage_lines(result)
    lines += _verdict(result, dominant)
    lines += ["![stage latency and storage against bank size](bench/plots/scale.png)", ""]
    return "\n".join(lines)


def _built(cfg: ScaleConfig) -> str:
    if not cfg.bulk:
        return ""
    return (
        "Banks built in bulk (`--bulk`, `bench/bulk_bank.py`: the facts by ingest's own code without "
        "semantic links, then one CREATE INDEX, then each fact's semantic links by ingest's HNSW query, or "
        f"for a bank of {bulk_bank.IVF_MIN_FACTS:,} facts or more by exact top k within an inverted-file "
        "partition of its vectors, `bench/ivf_links.py`); the "
    )


def _storage_lines(result: ScaleResult) -> list[str]:
    sizes = list(result.cfg.sizes)
    TARGET = target(sizes)  # noqa: N806
    keys = [*TABLES, "hnsw index (part of memory_units)"]
    rows = []
    for key in keys:
        pts = {n: result.storage[n].get(key, 0.0) for n in sizes}
        per_fact = pts[sizes[-1]] / max(result.storage[sizes[-1]]["rows"], 1)
        rows.append([key, *[_mib(pts[n]) for n in sizes], f"*{_mib(per_fact * TARGET)}*"])
    totals = {n: sum(result.storage[n].get(t, 0.0) for t in TABLES) for n in sizes}
    per_fact = totals[sizes[-1]] / max(result.storage[sizes[-1]]["rows"], 1)
    rows.append(["**total**", *[f"**{_mib(totals[n])}**" for n in sizes], f"***{_mib(per_fact * TARGET)}***"])
    rss = ", ".join(f"{k} {v:,.0f} MiB" for k, v in result.rss.items())
    return [
        "### Storage per bank (MiB, heap + indexes)",
        "",
        report.table(["table", *[f"{n:,}" for n in sizes], f"{TARGET:,} (linear)"], rows),
        "",
        f"≈ {per_fact / 1024:.1f} KiB per fact at {sizes[-1]:,}. Memory after the run (PSS): {rss} "
        f"(PostgreSQL shared_buffers {result.settings.get('shared_buffers')}, work_mem {result.settings.get('work_mem')}).",
        "",
    ]


def _b(b: float) -> str:
    return "–" if b != b else f"{b:.2f}"


def _size(n: float) -> str:
    return f"about {n:,.0f} facts" if n <= 100 * TARGET else "beyond 100M facts (far outside the measured range)"


def _mib(value: float) -> str:
    return f"{value / 2**20:,.1f}"


def _verdict(result: ScaleResult, dominant: dict[str, tuple[str, float]]) -> list[str]:
    sizes = list(result.cfg.sizes)
    TARGET = target(sizes)  # noqa: N806
    out = ["### Where the time goes, and where it breaks", ""]
    for budget, (name, value) in dominant.items():
        out.append(
            f"- Budget {budget}: at {sizes[-1]:,} facts the slowest stage is **{name}** "
            f"({latency._fmt_ms(value)} ms median)."
        )
    shrinking = [
        label
        for key, label in STAGES[1:5]
        for b in [
            fit(_stage_points(result, "mid" if "mid" in result.cfg.budgets else result.cfg.budgets[0], key), TARGET)[1]
        ]
        if b == b and b < 0
    ]
    if "semantic" in shrinking:
        out.append(
            f"- The semantic strategy is *faster* on the bigger bank. A bank searched through the HNSW index "
            f"that banks without one of their own share, holding a small share of it ({sizes[0]:,} of the "
            f"{sum(result.storage[n]['rows'] for n in sizes):,}+ facts here), makes pgvector's filtered "
            "iterative scan walk through many other banks' neighbours before it has collected its budget of "
            "candidates; a bank's own index (`tempr.store.bank_index`, every bank past 5,000 memories once "
            "built) walks only its own graph."
        )
    if "mid" in result.cfg.budgets:
        walls = {n: percentile([s.wall_ms for s in result.samples.get((n, "mid"), [])], 95) for n in sizes}
        for limit_s, what in (
            (10.0, "the strategy soft limit (TEMPR_STRATEGY_TIMEOUT_S = 10 s)"),
            (30.0, "the default recall deadline (TEMPR_RECALL_TIMEOUT_S = 30 s)"),
        ):
            n = crossing(walls, limit_s * 1000)
            if n is not None:
                out.append(f"- Budget mid, one client: the fitted p95 reaches {what} at {_size(n)} (extrapolated).")
        for key, label in STAGES[1:5]:
            pts = _stage_points(result, "mid", key)
            n = crossing(pts, 10_000.0)
            if n is not None:
                out.append(
                    f"- Budget mid: the {label} strategy alone would pass the 10 s strategy limit at "
                    f"{_size(n)} (extrapolated)."
                )
    if result.saturation:
        n = sizes[-1]
        parts = [
            f"{b} {rate:.1f}/s"
            for (size, b), (rate, _) in sorted(
                result.saturation.items(),
                key=lambda kv: latency.BUDGETS.index(kv[0][1]) if kv[0][1] in latency.BUDGETS else 9,
            )
            if size == n
        ]
        mid = result.saturation.get((n, "mid"))
        out.append(
            f"- Under load: at {n:,} facts the fleet saturates at {', '.join(parts)} (recalls per second, "
            "best over the client counts measured); beyond that, extra clients only queue, and latency grows "
            "linearly with them (latency ≈ clients ÷ throughput)."
        )
        if mid:
            out.append(
                f"  At budget mid that puts the 30 s deadline at about {mid[0] * 30:,.0f} concurrent clients "
                "on this 2-core machine; more workers only help with more cores (PostgreSQL and the query "
                "embedding share the same CPUs here)."
            )
    if result.rerank:
        r = result.rerank
        out.append(
            f"- Reranking: these figures use the RRF fallback (no cross-encoder ships with tempr), so the rerank "
            f"stage costs nothing. A {r['model']} scores {r['pairs']} (query, memory) pairs (300 is the default "
            f"candidate cap, TEMPR_RERANKER_MAX_CANDIDATES) in **{latency._fmt_ms(r['ms'])} ms** on this machine's CPU "
            f"(median of {len(r['runs'])}, batch {r['batch_size']}; timing only, its scores are meaningless): "
            "with a cross-encoder on CPU, reranking would be the dominant stage at every bank size, since its "
            "cost depends on the candidate count, not the bank size. This task had no GPU; on a GPU that "
            "stage is expected to be far cheaper, but no GPU figure was measured."
        )
    hnsw = result.storage[sizes[-1]].get("hnsw index (part of memory_units)", 0.0)
    rows = max(result.storage[sizes[-1]]["rows"], 1)
    out.append(
        f"- Memory: the HNSW index takes ≈ {hnsw / rows:,.0f} bytes per fact, ≈ {_mib(hnsw / rows * TARGET)} MiB "
        f"at {TARGET:,}; once the index no longer fits in shared_buffers/page cache, semantic search turns "
        "I/O-bound. Each bank past 5,000 memories has an HNSW index of its own (`tempr.store.bank_index`), "
        "so a search walks one bank's graph; what has to stay in memory is the indexes of the banks being "
        "searched."
    )
    out.append("")
    return out


def plot(result: ScaleResult, path: Any) -> None:
    from bench import plots

    budget = "mid" if "mid" in result.cfg.budgets else result.cfg.budgets[0]
    stages = {label: _stage_points(result, budget, key) for key, label in STAGES if key != "strategies"}
    stages = {k: v for k, v in stages.items() if all(x == x and x > NEGLIGIBLE_MS for x in v.values())}
    sizes = list(result.cfg.sizes)
    TARGET = target(sizes)  # noqa: N806
    ext = {k: {TARGET: fit(v, TARGET)[0]} for k, v in stages.items()}
    keep = ("memory_units", "hnsw index (part of memory_units)", "memory_links", "unit_entities")
    store = {k: {n: result.storage[n].get(k, 0.0) / 2**20 for n in sizes} for k in keep}
    store["total"] = {n: sum(result.storage[n].get(t, 0.0) for t in TABLES) / 2**20 for n in sizes}
    store_ext = {}
    for k, v in store.items():
        per_fact = v[sizes[-1]] / max(result.storage[sizes[-1]]["rows"], 1)
        store_ext[k] = {TARGET: per_fact * TARGET}
    plots.scale_figure(
        stages,
        ext,
        store,
        store_ext,
        path,
        f"tempr at scale: measured sizes, and {TARGET:,} facts extrapolated (dotted)",
    )


def main(
    cfg: ScaleConfig, measured: latency.LatencyResult | None = None, fleet: stack.BenchWorkers | None = None
) -> ScaleResult:
    started = time.perf_counter()
    result = run(cfg, measured, fleet)
    text = render(result) + f"\nScale benchmark wall time {time.perf_counter() - started:.0f} s.\n"
    print(text)
    if cfg.plots:
        plot(result, report.REPO / "bench" / "plots" / "scale.png")
    if cfg.write:
        if dropped := sizes_it_would_drop(report.read_document(), cfg.sizes):
            log(
                f"BENCHMARKS.md's scale section was measured at {', '.join(f'{n:,}' for n in dropped)} facts too, "
                "which this run did not measure: it is kept, and this run's table only printed "
                f"(rerun with --sizes {','.join(str(n) for n in sorted(set(cfg.sizes) | set(dropped)))} to replace it)"
            )
        else:
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
