"""tempr beside the Hindsight 1.1 peer: recall latency and throughput over HTTP, same facts, one run.

``tempr bench latency --peer hindsight``. Both servers hold the LoCoMo dev banks (the peer's
converter writes tempr's ``facts.jsonl`` and Hindsight's import archive from the same facts) and
are asked the same questions over HTTP, alternating request by request (tempr first on even
questions, the peer first on odd ones), so machine load lands on both alike:

* **misses**: every tempr request carries its own ``query_timestamp`` (microseconds apart, so the
  answer is the same but the cache key is new); Hindsight has no result cache.
* **hits**: the same requests again (tempr answers from its cache; the peer recomputes).
* **throughput**: 16 closed-loop clients for a fixed time per system, alternating systems in short
  slices; CPU time summed over every process of each stack (gateway/server, workers, Redis,
  PostgreSQL) gives CPU-ms per recall.

The peer is benchmark tooling (``../shared/bench/peer``, installed with ``hindsight_peer.sh
install``); this module is never part of the test suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import ingest_peer, report, stack
from bench.metrics import median, percentile, recall_at_k
from bench.progress import bar, log
from bench.stack_procs import cpu_by_process, cpu_snapshot, peer_processes, tempr_processes

TEMPR, PEER = "tempr", "hindsight"


@dataclass
class PeerLatencyConfig:
    questions: int = 300
    hits: int = 150
    clients: int = 16
    throughput_s: float = 40.0
    budget: str = "mid"
    write: bool = True


@dataclass
class Call:
    ms: float
    ok: bool
    timings: dict[str, float] = field(default_factory=dict)
    ranked: list[list[str]] = field(default_factory=list)
    cache: str | None = None


@dataclass
class PeerLatencyResult:
    misses: dict[str, list[Call]]
    hits: dict[str, list[Call]]
    evidence: list[list[str]]
    throughput: dict[str, dict[str, Any]]
    layout: list[str]
    loads: dict[str, tuple[float, float, float]]
    machine: dict[str, Any]


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _dia_ids(result: dict[str, Any], by_text: dict[str, list[str]]) -> list[str]:
    """A result's LoCoMo turn ids: from its metadata (tempr keeps it), else by its text (the peer's
    document-transfer import does not return metadata: its text is the fact's, maybe decorated)."""
    meta = result.get("metadata") or {}
    ids = [meta["dia_id"]] if meta.get("dia_id") else []
    extra = meta.get("dia_ids") or []
    ids += extra.split(",") if isinstance(extra, str) else list(extra)
    if ids:
        return ids
    key = _norm(result.get("text") or "")
    if key in by_text:
        return by_text[key]
    return next((v for k, v in by_text.items() if key.startswith(k) or k.startswith(key)), [])


