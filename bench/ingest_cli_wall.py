"""Wall time of `tempr ingest FILE` on a warm fleet, before and after, in one run (issue 13).

    python -m bench.ingest_cli_wall --facts F.jsonl [--before-ref REF] [--runs 3]

For each code version (``--before-ref``, checked out with ``git archive`` into a temporary folder,
and this working tree) the script starts the services from that code (`tempr services up` on one
state folder: the same database, Redis and model cache), ingests the file once untimed (the fleet is
then warm: models loaded in every worker process), then runs each mode ``--runs`` times,
interleaved (``--gap`` seconds apart), each into a fresh bank: the command's wall time
(interpreter start to exit) and the report's own ``elapsed_s``. This tree's modes: as shipped
(through the local gateway `services up` started), through Celery (``BYPASS``) and in-process.
The embedder alone (the configured embedder on the same texts, in this process) is measured at
the start and at the end. The 1-minute load average is printed beside
every phase: on a shared 2-core machine it moves every rate.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def load() -> float:
    return os.getloadavg()[0]


def _tempr(code: Path, env: dict[str, str], *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    # cwd first on sys.path: the code in ``code`` is imported, not the editable install's
    return subprocess.run(
        [sys.executable, "-m", "tempr.cli.main", *args],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


Mode = tuple[list[str], dict[str, str]]
"""A mode: the command's flags, and variables added to its environment."""
BYPASS = {"TEMPR_BENCH_BYPASS_GATEWAY": "1"}
"""Any TEMPR_* variable the local gateway was not started with makes the CLI take the Celery path."""


def _ingest(code: Path, env: dict[str, str], facts: Path, flags: list[str]) -> dict[str, Any]:
    bank = f"wall-{uuid.uuid4().hex[:10]}"
    started = time.perf_counter()
    done = _tempr(code, env, "ingest", "--bank", bank, str(facts), "--json", *flags)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"tempr ingest {flags} failed: {done.stderr[-2000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    via = "fleet" if "import_id" in report else "in-process"
    return {"wall_s": wall, "elapsed_s": report["elapsed_s"], "via": via, "timeline": report.get("timeline")}


def _services(code: Path, env: dict[str, str], action: str) -> None:
    done = _tempr(code, env, "services", action, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"services {action}: {done.stderr[-2000:]}")


def _embedder_rate(texts: list[str]) -> float:
    from workers.resources import get_resources

    emb = get_resources().embedder
    emb.embed(["warm up"])
    started = time.perf_counter()
    emb.embed(texts)
    return len(texts) / (time.perf_counter() - started)


def phase(
    label: str, code: Path, env: dict[str, str], facts: Path, modes: dict[str, Mode], runs: int, gap_s: float
) -> dict:
    _services(code, env, "down")
    _services(code, env, "up")
    time.sleep(3)
    first_flags, first_env = next(iter(modes.values()))
    _ingest(code, {**env, **first_env}, facts, first_flags)  # untimed: the fleet (and caches) warm
    out: dict[str, Any] = {"load_start": load()}
    rows: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    for _ in range(runs):
        for mode, (flags, extra) in modes.items():
            time.sleep(gap_s)  # the previous import's chunk vectors are embedded meanwhile
            rows[mode].append(_ingest(code, {**env, **extra}, facts, flags))
    out["load_end"] = load()
    for mode, got in rows.items():
        out[mode] = {
            "wall_s": [round(r["wall_s"], 2) for r in got],
            "median_wall_s": round(statistics.median(r["wall_s"] for r in got), 2),
            "median_elapsed_s": round(statistics.median(r["elapsed_s"] for r in got), 2),
            "via": sorted({r["via"] for r in got}),
        }
        timelines = [r["timeline"] for r in got if r["timeline"]]
        if timelines:  # the fleet path: where the command's time went (median of each part)
            parts = [k for k in timelines[0] if k != "chunks"]
            out[mode]["median_timeline_s"] = {k: round(statistics.median(t[k] for t in timelines), 3) for k in parts}
            out[mode]["chunks"] = timelines[0]["chunks"]
    print(label, json.dumps(out), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=Path, required=True)
    ap.add_argument("--before-ref", default=None, help="git ref of the 'before' code (omit: after only)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--int8", action="store_true", help="also: the fleet with TEMPR_EMBEDDER=onnx-int8 (opt-in model)")
    ap.add_argument("--gap", type=float, default=0.0, help="seconds between imports (default 0: back to back)")
    args = ap.parse_args()
    facts = args.facts.resolve()
    texts = [json.loads(line)["text"] for line in facts.read_text().splitlines() if line.strip()]
    env = {**os.environ, "TEMPR_AUTH": "off", "HF_HUB_OFFLINE": "1"}
    env["TEMPR_STATE_DIR"] = str(Path(env.get("TEMPR_STATE_DIR", ROOT / ".tempr")).resolve())
    os.environ.update({"TEMPR_STATE_DIR": env["TEMPR_STATE_DIR"], "TEMPR_AUTH": "off"})
    result: dict[str, Any] = {"facts": len(texts), "embedder_start": round(_embedder_rate(texts), 1), "load": load()}
    print("embedder alone (start)", result["embedder_start"], "texts/s, load", load(), flush=True)
    if args.before_ref:
        with tempfile.TemporaryDirectory(prefix="tempr-before-") as tmp:
            archive = subprocess.run(["git", "archive", args.before_ref], cwd=ROOT, capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
            before: dict[str, Mode] = {"default": ([], {}), "--via-workers": (["--via-workers"], {})}
            result["before"] = phase(f"before ({args.before_ref})", Path(tmp), env, facts, before, args.runs, args.gap)
            _services(Path(tmp), env, "down")
    modes: dict[str, Mode] = {
        "default (local gateway)": ([], {}),
        "through Celery": ([], BYPASS),
        "--in-process": (["--in-process"], {}),
    }
    result["after"] = phase("after (this tree)", ROOT, env, facts, modes, args.runs, args.gap)
    if args.int8:
        int8 = {**env, "TEMPR_EMBEDDER": "onnx-int8"}
        result["after_int8"] = phase(
            "after, workers on onnx-int8", ROOT, int8, facts, {"default (local gateway)": ([], {})}, args.runs, args.gap
        )
        _services(ROOT, env, "down")
        _services(ROOT, env, "up")
    result["embedder_end"] = round(_embedder_rate(texts), 1)
    print("embedder alone (end)", result["embedder_end"], "texts/s, load", load(), flush=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
