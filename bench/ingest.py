"""Ingest throughput, side by side in one run: tempr single-process, tempr through 1 and 2 ingest
workers, the Hindsight 1.1 peer on the same facts, and the embedder alone on the same texts.

* Facts: the LoCoMo dev conversations (``bench/ingest_peer.py``; synthetic facts without the
  data), entities extracted (the files give none), then the same facts with entities given
  (extracted once beforehand, untimed).
* Embedder standalone: the configured embedder on the same texts, measured before the first
  tempr run and after each one; each run's *% of embedder* is over the mean of the two
  measurements around it (the machine's speed drifts over a run: 659 texts/s before and 512 after
  in one, so a share over the whole run's mean blamed on the runs what the machine did).
* Single process: ``ingest_facts`` in this process with warm models and a warm database session
  (an untimed ingest of 64 facts first); the report's per-stage
  times give the breakdown. CPU per fact is this process's CPU (PostgreSQL's is not counted).
* Via workers: ``fleet.submit_file`` + wait, chunks on the ``ingest`` queue consumed by a
  prefork worker of 1 or 2 processes (models warmed first); CPU is the workers' CPU.
* ``tempr ingest --via-workers`` of a 250-fact file on that warm fleet: the command's wall time.
* Hindsight: its document-transfer import of the same facts (``hindsight_peer.sh load-all``).

Each tempr run writes a fresh bank, deleted afterwards.
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

from bench import banks, ingest_peer, report, synthetic
from bench.progress import log
from tempr.providers.embedder.spaces import space_of

OFFSET = 1_000_000
"""Synthetic facts OFFSET.. so their text is new to every bank and to the embedding cache."""


@dataclass
class IngestConfig:
    facts: int = 5000
    """Synthetic facts, used only when the LoCoMo dev data is not beside the repository."""
    write: bool = True
    seed: int = synthetic.DEFAULT_SEED
    workers: tuple[int, ...] = (1, 2)
    chunk_facts: int = 150
    peer: bool = True


@dataclass
class IngestResult:
    cfg: IngestConfig
    source: str = ""
    facts: int = 0
    embedder: dict[str, Any] = field(default_factory=dict)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    cli_250: dict[str, Any] = field(default_factory=dict)
    peer: dict[str, Any] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)
    database: dict[str, Any] = field(default_factory=dict)
    """What the database held before the run (memories, bytes, shared_buffers): an ingest's index
    writes land on random pages, so the same facts write slower beside a large bank."""


def write_synthetic(path: Path, n: int, seed: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i in range(OFFSET, OFFSET + n):
            fact = synthetic.fact(i, seed)
            fact["id"] = f"jsonl-{i}"
            fact.pop("entities")
            out.write(json.dumps(fact) + "\n")


def _inputs(tmp: Path, cfg: IngestConfig) -> tuple[Path, str, list[Path]]:
    locomo = ingest_peer.convert_locomo(tmp / "locomo")
    path = tmp / "extracted.jsonl"
    if locomo:
        with path.open("w", encoding="utf-8") as out:
            for bank in locomo:
                out.write((bank / "facts.jsonl").read_text(encoding="utf-8"))
        return path, f"LoCoMo dev ({len(locomo)} conversations)", locomo
    write_synthetic(path, cfg.facts, cfg.seed)
    return path, "synthetic (`bench/synthetic.py`)", []


def _with_entities(src: Path, dst: Path, extractor: Any) -> None:
    objs = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines() if line.strip()]
    for obj, names in zip(objs, extractor.extract([o["text"] for o in objs]), strict=True):
        obj["entities"] = names
    dst.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")


def _embed_rate(res: Any, texts: list[str]) -> float:
    from tempr.ingest.pipeline import embed_step

    started = time.perf_counter()
    step = embed_step(res.settings)  # the calls ingest makes
    for lo in range(0, len(texts), step):
        res.embedder.embed(texts[lo : lo + step])
    return len(texts) / (time.perf_counter() - started)


def _database(engine: Any) -> dict[str, Any]:
    from sqlalchemy import text

    with engine.connect() as conn:
        # each bank's count, kept by ingest: a count(*) would scan the whole table (5 GB at 1M facts)
        memories = conn.execute(text("SELECT coalesce(sum(unit_count), 0) FROM banks")).scalar_one()
        size = conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
        buffers = conn.execute(text("SHOW shared_buffers")).scalar_one()
    return {"memories": int(memories), "bytes": int(size), "shared_buffers": str(buffers)}


def _warm_ingest(res: Any, path: Path, tmp: Path, n: int = 64) -> None:
    """One untimed ingest of the file's first ``n`` facts into a throwaway bank, as the embedder is warmed.

    The first ingest of a process pays once for what later ones reuse: a new database session
    loads its text-search dictionaries and catalog entries, the extractor its tables. Timed cold,
    the first row (entities extracted) ran `write_units` in 0.30 s against 0.18 s for the second
    row on the same facts, and its share of the embedder read 65 % against 77 %; after this warm-up,
    0.23 against 0.21 s, and 67 against 70 % (2026-12-07, one run each)."""
    head = tmp / "warm.jsonl"
    head.write_text("".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:n]), encoding="utf-8")
    _single(res, head)


def _single(res: Any, path: Path) -> dict[str, Any]:
    from tempr.ingest.backfill import embed_missing_chunks
    from tempr.ingest.facts import parse_jsonl
    from tempr.ingest.pipeline import IngestDeps, ingest_facts

    facts = list(parse_jsonl(path.read_text(encoding="utf-8").splitlines()))
    bank = f"bench-ingest-{uuid.uuid4().hex[:8]}"
    deps = IngestDeps(res.engine, res.embedder, res.extractor, res.settings)
    cpu = time.process_time()
    try:
        rep = ingest_facts(bank, facts, deps)
        cpu = time.process_time() - cpu
        started = time.perf_counter()  # then what the embed_chunks task does once the facts are visible
        chunks = embed_missing_chunks(deps, bank).get(bank, 0) if res.settings.chunk_vectors else 0
        chunk_s = time.perf_counter() - started
    finally:
        banks.delete_bank(res.engine, bank)
    return {
        **rep.to_dict(),
        "cpu_ms_per_fact": round(1000 * cpu / max(1, rep.received), 2),
        "chunk_vectors": {"chunks": chunks, "seconds": round(chunk_s, 2)},
    }


def _worker_cpu(pids: list[int]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            for p in [proc, *proc.children(recursive=True)]:
                t = p.cpu_times()
                total += t.user + t.system
        except psutil.NoSuchProcess:
            continue
    return total


def _via_workers(res: Any, path: Path, n_workers: int, cfg: IngestConfig, tmp: Path) -> tuple[dict[str, Any], dict]:
    from bench import stack
    from tempr.ingest import fleet
    from tempr.services import process
    from workers.app import app

    spec = stack.WorkerSpec(f"bench-ingest{n_workers}", "ingest", n_workers, "prefork")
    others = _pause_other_ingest_consumers(app, spec.name)
    try:
        with stack.bench_workers([spec]) as fleet_:
            pid = process.read_pid(fleet_.detached.pidfile(spec.name))
            warm = tmp / "warm.jsonl"
            write_synthetic(warm, 4 * n_workers, cfg.seed)
            _run_import(res, warm, 2, app, fleet)  # every pool process loads its models now
            cpu = _worker_cpu([pid] if pid else [])
            published: list[float] = []
            out = _run_import(
                res, path, cfg.chunk_facts, app, fleet, lambda: published.append(_worker_cpu([pid] if pid else []))
            )
            out["cpu_ms_per_fact"] = round(1000 * (published[0] - cpu) / max(1, out["received"]), 2)
            cli = _cli_250(tmp)
    finally:
        _resume(app, others)
    return out, cli


def _run_import(res: Any, path: Path, chunk: int, app: Any, fleet: Any, on_published: Any = None) -> dict[str, Any]:
    """Time the import to its publishing commit, then the chunk vectors the workers embed after it."""
    from tempr.ingest.imports import with_elapsed

    bank = f"bench-ingest-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    try:
        job = fleet.submit_file(path, bank, res.engine, app, chunk_facts=chunk, space=space_of(res.settings.embedder))
        status = fleet.wait(job, res.engine, poll_s=0.1)
        if status["status"] != "succeeded":
            raise RuntimeError(f"import failed: {status['error']}")
        out = with_elapsed(status["result"], time.perf_counter() - started)
        if on_published:
            on_published()
        published = time.perf_counter()
        if res.settings.chunk_vectors and out.get("chunks"):
            _wait_chunk_vectors(res.engine, bank)
        out["chunk_vectors"] = {"chunks": out.get("chunks", 0), "seconds": round(time.perf_counter() - published, 2)}
        return out
    finally:
        banks.delete_bank(res.engine, bank)


def _wait_chunk_vectors(engine: Any, bank: str, timeout_s: float = 900.0) -> None:
    from sqlalchemy import text

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            left = conn.execute(
                text("SELECT count(*) FROM chunks WHERE bank_id = :b AND embedding IS NULL"), {"b": bank}
            ).scalar_one()
        if not left:
            return
        time.sleep(0.1)
    raise RuntimeError(f"chunk vectors of {bank} not written within {timeout_s} s")


def _cli_250(tmp: Path, runs: int = 3) -> dict[str, Any]:
    """`tempr ingest --via-workers` of 250 facts: through the local gateway (what `tempr services up`
    starts, the CLI on the standard library alone) and without one (the CLI imports Celery and
    SQLAlchemy, probes for an ingest worker and enqueues itself), ``runs`` of each, interleaved."""
    import statistics

    from tempr.services.gateway import LocalGateway
    from workers.resources import get_resources

    path = tmp / "f250.jsonl"
    write_synthetic(path, 250, synthetic.DEFAULT_SEED + 1)
    gateway = LocalGateway(get_resources().settings.state_dir.resolve() / "gateway")
    ours = gateway.running() is None
    walls: dict[str, list[dict[str, Any]]] = {"gateway": [], "celery": []}
    try:
        for _ in range(runs):
            for path_kind in ("celery", "gateway"):
                if path_kind == "gateway" and gateway.running() is None:
                    gateway.start()
                elif path_kind == "celery" and gateway.running() is not None:
                    gateway.stop()
                walls[path_kind].append(_cli_run(path))
    finally:
        if ours:
            gateway.stop()
        elif gateway.running() is None:
            gateway.start()  # the one `tempr services up` started, back
    out: dict[str, Any] = {"facts": 250}
    for kind, got in walls.items():
        out[kind] = {
            "wall_s": [r["wall_s"] for r in got],
            "median_wall_s": round(statistics.median(r["wall_s"] for r in got), 2),
            "timeline": got[-1].get("timeline"),
        }
    return out


def _cli_run(path: Path) -> dict[str, Any]:
    from workers.resources import get_resources

    bank = f"bench-cli-{uuid.uuid4().hex[:8]}"
    script = Path(sys.executable).with_name("tempr")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "tempr.cli.main"]
    started = time.perf_counter()
    done = subprocess.run(
        [*head, "ingest", "--bank", bank, str(path), "--via-workers", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        check=False,
    )
    wall = time.perf_counter() - started
    banks.delete_bank(get_resources().engine, bank)
    if done.returncode != 0:
        raise RuntimeError(f"tempr ingest --via-workers failed: {done.stderr[-2000:]}")
    return {"wall_s": round(wall, 2), **json.loads(done.stdout.strip().splitlines()[-1])}


def _pause_other_ingest_consumers(app: Any, ours: str) -> list[str]:
    """Workers started elsewhere (`tempr services up`'s) stop taking ingest tasks during the run."""
    replies = app.control.inspect(timeout=1.0).active_queues() or {}
    others = [w for w, qs in replies.items() if not w.startswith(ours) and any(q["name"] == "ingest" for q in qs)]
    if others:
        app.control.cancel_consumer("ingest", destination=others, reply=True)
    return others


def _resume(app: Any, others: list[str]) -> None:
    if others:
        app.control.add_consumer("ingest", destination=others, reply=True)


def run(cfg: IngestConfig) -> IngestResult:
    from bench import stack
    from tempr.heap import freeze_warm_heap
    from workers.resources import get_resources

    stack.services_up()
    res = get_resources()
    result = IngestResult(cfg)
    with tempfile.TemporaryDirectory(prefix="tempr-bench-ingest-") as tmp_name:
        tmp = Path(tmp_name)
        extracted, result.source, locomo = _inputs(tmp, cfg)
        given = tmp / "given.jsonl"
        _with_entities(extracted, given, res.extractor)
        texts = [json.loads(line)["text"] for line in extracted.read_text().splitlines() if line.strip()]
        result.facts = len(texts)
        result.database = _database(res.engine)
        _embed_rate(res, texts[:64])  # warm
        _warm_ingest(res, extracted, tmp)
        # as every worker process does once warm (tempr.heap): a full collection walks the models'
        # objects, 41-43 ms in every other 1,210-fact ingest of this process when left unfrozen
        freeze_warm_heap(res.settings.gc_freeze, "bench ingest, warm")
        log(f"embedder alone on {len(texts):,} texts")
        rates = [_embed_rate(res, texts)]

        def bracketed(run_: dict[str, Any]) -> dict[str, Any]:
            rates.append(_embed_rate(res, texts))
            return {**run_, "embedder_texts_per_s": round((rates[-2] + rates[-1]) / 2, 1)}

        for label, path in (("entities extracted", extracted), ("entities given", given)):
            log(f"single process, {label}")
            result.runs[f"tempr single process, {label}"] = bracketed(_single(res, path))
        for n in cfg.workers:
            log(f"via {n} ingest worker process(es), entities extracted")
            run_, cli = _via_workers(res, extracted, n, cfg, tmp)
            result.runs[f"tempr via workers ({n} process{'es' if n > 1 else ''}), entities extracted"] = bracketed(run_)
            result.cli_250 = result.cli_250 or cli
        result.embedder = {"kind": res.settings.embedder, "before": round(rates[0], 1), "after": round(rates[-1], 1)}
        result.embedder["texts_per_s"] = round(sum(rates) / len(rates), 1)
        result.embedder["rates"] = [round(r, 1) for r in rates]
        if cfg.peer and locomo and ingest_peer.peer_installed():
            log("Hindsight peer: document-transfer import of the same banks")
            try:
                result.peer = ingest_peer.peer_import(tmp / "locomo", len(texts))
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                result.peer = {"error": str(exc)[-300:]}
    result.machine = report.machine()
    return result


def main(cfg: IngestConfig) -> IngestResult:
    from bench.ingest_render import render

    result = run(cfg)
    text = render(result)
    print(text)
    if cfg.write:
        report.write_section("ingest", text)
    return result
