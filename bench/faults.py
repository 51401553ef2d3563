"""`make faults`: the fault matrix against the real stack, bounded in time (python -m bench.faults).

A private stack (embedded PostgreSQL and Redis, a prefork recall worker and a threads webhook
worker as `tempr services up` starts them, the HTTP gateway) in a temporary state folder takes
recall and ingest traffic while each fault is injected; every answer is classified (see
bench/fault_load.py). Faults, in order: SIGKILL a worker pool child, SIGKILL the worker parent
(a supervisor restarts it), Redis stop+start, PostgreSQL stop+start, webhook receiver down, slow
webhook receiver, and RabbitMQ stop+start as the broker (a private node; skipped, with the
reason, when RabbitMQ cannot be started). Recovery time is from the moment the service is back
(for the worker parent: the restarted worker answers a ping) to the first correct answer.

Time to recover: from the service's return to the sending of the first request that got a correct
answer (requests are sent continuously); the next column adds that request's own latency.
Goal: 0 x 500, 0 hung, 0 wrong, 0 lost ingest, recovery <= 10 s. The table goes to RELIABILITY.md;
the exit status is 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECALL_TIMEOUT_S = 10.0
GOAL_RECOVERY_S = 10.0


@dataclass
class Row:
    fault: str
    recalls: Counter[str] = field(default_factory=Counter)
    codes: Counter[int] = field(default_factory=Counter)
    ingests: Counter[str] = field(default_factory=Counter)
    lost: int = 0
    recovered: bool = False
    recover_s: float | None = None
    answered_s: float | None = None
    p95_ok_s: float | None = None
    note: str = ""
    skipped: str = ""

    def meets_goal(self) -> bool:
        if self.skipped:
            return True
        bad = self.recalls["500"] + self.recalls["hung"] + self.recalls["wrong"] + self.ingests["500"]
        bad += self.ingests["hung"] + self.lost
        return bad == 0 and self.recovered and (self.recover_s or 0.0) <= GOAL_RECOVERY_S


def _environment(state: Path, timeout_s: float) -> None:
    os.environ.update(
        {
            "TEMPR_STATE_DIR": str(state),
            "TEMPR_CACHE_TTL_S": "0",  # every recall runs the whole pipeline
            "TEMPR_RECALL_TIMEOUT_S": str(timeout_s),
            "TEMPR_API_WAIT_TIMEOUT_S": "90",  # the gateway waits up to each request's own deadline
            "TEMPR_WEBHOOK_ALLOW_NETWORKS": "127.0.0.1/32",
            "PROMETHEUS_MULTIPROC_DIR": str(state / "metrics"),
            "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
    )
    for var in ("TEMPR_DATABASE_URL", "TEMPR_REDIS_URL", "TEMPR_BROKER_URL", "TEMPR_RESULT_BACKEND", "TEMPR_CACHE_URL"):
        os.environ.pop(var, None)


def _seed(api: str, bank: str, timeout_s: float) -> dict[str, list[str]]:
    """Ingest the sample bank over HTTP; the baseline answer of every query, before any fault."""
    import httpx

    from bench.fault_load import QUERIES, recall_body
    from bench.fault_stack import sample_facts

    httpx.post(f"{api}/v1/default/banks/{bank}/facts", json=sample_facts(), timeout=300).raise_for_status()
    baseline = {}
    for query in QUERIES:
        for _ in range(5):  # the first recalls on a cold worker may pass the deadline
            r = httpx.post(f"{api}/v1/default/banks/{bank}/memories/recall", json=recall_body(query, 60), timeout=90)
            if r.status_code == 200 and not r.json()["degraded"]:
                baseline[query] = [x["id"] for x in r.json()["results"]]
                break
        else:
            raise SystemExit(f"no clean baseline answer for {query!r}: {r.status_code} {r.text[:300]}")
    return baseline


def _warm(api: str, bank: str) -> None:
    """Concurrent recalls, so every pool process has served one before the faults begin."""
    import httpx

    from bench.fault_load import QUERIES, recall_body

    def one(query: str) -> None:
        httpx.post(f"{api}/v1/default/banks/{bank}/memories/recall", json=recall_body(query, 60), timeout=90)

    threads = [threading.Thread(target=one, args=(q,)) for q in QUERIES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


@dataclass
class Drill:
    stack: Any
    bank: str
    only: str | None
    baseline: dict[str, list[str]]
    timeout_s: float
    hold_s: float
    rows: list[Row] = field(default_factory=list)
    acked: dict[str, tuple[str, list[str]]] = field(default_factory=dict)

    def run(
        self,
        name: str,
        fault: Callable[[], None],
        restore: Callable[[], None] | None,
        *,
        receiver: Any = None,
    ) -> Row:
        from bench.fault_load import Load

        if self.only and self.only.lower() not in name.lower():
            return Row(name)
        print(f"-- {name}", flush=True)
        ingest_bank = f"faults-ingest-{len(self.rows)}"
        load = Load(
            self.stack.api,
            self.bank,
            self.baseline,
            self.timeout_s,
            callback_url=receiver.url if receiver else None,
            ingest_bank=ingest_bank,
        ).start()
        time.sleep(3)
        row = Row(name)
        fault()
        if restore is not None:
            time.sleep(self.hold_s)
            restoring = time.time()
            restore()
            row.note = f"service back {time.time() - restoring:.1f} s after its start began; "
        back = time.time()
        limit = back + 120
        while time.time() < limit and not any(o.kind == "ok" and o.started >= back for o in load.recalls):
            time.sleep(0.2)
        time.sleep(3)
        load.stop()
        oks = [o for o in load.recalls if o.kind == "ok" and o.started >= back]
        row.recovered = bool(oks)
        if oks:  # recovered: the first request sent after the return that got a correct answer
            first = min(oks, key=lambda o: o.started)
            row.recover_s = round(first.started - back, 1)
            row.answered_s = round(first.finished - back, 1)
        row.recalls = Counter(o.kind for o in load.recalls)
        row.codes = Counter(o.status for o in load.recalls if o.kind == "clean" and o.status)
        row.ingests = Counter(o.kind for o in load.ingests)
        latencies = sorted(o.finished - o.started for o in load.recalls if o.kind == "ok")
        row.p95_ok_s = round(latencies[int(0.95 * (len(latencies) - 1))], 2) if latencies else None
        self.acked[name] = (ingest_bank, list(load.acked_facts))
        if receiver is not None:
            self._deliveries(row, load, receiver, back, restore is not None)
        bad = [o for o in load.recalls if o.kind in ("500", "hung", "wrong")]
        for o in bad[:3]:
            print(f"   {o.kind}: {o.status} {o.detail[:160]}", flush=True)
        self.rows.append(row)
        print(f"   {dict(row.recalls)} codes {dict(row.codes)} ingest {dict(row.ingests)} recover {row.recover_s}")
        return row

    def _deliveries(self, row: Row, load: Any, receiver: Any, back: float, restored: bool) -> None:
        """Every recall answered 200 must reach the receiver once it is back (retries with backoff)."""
        wanted = {o.job_id for o in load.recalls if o.status == 200 and o.job_id}
        limit = time.time() + 60
        while time.time() < limit and not wanted <= set(receiver.delivered):
            time.sleep(0.5)
        missing = wanted - set(receiver.delivered)
        arrived = [receiver.delivered[j] for j in wanted if j in receiver.delivered]
        row.note += f"webhooks: {len(wanted) - len(missing)}/{len(wanted)} delivered"
        if missing:  # reported in the note; fails the goal
            row.recovered = False
        elif arrived and row.recover_s is not None:
            row.note += (
                f" (the last {max(arrived) - back:.1f} s after the receiver {'returned' if restored else 'slowed'})"
            )

    def check_lost(self) -> None:
        """Every fact whose ingest was answered 200 must be in its bank."""
        from tempr.services import manager
        from tempr.store.engine import make_engine
        from tempr.store.ingest_repo import existing_fact_ids

        url = manager.resolve_endpoints(self.stack.settings).database_url
        engine = make_engine(url)
        try:
            for row in self.rows:
                bank, ids = self.acked.get(row.fault, ("", []))
                with engine.connect() as conn:
                    found = existing_fact_ids(conn, bank, ids) if ids else set()
                row.lost = len(set(ids) - found)
        finally:
            engine.dispose()


def _rabbit_phase(drill: Drill, state: Path) -> Row:
    from bench.fault_stack import PrivateRabbit

    name = "RabbitMQ stop+start (broker)"
    rabbit = PrivateRabbit(Path(tempfile.mkdtemp(prefix="tempr-faults-rabbit-")))  # reachable by the rabbitmq user
    try:
        rabbit.start()
    except Exception as exc:  # noqa: BLE001 - any failure to start one means "skip", with the reason
        row = Row(name, skipped=f"skipped: a private RabbitMQ node could not be started ({exc})")
        drill.rows.append(row)
        return row
    stack = drill.stack
    try:
        stack.stop_gateway()
        stack.workers.stop_all()
        stack.broker_url = rabbit.url
        stack.env()
        stack.start_workers()
        stack.start_gateway()
        return drill.run(name, rabbit.stop_app, rabbit.start_app)
    finally:
        rabbit.shutdown()
        shutil.rmtree(rabbit.root, ignore_errors=True)


def _table(rows: list[Row], hold_s: float) -> str:
    head = (
        "| fault | recalls sent | ok | degraded | clean 4xx/5xx | 500 | hung | wrong | ingests ok / sent | lost "
        "| recovered without restart | time to recover (s) | first correct answer (s) | p95 ok (s) | note |\n"
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|"
    )
    lines = [head]
    for r in rows:
        if r.skipped:
            lines.append(f"| {r.fault} | – | – | – | – | – | – | – | – | – | – | – | – | – | {r.skipped} |")
            continue
        codes = ", ".join(f"{n}×{c}" for c, n in sorted(r.codes.items())) or "0"
        clean = f"{r.recalls['clean']} ({codes})" if r.recalls["clean"] else "0"
        restart = "restarted by supervisor" if "parent" in r.fault else "yes" if r.recovered else "NO"
        lines.append(
            f"| {r.fault} | {sum(r.recalls.values())} | {r.recalls['ok']} | {r.recalls['degraded']} | {clean} "
            f"| {r.recalls['500']} | {r.recalls['hung']} | {r.recalls['wrong']} "
            f"| {r.ingests['ok']} / {sum(r.ingests.values())} | {r.lost} | {restart} "
            f"| {_num(r.recover_s)} | {_num(r.answered_s)} | {r.p95_ok_s or '–'} | {r.note} |"
        )
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _machine() -> str:
    load = os.getloadavg()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, {mem:.0f} GiB, Python {platform.python_version()}; "
        f"load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hold", type=float, default=5.0, help="seconds each service stays down")
    parser.add_argument("--timeout-s", type=float, default=RECALL_TIMEOUT_S, help="each recall's deadline")
    parser.add_argument("--out", type=Path, default=Path("RELIABILITY.md"))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--only", help="run only the faults whose name contains this text (implies --no-write)")
    args = parser.parse_args(argv)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))  # `timeout` ends us: still clean up
    state = Path(tempfile.mkdtemp(prefix="tempr-faults-"))
    _environment(state, args.timeout_s)
    from bench.fault_load import Receiver
    from bench.fault_stack import FaultStack
    from tempr.services.process import free_port

    started = time.time()
    stack = FaultStack(state)
    try:
        stack.up()
        baseline = _seed(stack.api, "faults", args.timeout_s)
        _warm(stack.api, "faults")
        drill = Drill(stack, "faults", args.only, baseline, args.timeout_s, args.hold)
        leftovers: list[int] = []

        def kill_parent() -> None:
            leftovers.extend(stack.kill_worker_parent())

        def restart_parent() -> None:
            stack.restart_worker(leftovers)
            stack.wait_workers()

        drill.run("worker child SIGKILL", stack.kill_worker_child, None)
        drill.run("worker parent SIGKILL", kill_parent, restart_parent)
        drill.run("Redis stop+start", stack.stop_redis, stack.start_redis)
        drill.run("PostgreSQL stop+start", stack.stop_postgres, stack.start_postgres)
        receiver = Receiver(free_port()).start()
        drill.run("webhook receiver down", receiver.stop, receiver.start, receiver=receiver)
        receiver.delay_s = 3.0
        drill.run("webhook receiver slow (3 s per delivery)", lambda: None, None, receiver=receiver)
        receiver.stop()
        _rabbit_phase(drill, state)
        drill.check_lost()
    finally:
        stack.down()
        if not os.environ.get("TEMPR_FAULTS_KEEP"):  # keep the logs for a post-mortem
            shutil.rmtree(state, ignore_errors=True)
    rows = drill.rows
    table = _table(rows, args.hold)
    elapsed = (time.time() - started) / 60
    body = (
        f"Run finished {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by `make faults` ({elapsed:.1f} min) on "
        f"{_machine()}. Each recall's deadline {args.timeout_s:.0f} s; each service down {args.hold:.0f} s; "
        "3 recall clients and 1 ingest client throughout; cache off, so every recall runs the whole pipeline. "
        "Time to recover: from the service's return (for the worker parent: the restarted worker answering a "
        "ping) to the sending of the first request answered correctly; the next column is when that answer came.\n\n"
        + table
    )
    print(body)
    if not args.no_write and not args.only:
        from bench.report import write_section

        if not args.out.exists():
            args.out.write_text("# Reliability\n\n")
        write_section("fault-matrix", body, path=args.out)
    return 0 if all(r.meets_goal() for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
