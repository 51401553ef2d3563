"""Wall time of `tempr recall` on a warm fleet: through the local gateway, through Celery, and through
Celery without the start-up trims (issue 12).

    python -m bench.cli_wall [--runs 15] [--no-write]

`tempr services up` first (a no-op when the fleet runs), then the sample bank is ingested into
``cli-wall`` if absent and asked once untimed. Each round then runs, in a shuffled order, every
command of ``COMMANDS`` as a fresh interpreter and times it from start to exit: Python alone (the
floor), `tempr recall` as shipped (through the local gateway `services up` started:
``tempr.cli.quick``), the same command through Celery (``BYPASS``: one more ``TEMPR_*`` variable,
so the gateway's configuration fingerprint no longer matches and the CLI enqueues itself, with
``tempr.cli.startup``'s import trims) and through Celery with the trims off (``main`` called
directly), each once with the query of the warm-up (a cache hit) and once with a query never
asked before (a miss: the fleet runs the whole chord), and
`tempr ingest` of the sample bank into a new bank both ways (deleted at the end). The
1-minute load average is printed beside the table: on a shared 2-core machine it moves every
figure, so read the ratios within one run.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from bench import report

ROOT = Path(__file__).resolve().parents[1]
SECTION = "cli_wall"
BANK = "cli-wall"
QUERY = "Where does Alice work?"
SHIPPED = [sys.executable, "-m", "tempr.cli.main"]
UNTRIMMED = [sys.executable, "-c", "import sys; from tempr.cli.main import main; sys.exit(main(sys.argv[1:]))"]
BYPASS = {"TEMPR_BENCH_BYPASS_GATEWAY": "1"}
"""Any TEMPR_* variable the gateway was not started with makes the CLI take the Celery path."""
COMMANDS = {
    "python -c pass (interpreter start)": "floor",
    "tempr recall, cache hit (local gateway)": "shipped hit",
    "tempr recall, cache hit, through Celery": "celery hit",
    "tempr recall, cache hit, through Celery, trims off": "untrimmed hit",
    "tempr recall, cache miss (local gateway)": "shipped miss",
    "tempr recall, cache miss, through Celery": "celery miss",
    "tempr recall, cache miss, through Celery, trims off": "untrimmed miss",
    "tempr ingest of the sample bank (62 facts), a new bank": "shipped ingest",
    "tempr ingest of the sample bank, a new bank, trims off": "untrimmed ingest",
}
"""Row label -> mode."""


SAMPLE = ROOT / "tempr" / "data" / "sample_bank.jsonl"
INGESTED: list[str] = []
"""Banks the ingest rows made: deleted at the end."""


def _run(argv: list[str], expect: str, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        argv, cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=120
    )
    wall = time.perf_counter() - started
    if done.returncode != 0 or expect not in done.stdout:
        raise SystemExit(f"bench.cli_wall: {' '.join(argv[-3:])} failed:\n{done.stdout}\n{done.stderr}")
    if "runs in this process" in done.stderr:
        raise SystemExit("bench.cli_wall: no worker answered, the CLI recalled in-process; is the fleet up?")
    return wall * 1000


def expect(mode: str) -> str:
    """What a successful run of ``mode`` prints."""
    return {"floor": ""}.get(mode, "62 inserted" if mode.endswith("ingest") else "cache")


def argv_for(mode: str) -> list[str]:
    if mode == "floor":
        return [sys.executable, "-c", "pass"]
    head = UNTRIMMED if mode.startswith("untrimmed") else SHIPPED
    if mode.endswith("ingest"):
        INGESTED.append(f"{BANK}-{uuid.uuid4().hex[:10]}")
        return [*head, "ingest", "--bank", INGESTED[-1], str(SAMPLE)]
    query = QUERY if mode.endswith("hit") else f"{QUERY} (asked {uuid.uuid4().hex[:8]})"
    return [*head, "recall", "--bank", BANK, "--via-workers", query]


def prepare() -> None:
    for args in (["services", "up"], ["keys", "local"]):
        subprocess.run([*SHIPPED, *args], cwd=ROOT, check=True, capture_output=True, timeout=600)
    if subprocess.run([*SHIPPED, "recall", "--bank", BANK, QUERY], cwd=ROOT, capture_output=True).returncode:
        subprocess.run([*SHIPPED, "ingest", "--bank", BANK, str(SAMPLE)], cwd=ROOT, check=True, capture_output=True)
    _run(argv_for("shipped hit"), expect("shipped hit"))  # the answer cached, every pool process warm


def measure(runs: int, seed: int = 7) -> dict[str, list[float]]:
    rng = random.Random(seed)
    walls: dict[str, list[float]] = {mode: [] for mode in COMMANDS.values()}
    for i in range(runs):
        order = list(walls)
        rng.shuffle(order)
        for mode in order:
            env = BYPASS if mode.startswith(("celery", "untrimmed")) else None
            walls[mode].append(_run(argv_for(mode), expect(mode), env))
        print(f"round {i + 1}/{runs}: " + ", ".join(f"{m} {walls[m][-1]:.0f}" for m in walls), file=sys.stderr)
    return walls


def drop_ingested() -> None:
    from tempr.store.ingest_repo import delete_bank
    from workers.resources import get_resources

    with get_resources().engine.begin() as conn:
        for bank in INGESTED:
            delete_bank(conn, bank)
    INGESTED.clear()


def render(walls: dict[str, list[float]], load_before: float, load_after: float) -> str:
    rows = []
    for label, mode in COMMANDS.items():
        values = sorted(walls[mode])
        rows.append([label, len(values), report.fmt(statistics.median(values), 0), report.fmt(values[0], 0)])
    med = {mode: statistics.median(v) for mode, v in walls.items()}
    lines = [
        "## `tempr recall` wall time on a warm fleet (`python -m bench.cli_wall`)",
        "",
        f"{report.machine_line()} 1-minute load average {load_before:.1f} before, {load_after:.1f} after.",
        f"Bank: the sample bank ({BANK}); each command a fresh interpreter, interpreter start to exit, "
        "rounds interleaved in shuffled order. *Local gateway*: as shipped, the CLI asks the gateway "
        "`services up` started, with the standard library alone. *Through Celery*: the CLI enqueues itself "
        "(what it does when no gateway of its configuration runs). *Trims off*: the Celery path without "
        "`tempr.cli.startup` (which scans the installed entry points once instead of four times and keeps "
        "redis-py from importing the OpenTelemetry metrics SDK).",
        "",
        report.table(["command", "runs", "median ms", "min ms"], rows),
        "",
        f"The local gateway saves {med['celery hit'] - med['shipped hit']:.0f} ms on a hit and "
        f"{med['celery miss'] - med['shipped miss']:.0f} ms on a miss against Celery (medians); on the Celery "
        f"path the trims save {med['untrimmed hit'] - med['celery hit']:.0f} ms on a hit and "
        f"{med['untrimmed miss'] - med['celery miss']:.0f} ms on a miss. A miss costs "
        f"{med['shipped miss'] - med['shipped hit']:.0f} ms more than a hit (the chord itself). On `tempr ingest` "
        f"(validation, staging on the ingest pool, publish) they save "
        f"{med['untrimmed ingest'] - med['shipped ingest']:.0f} ms.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    prepare()
    before = os.getloadavg()[0]
    try:
        walls = measure(args.runs)
    finally:
        drop_ingested()
    body = render(walls, before, os.getloadavg()[0])
    print(body)
    if not args.no_write:
        report.write_section(SECTION, body, Path(report.DEFAULT_PATH))


if __name__ == "__main__":
    main()
