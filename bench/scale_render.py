"""The scale section of BENCHMARKS.md and its plot, from a ``bench.scale`` run (the measuring is there)."""

from __future__ import annotations

from typing import Any

from bench import bulk_bank, latency, report
from bench.metrics import percentile
from bench.scale import NEGLIGIBLE_MS, STAGES, TABLES, TARGET, ScaleConfig, ScaleResult, crossing, fit, target


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
