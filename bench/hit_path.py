"""A cache hit at the gateway, measured (python -m bench.hit_path [--write]).

Issue 12 asks for a cache hit p50 of 5 ms or less at the gateway. This starts a private stack like
`make faults` but with authentication on (the default), ingests the sample bank, asks one
question once (a miss that fills the cache), then asks it again N times over HTTP with an API key,
from one client on a kept-alive connection: p50 / p95 / p99 of the client's wall time. Beside
it, the floor of this HTTP stack on this machine (``GET /healthz``: no auth, no body) and each
step of the hit measured in this process on the same services (the key check, the bank's version
in PostgreSQL, the Redis read, the job record), so a reader sees which part is tempr's and which
is FastAPI's and uvicorn's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.fault_stack import FaultStack, private_stack, sample_facts


class _AuthStack(FaultStack):
    """The fault matrix's private stack, with authentication on as deployed."""

    def env(self) -> None:
        super().env()
        os.environ["TEMPR_AUTH"] = "on"


def _ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


def _timed(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def _steps(bank: str, key: str, body: dict[str, Any], n: int) -> dict[str, float]:
    """Each step of ``Gateway.from_cache`` and of the key check, in this process (median ms)."""
    from tempr.auth import authenticate
    from tempr.jobs.cache import RecallCache, cache_key, stamp_hit
    from tempr.jobs.records import JobStore
    from tempr.jobs.redis_client import cache_redis
    from tempr.recall.models import RecallRequest
    from tempr.store.banks_repo import require_bank
    from workers.resources import get_resources

    res = get_resources()
    request = RecallRequest.model_validate(body)

    def version() -> int:
        with res.engine.connect() as conn:
            return int(require_bank(conn, bank))

    client, breaker = cache_redis(res.endpoints.cache_url)
    cache, store = RecallCache(client, 600, breaker), JobStore(client, 3600, breaker)
    k = cache_key(bank, version(), request, res.settings)
    raw = cache.get_raw(k) or b""
    answer = stamp_hit(raw, 1.0) or b""
    steps = {
        "the API key, checked in PostgreSQL": lambda: authenticate(res.engine, key),
        "the bank's version, from PostgreSQL": version,
        "the cache key (request and settings hashed)": lambda: cache_key(bank, 1, request, res.settings),
        "the cached answer, read from Redis": lambda: cache.get_raw(k),
        "the hit's stamps, spliced in": lambda: stamp_hit(raw, 1.0),
        "the job record, written (one round trip)": lambda: store.create_answered(
            "bench-hit", bank_id=bank, answer_json=answer, request_hash="h"
        ),
        "for comparison: parsing the answer (json.loads)": lambda: json.loads(raw),
        "for comparison: serialising it again (json.dumps)": lambda: json.dumps(json.loads(raw)),
    }
    return {name: round(statistics.median(_timed(fn, n)) * 1000, 3) for name, fn in steps.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=500)
    parser.add_argument("--write", action="store_true", help="write the section into BENCHMARKS.md")
    args = parser.parse_args(argv)

    import httpx

    from bench import report
    from bench.fault_load import recall_body
    from tempr.auth import create_key
    from workers.resources import get_resources

    with private_stack("tempr-hits-", _AuthStack) as stack:
        key = create_key(get_resources().engine, "bench", ["hits"], ["recall", "ingest"]).key
        headers = {"Authorization": f"Bearer {key}"}
        facts = sample_facts()
        body = recall_body("Where does Alice work?", 30)
        url = f"{stack.api}/v1/default/banks/hits/memories/recall"
        with httpx.Client(timeout=60, headers=headers) as http:
            http.post(f"{stack.api}/v1/default/banks/hits/facts", json=facts).raise_for_status()
            first = http.post(url, json=body).json()
            size = len(json.dumps(first))
            for _ in range(50):  # warm: connection, the gateway's pools
                http.post(url, json=body)
            hits = _timed(
                lambda: http.post(url, json=body).json()["cache"] == "hit" or sys.exit("not a hit"), args.hits
            )
            floor = _timed(lambda: http.get(f"{stack.api}/healthz"), args.hits)
        steps = _steps("hits", key, body, 300)
        load = os.getloadavg()
        lines = [
            f"`python -m bench.hit_path --hits {args.hits}`: {report.machine_line()} Load average "
            f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}. Private stack as `make faults`, authentication on; "
            f"one client, one kept-alive connection; the sample bank, budget mid, an answer of "
            f"{len(first['results'])} memories ({size / 1024:.0f} KiB of JSON).",
            "",
            report.table(
                ["request", "p50 (ms)", "p95 (ms)", "p99 (ms)"],
                [
                    ["recall, a cache hit, with an API key", _ms(hits, 0.5), _ms(hits, 0.95), _ms(hits, 0.99)],
                    ["GET /healthz (the HTTP floor)", _ms(floor, 0.5), _ms(floor, 0.95), _ms(floor, 0.99)],
                ],
            ),
            "",
            "Steps of a hit, each timed alone in this process against the same services (median ms):",
            "",
            report.table(["step", "ms"], [[name, ms] for name, ms in steps.items()]),
        ]
        text = "\n".join(lines)
        print(text)
        if args.write:
            report.write_section("cache-hits-gateway", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
