"""Recall latency and throughput through the real Celery path, on synthetic banks of 10k and 100k facts.

Closed-loop clients (threads, each waiting for its answer before asking again) send
recalls through ``tempr.client.recall_async(...).get()``: the chord on the workers.
Every timed recall is a cache miss (the benchmark banks' cache entries are dropped
first and every request carries its own query_timestamp); cache-hit latency is
measured separately by asking the same requests again.

Configurations (bank size x budget x concurrency) run in rounds: each round runs a
slice of every configuration, in a shuffled order, so machine noise spreads over all
of them instead of landing on whichever ran last. Percentiles are over all rounds.
"""

from __future__ import annotations

import random
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bench import banks, report, stack, synthetic
from bench.metrics import median, percentile
from bench.progress import bar, log

BUDGETS = ("low", "mid", "high")
REFERENCE = datetime(2026, 1, 1, tzinfo=UTC)
STAGE_ROWS: tuple[tuple[str, str], ...] = (
    ("queue.start", "queue wait: start task"),
    ("cache_lookup", "cache lookup"),
    ("analyse", "analysis (validate, embed, time windows)"),
    ("embed", "  of which: query embedding"),
    ("queue.strategies", "queue wait: strategy tasks (slowest)"),
    ("strategy.semantic", "strategy: semantic"),
    ("strategy.keyword", "strategy: keyword (BM25)"),
    ("strategy.graph", "strategy: graph"),
    ("strategy.temporal", "strategy: temporal"),
    ("strategies", "strategies, dispatch → last done"),
    ("queue.fuse", "queue wait: fusion callback"),
    ("fuse", "fusion (RRF)"),
    ("queue.rerank", "queue wait: rerank"),
    ("rerank", "rerank"),
    ("queue.finish", "queue wait: finish"),
    ("finish", "boosts + packing + response"),
    ("total", "total on the workers (enqueue → answer)"),
    ("wall", "client wall time"),
)


@dataclass
class Sample:
    wall_ms: float
    timings: dict[str, float]
    cache: str | None
    degraded: list[str]
    results: int
    error: str | None = None
    reranker: str | None = None


@dataclass
class Config:
    size: int
    budget: str
    concurrency: int

    @property
    def key(self) -> tuple[int, str, int]:
        return (self.size, self.budget, self.concurrency)


@dataclass
class LatencyConfig:
    sizes: Sequence[int] = (10_000, 100_000)
    budgets: Sequence[str] = BUDGETS
    concurrency: Sequence[int] = (1, 4, 8, 16)
    samples: dict[int, int] = field(default_factory=lambda: {1: 24, 4: 32, 8: 48, 16: 64})
    rounds: int = 2
    cache_hits: int = 20
    overhead_pairs: int = 30
    seed: int = synthetic.DEFAULT_SEED
    write: bool = True
    plots: bool = True
    bulk: bool = False
    """Build missing synthetic banks with ``bench.bulk_bank`` (facts, then index and links)."""


@dataclass
class RunStats:
    samples: list[Sample] = field(default_factory=list)
    busy_s: float = 0.0
    """Wall time of the batches, summed: requests / busy_s = throughput at this concurrency."""


@dataclass
class LatencyResult:
    cfg: LatencyConfig
    runs: dict[tuple[int, str, int], RunStats]
    hits: dict[int, list[Sample]]
    overhead: dict[str, list[float]]
    builds: dict[int, banks.BankBuild]
    fleet: list[str]
    machine: dict[str, Any]
    elapsed_s: float = 0.0


# --- clients ------------------------------------------------------------------------------------------


