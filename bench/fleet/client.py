"""The client host's programs (run inside its network namespace by the fleet runner).

``python -m bench.fleet.client load ...``     closed-loop recalls against the gateway; one JSON
                                              line per request (times, status, outcome) to --out
``python -m bench.fleet.client async ...``    async recalls with a callback_url; one line per request
``python -m bench.fleet.client receive ...``  the webhook receiver: one JSON line per POST
``python -m bench.fleet.client ping ...``     wait until named Celery workers answer a ping

Outcomes: ok (the reference answer), degraded (answered, a strategy flagged as failed), wrong
(answered, not degraded, other ids than the reference), clean (a 4xx/502/503/504 with a JSON body),
e500 (any other 5xx, or a body that is not JSON), hung (no answer within --hang-s), refused (no
connection: nothing was enqueued).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

WHEN = "2024-06-01T12:00:00+00:00"
QUERIES = [
    "Where does Alice work?",
    "What did Bob do last summer?",
    "Who moved to Berlin?",
    "When was the product launch?",
    "What does Carol like to eat?",
]


def body(query: str, timeout_s: float, callback_url: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"query": query, "query_timestamp": WHEN, "budget": "mid", "timeout_s": timeout_s}
    if callback_url:
        out["callback_url"] = callback_url
    return out


def classify(status: int | None, payload: Any, ref: dict[str, list[str]], query: str) -> str:
    if status is None:
        return "hung"
    if status == 200 and isinstance(payload, dict):
        ids = [r.get("id") for r in payload.get("results", [])]
        if payload.get("degraded"):
            return "degraded"
        return "ok" if query not in ref or ids == ref[query] else "wrong"
    if status in (400, 404, 409, 422, 429, 502, 503, 504) and isinstance(payload, dict):
        return "clean"
    return "e500"


def _one(client: httpx.Client, url: str, query: str, args: argparse.Namespace, ref: dict[str, list[str]]) -> dict:
    sent = time.time()
    status: int | None = None
    payload: Any = None
    outcome: str
    try:
        resp = client.post(url, json=body(query, args.timeout_s), timeout=args.hang_s)
        status = resp.status_code
        try:
            payload = resp.json()
        except ValueError:
            payload = None
        outcome = classify(status, payload, ref, query)
    except httpx.TimeoutException:
        outcome = "hung"
    except httpx.TransportError:
        outcome = "refused" if time.time() - sent < 1.0 else "hung"
    done = time.time()
    row = {"sent": sent, "done": done, "status": status, "outcome": outcome, "query": query}
    if isinstance(payload, dict):
        row["job_id"] = payload.get("job_id")
        row["ids"] = [r.get("id") for r in payload.get("results", [])] if status == 200 else None
        row["total_ms"] = (payload.get("timings_ms") or {}).get("total") if status == 200 else None
    row["late"] = status == 200 and done - sent > args.timeout_s + 2.0
    return row


def load(args: argparse.Namespace) -> int:
    """Closed loop: --concurrency threads, each sending the next query until --duration passes."""
    ref = json.loads(Path(args.ref).read_text()) if args.ref else {}
    url = f"{args.gateway}/v1/default/banks/{args.bank}/memories/recall"
    stop_at = time.time() + args.duration
    lock = threading.Lock()
    out = open(args.out, "a", encoding="utf-8")  # noqa: SIM115 - closed below
    counter = [0]

    def loop(n: int) -> None:
        with httpx.Client(trust_env=False, headers=_auth()) as client:
            while time.time() < stop_at and (not args.count or counter[0] < args.count):
                with lock:
                    i = counter[0]
                    counter[0] += 1
                row = _one(client, url, QUERIES[i % len(QUERIES)], args, ref)
                with lock:
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                if row["outcome"] == "refused":
                    time.sleep(0.2)

    threads = [threading.Thread(target=loop, args=(n,)) for n in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.close()
    return 0


def fire_async(args: argparse.Namespace) -> int:
    """Send --rate async recalls per second for --duration; one line per request (job id or error)."""
    url = f"{args.gateway}/v1/default/banks/{args.bank}/memories/recall/async"
    stop_at = time.time() + args.duration
    i = 0
    with open(args.out, "a", encoding="utf-8") as out, httpx.Client(trust_env=False, headers=_auth()) as client:
        while time.time() < stop_at:
            query = QUERIES[i % len(QUERIES)]
            sent = time.time()
            row: dict[str, Any] = {"sent": sent, "query": query, "status": None, "job_id": None}
            try:
                resp = client.post(url, json=body(query, args.timeout_s, args.callback), timeout=5)
                row["status"] = resp.status_code
                if resp.status_code == 202:
                    row["job_id"] = resp.json()["job_id"]
                    row["outcome"] = "accepted"
                else:
                    row["outcome"] = classify(resp.status_code, _json(resp), {}, query)
            except httpx.TransportError:
                row["outcome"] = "refused"
            out.write(json.dumps(row) + "\n")
            out.flush()
            i += 1
            time.sleep(max(0.0, sent + 1.0 / args.rate - time.time()))
    return 0


def _json(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        return None


def _auth() -> dict[str, str]:
    import os

    key = os.environ.get("TEMPR_FLEET_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


def receive(args: argparse.Namespace) -> int:
    out = open(args.out, "a", encoding="utf-8")  # noqa: SIM115 - the process's lifetime
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                payload = json.loads(raw)
            except ValueError:
                payload = {}
            row = {
                "at": time.time(),
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "job_id": payload.get("job_id"),
                "status": payload.get("status"),
            }
            with lock:
                out.write(json.dumps(row) + "\n")
                out.flush()
            self.send_response(200)
            self.end_headers()

        def log_message(self, *_: Any) -> None:
            pass

    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()
    return 0


def ping(args: argparse.Namespace) -> int:
    """Exit 0 once every named worker answers, printing how long that took; 1 past --timeout."""
    from workers.app import make_app

    app = make_app(args.broker, args.broker)
    began = time.time()
    wanted = set(args.names.split(","))
    while time.time() - began < args.timeout:
        replies = app.control.ping(timeout=0.5) or []
        seen = {name.split("@")[0] for reply in replies for name in reply}
        if wanted <= seen:
            print(json.dumps({"seconds": round(time.time() - began, 2)}))
            return 0
    print(json.dumps({"seconds": None}))
    return 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench.fleet.client")
    sub = p.add_subparsers(dest="cmd", required=True)
    ld = sub.add_parser("load")
    ld.add_argument("--gateway", required=True)
    ld.add_argument("--bank", required=True)
    ld.add_argument("--out", required=True)
    ld.add_argument("--ref", default=None)
    ld.add_argument("--concurrency", type=int, default=4)
    ld.add_argument("--duration", type=float, default=20)
    ld.add_argument("--count", type=int, default=0)
    ld.add_argument("--timeout-s", type=float, default=8)
    ld.add_argument("--hang-s", type=float, default=30)
    ld.set_defaults(func=load)
    fa = sub.add_parser("async")
    fa.add_argument("--gateway", required=True)
    fa.add_argument("--bank", required=True)
    fa.add_argument("--out", required=True)
    fa.add_argument("--callback", required=True)
    fa.add_argument("--rate", type=float, default=4)
    fa.add_argument("--duration", type=float, default=10)
    fa.add_argument("--timeout-s", type=float, default=20)
    fa.set_defaults(func=fire_async)
    rc = sub.add_parser("receive")
    rc.add_argument("--host", required=True)
    rc.add_argument("--port", type=int, required=True)
    rc.add_argument("--out", required=True)
    rc.set_defaults(func=receive)
    pg = sub.add_parser("ping")
    pg.add_argument("--broker", required=True)
    pg.add_argument("--names", required=True)
    pg.add_argument("--timeout", type=float, default=60)
    pg.set_defaults(func=ping)
    args = p.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
