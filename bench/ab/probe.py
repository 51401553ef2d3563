"""N LoCoMo questions through a gateway, as misses then as hits: p50/p95/p99 and median stages.

python bench/ab/probe.py BASE_URL N LABEL   (questions from $CONV/questions.jsonl; auth off)

Misses: each request's query_timestamp is moved by microseconds (a new cache key, the same
answer). Hits: the same requests asked twice, the second pass timed. With ``AB_CLIENTS=C`` (and
``AB_SECONDS``, default 30) also throughput: C closed-loop clients asking misses for that long, and
the machine's CPU per recall over that phase (less this client's own).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx


def questions(n: int) -> list[dict[str, Any]]:
    path = Path(os.environ.get("CONV", "/tmp/conv")) / "questions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()][:n]


def ask(client: httpx.Client, q: dict[str, Any], stamp: str) -> tuple[float, dict[str, float]]:
    body = {"query": q["question"], "budget": "mid", "max_tokens": 4096, "query_timestamp": stamp}
    started = time.perf_counter()
    r = client.post(f"/v1/default/banks/{q['bank']}/memories/recall", json=body)
    wall = (time.perf_counter() - started) * 1000
    r.raise_for_status()
    data = r.json()
    return wall, {**(data.get("timings_ms") or {}), "_hit": 1.0 if data.get("cache") == "hit" else 0.0}


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    base, n, label = sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else ""
    qs = questions(n)
    client = httpx.Client(base_url=base, timeout=30)
    for q in qs[:10]:  # warm: models, connections
        ask(client, q, "2020-01-01T00:00:00+00:00")
    # a new second and microsecond base per run: an earlier run's misses (cached for TEMPR_CACHE_TTL_S)
    # must not come back as this run's hits (one salt of 60 repeated within minutes)
    salt, offset = random.randrange(1, 60), random.randrange(1_000_000)
    misses = [
        ask(client, q, q["query_timestamp"][:17] + f"{salt:02d}.{(offset + i) % 1_000_000:06d}+00:00")
        for i, q in enumerate(qs)
    ]
    hit_stamps = [q["query_timestamp"][:17] + f"00.{i:06d}+00:00" for i, q in enumerate(qs)]
    for q, stamp in zip(qs, hit_stamps, strict=True):
        ask(client, q, stamp)
    hits = [ask(client, q, stamp) for q, stamp in zip(qs, hit_stamps, strict=True)]
    for name, samples in (("miss", misses), ("hit", hits)):
        walls = [w for w, _ in samples]
        print(
            f"{label} {name}: n={len(walls)} p50={pct(walls, 50):.1f} p95={pct(walls, 95):.1f} p99={pct(walls, 99):.1f}"
        )
    keys = sorted({k for _, t in misses for k in t} - {"_hit"})
    print({k: round(statistics.median([t.get(k, 0.0) for _, t in misses]), 1) for k in keys})
    throughput(base, qs, label)


def saturate(base: str, qs: list[dict[str, Any]], clients: int, seconds: float) -> tuple[int, int]:
    """Closed-loop misses from ``clients`` threads for ``seconds``: (answered, failed)."""
    counter, stop_at, lock = itertools.count(), time.perf_counter() + seconds, threading.Lock()
    done, failed, hits, salt = [0], [0], [0], random.randrange(1_000_000)  # a new salt per run: never a cache hit

    def loop() -> None:
        with httpx.Client(base_url=base, timeout=30) as client:
            while time.perf_counter() < stop_at:
                i = next(counter)
                q = qs[i % len(qs)]
                try:
                    stamp = q["query_timestamp"][:17] + f"{30 + i % 29:02d}.{(salt + i) % 1_000_000:06d}+00:00"
                    _, timings = ask(client, q, stamp)
                    with lock:
                        done[0] += 1
                        hits[0] += int(timings["_hit"])
                except httpx.HTTPError as exc:
                    with lock:
                        failed[0] += 1
                        if failed[0] <= 3:  # what went wrong, not only how often
                            body = exc.response.text[:300] if isinstance(exc, httpx.HTTPStatusError) else ""
                            print(f"  failed: {type(exc).__name__}: {exc} {body}"[:600])

    threads = [threading.Thread(target=loop) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if hits[0]:
        print(f"  ({hits[0]} of the {done[0]} answers were cache hits)")
    return done[0] - hits[0], failed[0]


def throughput(base: str, qs: list[dict[str, Any]], label: str) -> None:
    clients = int(os.environ.get("AB_CLIENTS", "0"))
    if clients < 1:
        return
    seconds = float(os.environ.get("AB_SECONDS", "30"))
    machine, own = machine_cpu_s(), time.process_time()
    done, failed = saturate(base, qs, clients, seconds)
    served = (machine_cpu_s() - machine) - (time.process_time() - own)  # every process but this client
    print(
        f"{label} throughput: {clients} clients {seconds:.0f} s: {done / seconds:.2f} recalls/s, {failed} failed,"
        f" CPU {1000 * served / max(done, 1):.0f} ms per recall (the machine less this client)"
    )


def machine_cpu_s() -> float:
    """Busy CPU seconds of the whole machine so far (/proc/stat: user+nice+system+irq+softirq)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    busy = sum(int(fields[i]) for i in (0, 1, 2, 5, 6))
    return busy / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