def through_workers(bank: str, request: Any, timeout: float = 120.0) -> Sample:
    from tempr.client import recall_async

    started = time.perf_counter()
    try:
        response = recall_async(bank, request).get(timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - a failed recall is a data point, not the end of the run
        return Sample((time.perf_counter() - started) * 1000, {}, None, [], 0, f"{type(exc).__name__}: {exc}")
    wall = (time.perf_counter() - started) * 1000
    return Sample(
        wall,
        dict(response.timings_ms),
        response.cache,
        list(response.degraded),
        len(response.results),
        reranker=response.reranker,
    )


def in_process(ctx: Any) -> Callable[[str, Any], Sample]:
    from tempr.recall.pipeline import recall

    def call(bank: str, request: Any) -> Sample:
        started = time.perf_counter()
        response = recall(bank, request, ctx)
        wall = (time.perf_counter() - started) * 1000
        return Sample(wall, dict(response.timings_ms), None, list(response.degraded), len(response.results))

    return call


def closed_loop(
    call: Callable[[str, Any], Sample], jobs: Sequence[tuple[str, Any]], concurrency: int, progress: Any = None
) -> tuple[list[Sample], float]:
    """Run jobs with `concurrency` clients, each sending its next request when its last one answered."""
    lock = threading.Lock()
    pending = list(reversed(jobs))
    out: list[Sample] = []

    def client() -> None:
        while True:
            with lock:
                if not pending:
                    return
                bank, request = pending.pop()
            sample = call(bank, request)
            with lock:
                out.append(sample)
            if progress is not None:
                progress.update(1)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for f in [pool.submit(client) for _ in range(concurrency)]:
            f.result()
    return out, time.perf_counter() - started


class Requests:
    """Unique requests: query j of the bank's query stream, with its own query_timestamp."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.counter = 0
        self.lock = threading.Lock()

    def next(self, size: int, budget: str) -> Any:
        from tempr.recall.models import RecallRequest

        with self.lock:
            j = self.counter
            self.counter += 1
        return RecallRequest(
            query=synthetic.query(j, size, self.seed), budget=budget, query_timestamp=REFERENCE + timedelta(seconds=j)
        )


# --- the run ------------------------------------------------------------------------------------------


def prepare_banks(sizes: Sequence[int], seed: int, *, bulk: bool = False) -> dict[int, banks.BankBuild]:
    """``bulk``: build missing banks with ``bench.bulk_bank`` (index and semantic links after the facts)."""
    from workers.resources import get_resources

    res = get_resources()
    cache = banks.make_cache(res)
    if bulk:
        from bench import bulk_bank

        return bulk_bank.ensure_banks(sizes, res, cache, seed).builds
    return {n: banks.ensure_own_index(res, banks.ensure_bank(n, res, cache, seed=seed)) for n in sorted(sizes)}


def warm_up(bank: str, size: int, reqs: Requests, fleet_children: int) -> None:
    """Until every worker child has loaded its models: rounds of concurrent recalls until they are quick."""
    for _ in range(5):
        jobs = [(bank, reqs.next(size, "mid")) for _ in range(max(4, 2 * fleet_children))]
        samples, _ = closed_loop(through_workers, jobs, max(4, fleet_children))
        errors = [s.error for s in samples if s.error]
        if errors:
            raise RuntimeError(f"warm-up recalls failed: {errors[0]}")
        walls = sorted(s.wall_ms for s in samples)
        if walls[-1] < max(3 * walls[len(walls) // 2], 1500):
            return


def run(
    cfg: LatencyConfig, fleet: stack.BenchWorkers | None = None, built: dict[int, banks.BankBuild] | None = None
) -> LatencyResult:
    """``built``: what an earlier step of the same run did to build the banks (reported here)."""
    from workers.resources import get_resources, recall_context

    started = time.perf_counter()
    stack.services_up()
    builds = prepare_banks(cfg.sizes, cfg.seed, bulk=cfg.bulk)
    for n, b in (built or {}).items():
        if n in builds and b.inserted:
            builds[n] = b
    bank_of = {n: banks.bank_id(n, cfg.seed) for n in cfg.sizes}
    stack.clear_cache(list(bank_of.values()))
    reqs = Requests(cfg.seed)
    own = fleet is None
    fleet = fleet or stack.BenchWorkers(stack.default_fleet(), exclusive=True)
    try:
        if own:
            fleet.start()
        children = sum(s.concurrency for s in fleet.specs)
        log("warming up the workers")
        warm_up(bank_of[min(cfg.sizes)], min(cfg.sizes), reqs, children)
        configs = [Config(n, b, c) for n in cfg.sizes for b in cfg.budgets for c in cfg.concurrency]
        runs = {c.key: RunStats() for c in configs}
        total = sum(cfg.samples[c.concurrency] for c in configs)
        rng = random.Random(cfg.seed)
        with bar(total, "latency through the workers", "recall") as progress:
            for r in range(cfg.rounds):
                order = configs[:]
                rng.shuffle(order)
                for c in order:
                    count = _share(cfg.samples[c.concurrency], cfg.rounds, r)
                    jobs = [(bank_of[c.size], reqs.next(c.size, c.budget)) for _ in range(count)]
                    samples, busy = closed_loop(through_workers, jobs, c.concurrency, progress)
                    runs[c.key].samples.extend(samples)
                    runs[c.key].busy_s += busy
        log("cache-hit latency")
        hits = {n: _cache_hits(bank_of[n], n, cfg, reqs) for n in cfg.sizes}
        log("chord overhead: in-process vs through the workers")
        overhead = _overhead(
            bank_of[min(cfg.sizes)], min(cfg.sizes), cfg, reqs, recall_context(reranker=get_resources().reranker)
        )
        described = fleet.fleet()
    finally:
        if own:
            fleet.stop()
    return LatencyResult(cfg, runs, hits, overhead, builds, described, report.machine(), time.perf_counter() - started)


def _share(total: int, rounds: int, r: int) -> int:
    return total // rounds + (1 if r < total % rounds else 0)


def _cache_hits(bank: str, size: int, cfg: LatencyConfig, reqs: Requests) -> list[Sample]:
    """Fill the cache with misses, then ask the same requests again (up to 3 passes) and keep the hits."""
    asked = [reqs.next(size, "mid") for _ in range(cfg.cache_hits)]
    closed_loop(through_workers, [(bank, q) for q in asked], 1)  # the misses that fill the cache
    hits: list[Sample] = []
    tried = 0
    for _ in range(3):
        samples, _ = closed_loop(through_workers, [(bank, q) for q in asked], 1)
        tried += len(samples)
        hits += [s for s in samples if s.cache == "hit"]
        if len(hits) >= cfg.cache_hits:
            break
    # the misses are kept out of the latency figures but counted: a repeat that missed is worth knowing about
    return hits + [Sample(0.0, {}, "miss", [], 0)] * (tried - len(hits))


def _overhead(bank: str, size: int, cfg: LatencyConfig, reqs: Requests, ctx: Any) -> dict[str, list[float]]:
    """The same requests in-process and through the workers, alternating one by one (which goes first too)."""
    local = in_process(ctx)
    for _ in range(3):  # load the embedder and fill the connection pool here first
        local(bank, reqs.next(size, "mid"))
    out: dict[str, list[float]] = {"in-process": [], "workers": [], "workers.total": []}
    with bar(2 * cfg.overhead_pairs, "chord overhead", "recall") as progress:
        for i in range(cfg.overhead_pairs):
            request = reqs.next(size, "mid")
            order = ("in-process", "workers") if i % 2 == 0 else ("workers", "in-process")
            for path in order:
                if path == "in-process":
                    out[path].append(local(bank, request).wall_ms)
                else:
                    s = through_workers(bank, request)
                    out[path].append(s.wall_ms)
                    out["workers.total"].append(s.timings.get("total", float("nan")))
                progress.update(1)
    return out


# --- reporting ------------------------------------------------------------------------------------------


def _fmt_ms(value: float) -> str:
    return report.fmt(value, 0) if value >= 10 else report.fmt(value, 1)


def stage_value(samples: list[Sample], key: str) -> float:
    values = []
    for s in samples:
        if key == "wall":
            values.append(s.wall_ms)
        elif key == "queue.strategies":
            waits = [v for k, v in s.timings.items() if k.startswith("queue.strategy.")]
            if waits:
                values.append(max(waits))
        elif key in s.timings:
            values.append(s.timings[key])
    return median(values) if values else float("nan")


def _rerankers(result: LatencyResult) -> str:
    """What ranked the timed answers (each response names it): the learned ranker by default."""
    names = sorted({x.reranker for r in result.runs.values() for x in r.samples if x.reranker})
    return ", ".join(f"`{n}`" for n in names) or "not recorded"


def render(result: LatencyResult) -> str:
    cfg = result.cfg
    lines = [
        "## Latency and throughput (through the workers)",
        "",
        f"Synthetic banks of {', '.join(f'{n:,}' for n in cfg.sizes)} facts (`bench/synthetic.py`, generator "
        f"v{synthetic.GENERATOR_VERSION}, seed {cfg.seed}: sentences about people, places, organisations and dates, "
        "real all-MiniLM-L6-v2 embeddings cached under `bench/.cache/`). Recalls go through `tempr.client.recall_async` "
        "→ the Celery chord → `.get()`; closed-loop clients; every timed recall is a cache miss. Configurations ran "
        f"interleaved in {cfg.rounds} rounds (shuffled order each round). Percentiles in ms of client wall time.",
        "",
        report.machine_line(result.machine) + f" Rerank stage: {_rerankers(result)}.",
        "",
        f"Fleet: {'; '.join(result.fleet)}. PostgreSQL and Redis on the same machine.",
        "",
    ]
    errors = sum(1 for r in result.runs.values() for s in r.samples if s.error)
    degraded = sum(1 for r in result.runs.values() for s in r.samples if s.degraded)
    rows = []
    for (size, budget, conc), run in sorted(
        result.runs.items(), key=lambda kv: (kv[0][0], BUDGETS.index(kv[0][1]), kv[0][2])
    ):
        ok = [s.wall_ms for s in run.samples if not s.error]
        rows.append(
            [
                f"{size:,}",
                budget,
                conc,
                len(ok),
                _fmt_ms(percentile(ok, 50)),
                _fmt_ms(percentile(ok, 95)),
                _fmt_ms(percentile(ok, 99)),
                report.fmt(len(run.samples) / run.busy_s if run.busy_s else float("nan"), 1),
            ]
        )
    lines += [
        "### Recall latency by bank size, budget and concurrent clients",
        "",
        report.table(["facts", "budget", "clients", "n", "p50", "p95", "p99", "recalls/s"], rows),
        "",
    ]
    lines += [
        f"Failed recalls: {errors}; degraded answers: {degraded}. recalls/s = requests ÷ wall time of that "
        "configuration's batches.",
        "",
    ]
    lines += ["### Throughput at saturation", ""]
    rows = []
    for size in cfg.sizes:
        for budget in cfg.budgets:
            best = max(
                (
                    (len(r.samples) / r.busy_s, c)
                    for (n, b, c), r in result.runs.items()
                    if n == size and b == budget and r.busy_s
                ),
                default=(float("nan"), 0),
            )
            rows.append([f"{size:,}", budget, report.fmt(best[0], 1), best[1]])
    lines += [report.table(["facts", "budget", "recalls/s (best)", "at clients"], rows), ""]
    lines += ["### Cache hits", ""]
    rows = []
    for size, samples in result.hits.items():
        walls = [s.wall_ms for s in samples if s.cache == "hit"]
        rows.append(
            [
                f"{size:,}",
                f"{len(walls)} of {len(samples)} repeats",
                _fmt_ms(percentile(walls, 50)),
                _fmt_ms(percentile(walls, 95)),
            ]
        )
    lines += [
        report.table(["facts", "hits", "p50", "p95"], rows),
        "",
        "Requests (budget mid, 1 client) asked once to fill the cache, then asked again (up to three passes) "
        "until enough came back as hits; percentiles are over the hits only. A hit is answered by the start "
        "task from Redis, with no analysis and no chord. A repeat that misses (counted in *hits*) was answered "
        "in full again: e.g. a worker started with other code or settings computes other cache keys, and a "
        "slow Redis call makes the cache skip itself for a while.",
        "",
    ]
    lines += _overhead_lines(result)
    lines += _stage_lines(result)
    lines += _ingest_lines(result)
    lines += ["![p50/p95 against bank size](bench/plots/latency_vs_size.png)", ""]
    return "\n".join(lines)


def _overhead_lines(result: LatencyResult) -> list[str]:
    o = result.overhead
    if not o.get("workers"):
        return []
    size = min(result.cfg.sizes)
    local, remote = o["in-process"], o["workers"]
    ratio = median(remote) / median(local) if median(local) else float("nan")
    rows = [
        [
            "in-process (`tempr.recall.pipeline.recall`, strategies on threads)",
            len(local),
            _fmt_ms(median(local)),
            _fmt_ms(percentile(local, 95)),
        ],
        [
            "through the workers (chord), client wall",
            len(remote),
            _fmt_ms(median(remote)),
            _fmt_ms(percentile(remote, 95)),
        ],
    ]
    return [
        f"### Chord overhead ({size:,} facts, budget mid, 1 client)",
        "",
        report.table(["path", "n", "p50", "p95"], rows),
        "",
        f"Same requests, alternating in-process and through the workers one by one in one run: the chord adds "
        f"{_fmt_ms(median(remote) - median(local))} ms at the median (×{ratio:.2f}): queue hops, JSON payloads, "
        "result-backend round trips, and the analysis and strategies running in separate processes.",
        "",
    ]


def _stage_lines(result: LatencyResult) -> list[str]:
    cols = [(n, b) for n in result.cfg.sizes for b in result.cfg.budgets]
    samples = {
        (n, b): [s for s in result.runs[(n, b, 1)].samples if not s.error] for n, b in cols if (n, b, 1) in result.runs
    }
    if not samples:
        return []
    rows = []
    for key, label in STAGE_ROWS:
        values = [stage_value(samples[c], key) if c in samples else float("nan") for c in cols]
        if all(v != v for v in values):
            continue
        rows.append([label, *[_fmt_ms(v) for v in values]])
    return [
        "### Per-stage breakdown (1 client, median ms)",
        "",
        report.table(["stage", *[f"{n // 1000}k {b}" for n, b in cols]], rows),
        "",
        "From each response's `timings_ms` (written by the chord's tasks). The four strategies run in parallel on "
        "the retrieve pool, so their sum exceeds their wall time. Queue waits are the time a task spent between "
        "being sent and starting.",
        "",
    ]


def _ingest_lines(result: LatencyResult) -> list[str]:
    built = [b for b in result.builds.values() if b.inserted or b.own_index_s]
    if not built:
        return [
            "The synthetic banks were already complete (built by an earlier run against the same database): "
            "their ingest was not timed in this run; see the ingest section for ingest rates.",
            "",
        ]
    rows = [
        [
            f"{b.n:,}",
            f"{b.inserted:,}",
            report.fmt(b.ingest_s, 0),
            report.fmt(b.facts_per_s, 0),
            report.fmt(b.embedded / b.embed_s, 0) if b.embed_s else "cached",
            report.fmt(b.own_index_s, 1) if b.own_index_s else "-",
        ]
        for b in built
    ]
    head = ["facts", "inserted", "ingest s", "facts/s (write path)", "embeddings/s (first time)", "own index s"]
    return [
        "### Building the banks (this run)",
        "",
        report.table(head, rows),
        "",
        "In-process `ingest_facts` in batches of 2,000 with precomputed embeddings and given entities"
        + (
            " and, built in bulk (`--bulk`, `bench.bulk_bank`), without semantic links: they are walked after the "
            "bank's own index and not counted here"
            if result.cfg.bulk
            else ""
        )
        + "; the embedding column is the model's rate when the cache was cold; *own index*: the bank's own "
        "HNSW index (`tempr.store.bank_index`, `CREATE INDEX CONCURRENTLY`), built after the facts.",
        "",
    ]


def plot(result: LatencyResult, path: Any) -> None:
    from bench import plots

    panels: dict[str, dict[str, dict[int, tuple[float, float]]]] = {}
    levels = sorted({c for (_, _, c) in result.runs})
    for conc in sorted({levels[0], levels[-1]}):
        series: dict[str, dict[int, tuple[float, float]]] = defaultdict(dict)
        for (size, budget, c), run in result.runs.items():
            if c == conc:
                ok = [s.wall_ms for s in run.samples if not s.error]
                series[budget][size] = (percentile(ok, 50), percentile(ok, 95))
        ordered = {b: series[b] for b in BUDGETS if b in series}
        panels[f"{conc} concurrent client{'s' if conc > 1 else ''}"] = ordered
    plots.latency_vs_size(panels, path, "Recall latency through the workers against bank size")


def render_chord(result: LatencyResult) -> str:
    """The chord's own summary (issue 4): end-to-end p50/p95 at 1 and 8 clients, cache hits, overhead."""
    size = min(result.cfg.sizes)
    rows = []
    for budget in result.cfg.budgets:
        for conc in (1, 8):
            run = result.runs.get((size, budget, conc))
            if run is None:
                continue
            ok = [s.wall_ms for s in run.samples if not s.error]
            rows.append([budget, conc, len(ok), _fmt_ms(percentile(ok, 50)), _fmt_ms(percentile(ok, 95))])
    hits = [s.wall_ms for s in result.hits.get(size, []) if s.cache == "hit"]
    o = result.overhead
    lines = [
        f"## The recall chord end to end ({size:,}-fact bank)",
        "",
        "`tempr.client.recall_async(bank, request).get()`: start task (cache lookup, analysis) → four strategy "
        "tasks on `retrieve` → fusion callback on `fuse` → answer. Client wall time in ms; closed-loop clients; "
        "cache misses. Taken from the latency run below (same samples).",
        "",
        report.machine_line(result.machine),
        "",
        report.table(["budget", "clients", "n", "p50", "p95"], rows),
        "",
    ]
    if hits:
        lines += [
            f"Cache hit (same request again, budget mid): p50 {_fmt_ms(percentile(hits, 50))} ms, "
            f"p95 {_fmt_ms(percentile(hits, 95))} ms ({len(hits)} requests).",
            "",
        ]
    if o.get("workers") and o.get("in-process"):
        local, remote = median(o["in-process"]), median(o["workers"])
        lines += [
            f"Chord overhead, same requests alternating in-process and through the workers in one run "
            f"(budget mid, 1 client, {len(o['workers'])} pairs): in-process p50 {_fmt_ms(local)} ms, through "
            f"the workers p50 {_fmt_ms(remote)} ms: +{_fmt_ms(remote - local)} ms (×{remote / local:.2f}).",
            "",
        ]
    return "\n".join(lines)


def main(
    cfg: LatencyConfig, fleet: stack.BenchWorkers | None = None, built: dict[int, banks.BankBuild] | None = None
) -> LatencyResult:
    result = run(cfg, fleet, built)
    chord_text, text = render_chord(result), render(result)
    print(chord_text)
    print()
    print(text)
    if cfg.plots:
        plot(result, report.REPO / "bench" / "plots" / "latency_vs_size.png")
    if cfg.write:
        report.write_section("chord", chord_text)
        report.write_section("latency", text)
    return result
