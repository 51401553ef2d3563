"""Bounded resources, measured (python -m bench.soak --recalls N): worker RSS over N recalls and
Redis memory per completed recall, on a private stack like `make faults` (cache on, as deployed).

Every recall has a distinct query (a counter appended), so each runs the whole pipeline and leaves
what a completed recall leaves in Redis: its job record (``TEMPR_JOB_RESULT_TTL_S``), Celery's
results (``TEMPR_CELERY_RESULT_EXPIRES_S``) and a cache entry (``TEMPR_CACHE_TTL_S``). Prints the
RSS of the recall worker's pool children at checkpoints, Redis ``used_memory`` per completed
recall, and the size of one key of each kind (``MEMORY USAGE``).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any


def _children_rss(stack: Any) -> list[float]:
    from bench.fault_stack import rss_mb
    from tempr.services import process

    return [round(rss_mb(pid), 1) for pid in process.children(stack.worker_pid())]


def _key_sizes(client: Any) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for db, pattern, label in (
        (2, "tempr:job:*", "job record"),
        (2, "tempr:cache:*", "cache entry"),
        (1, "celery-task-meta-*", "celery result"),
    ):
        conn = client(db)
        for key in conn.scan_iter(match=pattern, count=1000):
            sizes[label] = int(conn.memory_usage(key, samples=0) or 0)  # every field, not a sample
            break
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recalls", type=int, default=1000)
    parser.add_argument("--checkpoints", default="100,1000")
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument(
        "--out", type=Path, default=None, help="write the lines as RELIABILITY.md's `resources` section"
    )
    args = parser.parse_args(argv)

    import httpx
    import redis

    from bench.fault_load import QUERIES, recall_body
    from bench.fault_stack import private_stack
    from bench.faults import _seed
    from tempr.services import manager

    with private_stack("tempr-soak-") as stack:
        _seed(stack.api, "soak", 30)
        url = manager.resolve_endpoints(stack.settings).redis_url

        def client(db: int) -> Any:
            return redis.Redis.from_url(f"{url}/{db}")

        lines: list[str] = []

        def say(text: str) -> None:
            print(text, flush=True)
            lines.append(f"- {text}")

        checkpoints = sorted({int(c) for c in args.checkpoints.split(",") if c} | {args.recalls})
        done = {"n": 0, "ok": 0}
        lock = threading.Lock()
        base_mem = int(client(0).info("memory")["used_memory"])
        say(f"start: worker children RSS {_children_rss(stack)} MB, Redis used_memory {base_mem / 1e6:.1f} MB")

        def loop(k: int) -> None:
            with httpx.Client(timeout=60) as http:
                while True:
                    with lock:
                        if done["n"] >= args.recalls:
                            return
                        done["n"] += 1
                        n = done["n"]
                    query = f"{QUERIES[n % len(QUERIES)]} #{n}"
                    r = http.post(f"{stack.api}/v1/default/banks/soak/memories/recall", json=recall_body(query, 30))
                    with lock:
                        done["ok"] += r.status_code == 200
                        if n in checkpoints:
                            mem = int(client(0).info("memory")["used_memory"])
                            per = (mem - base_mem) / max(done["ok"], 1)
                            say(
                                f"after {n} recalls ({done['ok']} ok): worker children RSS {_children_rss(stack)} MB; "
                                f"Redis used_memory {mem / 1e6:.1f} MB = {per / 1024:.1f} KiB per completed recall"
                            )

        threads = [threading.Thread(target=loop, args=(k,), daemon=True) for k in range(args.clients)]
        started = time.time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        time.sleep(2)
        sizes = ", ".join(f"{k} {v / 1024:.1f} KiB" for k, v in _key_sizes(client).items())
        say(f"{done['ok']}/{args.recalls} ok in {time.time() - started:.0f} s; one key of each kind: {sizes}")
        say(f"load average at the end {os.getloadavg()[0]:.1f} (machine shared with other work)")
        if args.out:
            from bench.report import write_section

            when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            head = f"`python -m bench.soak --recalls {args.recalls}` ({args.clients} clients, distinct queries), {when}:\n\n"
            if not args.out.exists():
                args.out.write_text("# Reliability\n\n")
            write_section("resources", head + "\n".join(lines), path=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