def text_index(bank_dirs: list[Path]) -> dict[str, dict[str, list[str]]]:
    """bank -> normalised fact text -> its turn ids, from each bank's facts.jsonl."""
    import json

    out: dict[str, dict[str, list[str]]] = {}
    for d in bank_dirs:
        index: dict[str, list[str]] = {}
        for line in (d / "facts.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                fact = json.loads(line)
                index.setdefault(_norm(fact["text"]), _dia_ids({"metadata": fact.get("metadata")}, {}))
        out[d.name] = index
    return out


class Server:
    """One recall route over HTTP (a keep-alive connection per thread)."""

    def __init__(
        self, name: str, base_url: str, by_text: dict[str, dict[str, list[str]]], headers: dict[str, str] | None = None
    ) -> None:
        self.name, self.base_url, self.by_text, self.headers = name, base_url, by_text, headers or {}
        self._local = threading.local()

    def _client(self) -> Any:
        import httpx

        if not hasattr(self._local, "client"):
            self._local.client = httpx.Client(base_url=self.base_url, headers=self.headers, timeout=120)
        return self._local.client

    def recall(self, bank: str, body: dict[str, Any]) -> Call:
        started = time.perf_counter()
        try:
            r = self._client().post(f"/v1/default/banks/{bank}/memories/recall", json=body)
            data = r.json()
        except Exception:  # noqa: BLE001 - a failed request is a data point
            return Call((time.perf_counter() - started) * 1000, False)
        ms = (time.perf_counter() - started) * 1000
        if r.status_code != 200:
            return Call(ms, False)
        ranked = [_dia_ids(x, self.by_text.get(bank, {})) for x in data.get("results") or []]
        return Call(ms, True, dict(data.get("timings_ms") or {}), ranked, data.get("cache"))


def _body(q: dict[str, Any], budget: str, stamp: str | None) -> dict[str, Any]:
    return {
        "query": q["question"],
        "budget": budget,
        "max_tokens": 4096,
        "query_timestamp": stamp or q["query_timestamp"],
    }


def _unique_stamp(q: dict[str, Any], i: int) -> str:
    """The question's own 'now', moved by i microseconds: a new cache key, the same answer."""
    from datetime import datetime, timedelta

    base = datetime.fromisoformat(q["query_timestamp"])
    return (base + timedelta(microseconds=i + 1 + int(time.time()) % 1000 * 1000)).isoformat()


def interleaved(servers: dict[str, Server], questions: list[dict[str, Any]], budget: str) -> dict[str, list[Call]]:
    """Misses: each question to both servers, alternating which goes first."""
    out: dict[str, list[Call]] = {name: [] for name in servers}
    names = list(servers)
    progress = bar(len(questions), "misses, interleaved", "q")
    for i, q in enumerate(questions):
        stamp = _unique_stamp(q, i)
        for name in names if i % 2 == 0 else reversed(names):
            out[name].append(servers[name].recall(q["bank"], _body(q, budget, stamp if name == TEMPR else None)))
        progress.update(1)
    progress.close()
    return out


def repeated(servers: dict[str, Server], questions: list[dict[str, Any]], budget: str) -> dict[str, list[Call]]:
    """Hits: ask each question once unmeasured (tempr caches it), then again, alternating."""
    for q in questions:
        servers[TEMPR].recall(q["bank"], _body(q, budget, None))
    out: dict[str, list[Call]] = {name: [] for name in servers}
    names = list(servers)
    for i, q in enumerate(questions):
        for name in names if i % 2 == 0 else reversed(names):
            out[name].append(servers[name].recall(q["bank"], _body(q, budget, None)))
    return out


def saturate(
    server: Server,
    questions: list[dict[str, Any]],
    clients: int,
    seconds: float,
    budget: str,
    processes: Callable[[], dict[int, str]],
) -> tuple[int, int, float, dict[str, float]]:
    """Closed loop: ``clients`` threads asking misses for ``seconds``; (done, failed, wall s, CPU s by process)."""
    stop = time.monotonic() + seconds
    counts = [0, 0]
    lock = threading.Lock()
    offset = int(time.time() * 1000) % 100_000 * 1000

    def client(c: int) -> None:
        i = c
        while time.monotonic() < stop:
            q = questions[i % len(questions)]
            stamp = _unique_stamp(q, offset + i) if server.name == TEMPR else None
            call = server.recall(q["bank"], _body(q, budget, stamp))
            with lock:
                counts[0 if call.ok else 1] += 1
            i += clients

    roles = processes()
    cpu0, t0 = cpu_snapshot(list(roles)), time.perf_counter()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    roles = {**roles, **processes()}  # a process born during the slice counts in full
    return counts[0], counts[1], wall, cpu_by_process(cpu0, cpu_snapshot(list(roles)), roles)


def throughput(
    servers: dict[str, Server],
    questions: list[dict[str, Any]],
    cfg: PeerLatencyConfig,
    processes: dict[str, Callable[[], dict[int, str]]],
) -> dict[str, dict[str, Any]]:
    """Alternating slices (A B B A) per system; totals over the slices, CPU also per process."""
    order = [TEMPR, PEER, PEER, TEMPR]
    sums = {name: [0.0, 0.0, 0.0] for name in servers}
    cpu: dict[str, dict[str, float]] = {name: {} for name in servers}
    for name in order:
        log(f"throughput: {name}, {cfg.clients} clients, {cfg.throughput_s / 2:.0f} s")
        done, failed, wall, by_process = saturate(
            servers[name], questions, cfg.clients, cfg.throughput_s / 2, cfg.budget, processes[name]
        )
        sums[name] = [sums[name][0] + done, sums[name][1] + failed, sums[name][2] + wall]
        for role, seconds in by_process.items():
            cpu[name][role] = cpu[name].get(role, 0.0) + seconds
    out: dict[str, dict[str, Any]] = {}
    for name, (done, failed, wall) in sums.items():
        per_recall = {role: 1000 * s / done for role, s in cpu[name].items()} if done else {}
        out[name] = {
            "recalls": done,
            "failed": failed,
            "per_s": done / wall if wall else float("nan"),
            "cpu_ms_per_recall": sum(per_recall.values()) if done else float("nan"),
            "cpu_ms_by_process": per_recall,
        }
    return out


def _load() -> tuple[float, float, float]:
    return os.getloadavg()


def start_gateway(port: int, log_path: Path) -> subprocess.Popen[bytes]:
    child = subprocess.Popen(
        [sys.executable, "-m", "tempr.cli.main", "api", "--port", str(port)],
        stdout=log_path.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code < 500:
                return child
        except httpx.HTTPError:
            time.sleep(0.3)
    child.terminate()
    raise RuntimeError(f"the tempr gateway did not start on port {port}; see {log_path}")


def load_tempr(bank_dirs: list[Path]) -> None:
    """Ingest each bank's facts.jsonl (idempotent by fact id: a rerun inserts nothing)."""
    from tempr.ingest.backfill import embed_missing_chunks
    from tempr.ingest.facts import parse_jsonl
    from tempr.ingest.pipeline import IngestDeps, ingest_facts
    from workers.resources import get_resources

    res = get_resources()
    deps = IngestDeps(res.engine, res.embedder, res.extractor, res.settings)
    for d in bank_dirs:
        facts = list(parse_jsonl((d / "facts.jsonl").read_text(encoding="utf-8").splitlines()))
        rep = ingest_facts(d.name, facts, deps)
        chunks = embed_missing_chunks(deps, d.name).get(d.name, 0) if res.settings.chunk_vectors else 0
        log(
            f"tempr bank {d.name}: {rep.inserted} inserted, {rep.received - rep.inserted} present, {chunks} chunks embedded"
        )


def run(cfg: PeerLatencyConfig) -> PeerLatencyResult:
    import json
    import socket

    from tempr.auth import create_key
    from tempr.services.workers import fleet_layout
    from workers.resources import get_resources

    if not ingest_peer.peer_installed():
        raise RuntimeError(f"the Hindsight peer is not installed: run {ingest_peer.PEER}/hindsight_peer.sh install")
    tmp = Path(tempfile.mkdtemp(prefix="tempr-peer-latency-"))
    bank_dirs = ingest_peer.convert_locomo(tmp)
    if not bank_dirs:
        raise RuntimeError("no LoCoMo dev data or converter under ../shared/bench")
    questions = [json.loads(line) for line in (tmp / "questions.jsonl").read_text().splitlines() if line.strip()]
    questions = [questions[i] for i in range(0, len(questions), max(1, len(questions) // cfg.questions))][
        : cfg.questions
    ]
    stack.services_up()
    specs = [stack.WorkerSpec(f"peer-{p.name}", p.queues, p.concurrency, p.pool) for p in fleet_layout()]
    res = get_resources()
    load_tempr(bank_dirs)
    key = create_key(res.engine, "bench", [d.name for d in bank_dirs], ["recall"], note="bench latency --peer")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log("starting the Hindsight peer and importing the same banks")
    ingest_peer._peer("start", timeout=600)
    gateway = None
    try:
        ingest_peer._peer("load-all", str(tmp))
        with stack.bench_workers(specs, exclusive=True) as fleet:  # `services up`'s pools pause
            gateway = start_gateway(port, tmp / "gateway.log")
            by_text = text_index(bank_dirs)
            servers = {
                TEMPR: Server(TEMPR, f"http://127.0.0.1:{port}", by_text, {"Authorization": f"Bearer {key.key}"}),
                PEER: Server(PEER, f"http://127.0.0.1:{ingest_peer.PEER_ENV['API_PORT']}", by_text),
            }
            for q in questions[:20]:  # warm both: models, connections, plans
                for server in servers.values():
                    server.recall(q["bank"], _body(q, cfg.budget, None))
            loads = {"start": _load()}
            misses = interleaved(servers, questions, cfg.budget)
            loads["after misses"] = _load()
            hits = repeated(servers, questions[: cfg.hits], cfg.budget)
            processes = {TEMPR: lambda: tempr_processes(gateway.pid), PEER: peer_processes}
            tput = throughput(servers, questions, cfg, processes)
            loads["after throughput"] = _load()
            layout = fleet.fleet()
    finally:
        if gateway is not None:
            gateway.terminate()
        ingest_peer._peer("stop", timeout=120)
    return PeerLatencyResult(misses, hits, [q["evidence"] for q in questions], tput, layout, loads, report.machine())


def _pcts(calls: list[Call]) -> list[str]:
    ms = [c.ms for c in calls if c.ok]
    if not ms:
        return ["-", "-", "-"]
    return [report.fmt(percentile(ms, q)) for q in (50, 95, 99)]


def render(r: PeerLatencyResult, cfg: PeerLatencyConfig) -> str:
    rows = []
    missed = [c for c in r.hits[TEMPR] if c.ok and c.cache != "hit"]
    r.hits[TEMPR] = [c for c in r.hits[TEMPR] if c not in missed]  # a repeat the cache no longer held
    for kind, data in (("miss", r.misses), ("hit", r.hits)):
        for name in (TEMPR, PEER):
            calls = data[name]
            failed = sum(not c.ok for c in calls)
            rows.append([kind, name, len(calls), failed, *_pcts(calls)])
    ratios = []
    for kind, data in (("miss", r.misses), ("hit", r.hits)):
        t = [c.ms for c in data[TEMPR] if c.ok]
        p = [c.ms for c in data[PEER] if c.ok]
        if t and p:
            ratios.append(
                f"{kind}: tempr/Hindsight p50 {median(t) / median(p):.2f}, "
                f"p95 {percentile(t, 95) / percentile(p, 95):.2f}"
            )
    quality = []
    for k in (5, 10):
        cells = []
        for name in (TEMPR, PEER):
            scores = [recall_at_k(c.ranked, ev, k) for c, ev in zip(r.misses[name], r.evidence, strict=True) if c.ok]
            cells.append(f"{name} {100 * sum(scores) / max(1, len(scores)):.1f}")
        quality.append(f"R@{k}: " + ", ".join(cells))
    tput_rows = [
        [name, int(v["recalls"]), int(v["failed"]), report.fmt(v["per_s"]), report.fmt(v["cpu_ms_per_recall"])]
        for name, v in r.throughput.items()
    ]
    t_rate, p_rate = r.throughput[TEMPR]["per_s"], r.throughput[PEER]["per_s"]
    stages = _stage_rows(r.misses[TEMPR])
    loads = "; ".join(f"{k} {a:.2f}/{b:.2f}/{c:.2f}" for k, (a, b, c) in r.loads.items())
    lines = [
        "## Side by side with Hindsight 1.1 (`tempr bench latency --peer hindsight`)",
        "",
        f"`tempr bench latency --peer hindsight`: the {len(r.evidence)} LoCoMo dev questions (every "
        f"{max(1, 760 // len(r.evidence))}th), budget {cfg.budget}, over HTTP to tempr's gateway (auth on) "
        "and to Hindsight 1.1 (hindsight-api-slim, offline, same MiniLM, reranker rrf), alternating "
        "request by request in one run. Misses: tempr's cache key made new per request; hits: the same "
        "requests again (Hindsight has no cache: it recomputes). Milliseconds, client wall time.",
        "",
        report.table(["kind", "system", "n", "failed", "p50", "p95", "p99"], rows),
        "",
        f"tempr's hit row counts only answers marked `cache: hit` ({len(missed)} repeats came back as "
        "misses: their entry had been evicted or had expired).",
        "",
        "Ratios: " + "; ".join(ratios) + ". Evidence recall of the same misses, each server's own ranking "
        "(the peer's results carry `metadata.dia_id` too): " + "; ".join(quality) + ". tempr's figure is "
        "**not** a quality result: its shipped ranker was trained on these conversations (the "
        "cross-validated figures are in the quality section); it only shows both servers answered in earnest.",
        "",
        f"Throughput at saturation ({cfg.clients} closed-loop clients, misses, {cfg.throughput_s:.0f} s per "
        "system in alternating slices); CPU summed over every process of each stack (tempr: gateway, "
        "workers, Redis, PostgreSQL; Hindsight: its server and its PostgreSQL):",
        "",
        report.table(["system", "recalls", "failed", "recalls/s", "CPU ms/recall"], tput_rows),
        "",
        f"tempr/Hindsight throughput: ×{t_rate / p_rate:.2f}." if p_rate else "",
        "",
        "Where that CPU went, ms per recall (a prefork worker's parent relays each task to a pool child "
        "and back; pools of `tempr services up` paused for the run show near zero):",
        "",
        report.table(["system", "process", "CPU ms/recall"], cpu_rows(r.throughput)),
        "",
        "tempr's stages on those misses (median ms, from each answer's `timings_ms`):",
        "",
        report.table(["stage", "median ms"], stages),
        "",
        "tempr worker pools (the `tempr services up` layout): " + "; ".join(r.layout) + ".",
        f"Load average (1/5/15 min): {loads}.",
        report.machine_line(r.machine),
    ]
    return "\n".join(lines)


def cpu_rows(throughput: dict[str, dict[str, Any]]) -> list[list[str]]:
    """One row per system and process, largest first; processes under 0.05 ms per recall left out."""
    rows = []
    for name, v in throughput.items():
        by_process = sorted((v.get("cpu_ms_by_process") or {}).items(), key=lambda kv: -kv[1])
        rows += [[name, role, report.fmt(ms)] for role, ms in by_process if ms >= 0.05]
    return rows


def _stage_rows(calls: list[Call]) -> list[list[str]]:
    keys: list[str] = []
    for c in calls:
        keys += [k for k in c.timings if k not in keys]
    return [[k, report.fmt(median([c.timings[k] for c in calls if k in c.timings]))] for k in keys]


def main(cfg: PeerLatencyConfig) -> PeerLatencyResult:
    result = run(cfg)
    text = render(result, cfg)
    print(text)
    if cfg.write:
        report.write_section("peer-latency", text)
    return result
