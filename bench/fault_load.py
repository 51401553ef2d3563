"""Load for the fault matrix: recall and ingest traffic over HTTP, each answer classified.

A recall answer is ``ok`` (200, the baseline's result ids), ``degraded`` (200, flagged degraded:
some strategy could not run), ``clean`` (a 4xx/5xx other than 500 with tempr's JSON error body),
``500`` (a 500, or an error without the JSON body), ``hung`` (no answer by the deadline + grace +
5 s) or ``wrong`` (200, not degraded, other result ids than the baseline). An ingest is ``ok``
(200: its facts must be in the bank at the end, else they count as lost), ``clean``, ``500`` or
``hung``. A small webhook receiver can be stopped, restarted and slowed on the same port.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

WHEN = "2024-06-01T12:00:00+00:00"
QUERIES = (
    "Where does Alice work?",
    "Which city did Bob move to?",
    "Why did Bob leave?",
    "Who is Carol?",
    "What did Alice do in 2023?",
    "When did Alice finish her PhD?",
)


@dataclass
class Outcome:
    kind: str
    started: float
    finished: float
    status: int | None = None
    job_id: str | None = None
    detail: str = ""


def recall_body(query: str, timeout_s: float, callback_url: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"query": query, "query_timestamp": WHEN, "timeout_s": timeout_s}
    if callback_url:
        body["callback_url"] = callback_url
    return body


def _error_kind(response: httpx.Response) -> str:
    try:
        payload = response.json()
    except ValueError:
        return "500"
    if response.status_code == 500 or not isinstance(payload, dict) or "error" not in payload:
        return "500"
    return "clean"


@dataclass
class Load:
    """``threads`` recall loops (and one ingest loop) against the gateway until ``stop``."""

    api: str
    bank: str
    baseline: dict[str, list[str]]
    timeout_s: float
    grace_s: float = 2.0
    threads: int = 3
    callback_url: str | None = None
    ingest_bank: str | None = None
    recalls: list[Outcome] = field(default_factory=list)
    ingests: list[Outcome] = field(default_factory=list)
    acked_facts: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _workers: list[threading.Thread] = field(default_factory=list)
    _ids: Any = field(default_factory=itertools.count)

    def start(self) -> Load:
        for n in range(self.threads):
            self._workers.append(threading.Thread(target=self._recall_loop, args=(n,), daemon=True))
        if self.ingest_bank:
            self._workers.append(threading.Thread(target=self._ingest_loop, daemon=True))
        for thread in self._workers:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._workers:
            thread.join(self.timeout_s + self.grace_s + 30)

    def _recall_loop(self, n: int) -> None:
        client_timeout = self.timeout_s + self.grace_s + 5
        with httpx.Client(timeout=client_timeout) as client:
            for i in itertools.count(n):
                if self._stop.is_set():
                    return
                query = QUERIES[i % len(QUERIES)]
                self.recalls.append(self._one_recall(client, query))
                time.sleep(0.05)

    def _one_recall(self, client: httpx.Client, query: str) -> Outcome:
        url = f"{self.api}/v1/default/banks/{self.bank}/memories/recall"
        started = time.time()
        try:
            response = client.post(url, json=recall_body(query, self.timeout_s, self.callback_url))
        except httpx.TimeoutException:
            return Outcome("hung", started, time.time(), detail="no answer in time")
        except httpx.HTTPError as exc:
            return Outcome("500", started, time.time(), detail=f"gateway unreachable: {exc}")
        done = time.time()
        if response.status_code != 200:
            kind = _error_kind(response)
            return Outcome(kind, started, done, response.status_code, detail=response.text[:200])
        payload = response.json()
        ids = [r["id"] for r in payload.get("results", [])]
        job_id = payload.get("job_id") or response.headers.get("X-Tempr-Job-Id")
        if payload.get("degraded"):
            return Outcome("degraded", started, done, 200, job_id, ",".join(payload["degraded"]))
        kind = "ok" if ids == self.baseline[query] else "wrong"
        return Outcome(kind, started, done, 200, job_id, "" if kind == "ok" else f"ids {ids[:5]}")

    def _ingest_loop(self) -> None:
        with httpx.Client(timeout=self.timeout_s + 30) as client:
            while not self._stop.is_set():
                n = next(self._ids)
                facts = [
                    {"id": f"f{int(time.time() * 1000)}-{n}-{k}", "text": f"Fault drill note {n}.{k}: all is well."}
                    for k in range(2)
                ]
                started = time.time()
                try:
                    response = client.post(f"{self.api}/v1/default/banks/{self.ingest_bank}/facts", json=facts)
                except httpx.TimeoutException:
                    self.ingests.append(Outcome("hung", started, time.time()))
                    continue
                except httpx.HTTPError as exc:
                    self.ingests.append(Outcome("500", started, time.time(), detail=str(exc)))
                    continue
                if response.status_code == 200:
                    self.acked_facts.extend(f["id"] for f in facts)
                    self.ingests.append(Outcome("ok", started, time.time(), 200))
                else:
                    kind = _error_kind(response)
                    self.ingests.append(
                        Outcome(kind, started, time.time(), response.status_code, None, response.text[:200])
                    )
                time.sleep(0.5)


@dataclass
class Receiver:
    """A webhook receiver on 127.0.0.1:``port`` that records job ids; ``delay_s`` slows it down."""

    port: int
    delay_s: float = 0.0
    delivered: dict[str, float] = field(default_factory=dict)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if receiver.delay_s:
                    time.sleep(receiver.delay_s)
                try:
                    receiver.delivered.setdefault(json.loads(body)["job_id"], time.time())
                except (ValueError, KeyError):
                    pass
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
