"""Observability end to end: one recall's OpenTelemetry trace covers every hop (gateway -> start ->
four strategies -> fuse (rerank and finish in the same task) -> webhook), the job id is on the workers' log lines,
and the per-queue task metrics count runs, waits and messages dropped as expired.

The gateway runs in this process with an in-memory span exporter; the worker is a real process
on its own broker writing its spans to a JSON-lines file (TEMPR_OTEL_SPANS_FILE), as each host of
a fleet would send them to a collector.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from helpers import ExtraWorker, Receiver, extra_worker, redis_db_url, sample_bank, wait_for

from bench.fleet.trace import load_spans, problems, trace_of
from tempr.services.process import free_port

pytestmark = pytest.mark.integration
WHEN = "2024-06-01T12:00:00+00:00"
ALLOW = "127.0.0.1/32"


@pytest.fixture(scope="module")
def traced(
    resources: Any, stack: Any, tiny_cross_encoder: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ExtraWorker, Path]]:
    tmp = tmp_path_factory.mktemp("traced")
    env = {
        "TEMPR_OTEL_ENABLED": "true",
        "TEMPR_OTEL_SPANS_FILE": str(tmp / "spans" / "worker.jsonl"),
        "TEMPR_RERANKER_MODEL": str(tiny_cross_encoder),
        "TEMPR_CACHE_TTL_S": "0",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp / "metrics"),
        "TEMPR_WEBHOOK_ALLOW_NETWORKS": ALLOW,
    }
    (tmp / "metrics").mkdir()
    with extra_worker(
        "traced",
        tmp,
        env=env,
        broker_url=redis_db_url(stack.redis_url, 10),
        result_backend=resources.endpoints.result_backend,
        concurrency=6,
        loglevel="DEBUG",  # every task's lines (at INFO a worker logs one line per job)
    ) as worker:
        yield worker, tmp


@pytest.fixture()
def gateway_spans(
    traced: tuple[ExtraWorker, Path], resources: Any, make_key: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[TestClient, Any]]:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from tempr.api.app import create_app
    from workers import telemetry

    # the webhook receiver listens on loopback, which callback URLs may name only when allow-listed
    monkeypatch.setattr(resources, "settings", resources.settings.model_copy(update={"webhook_allow_networks": ALLOW}))
    exporter = InMemorySpanExporter()
    provider = telemetry.make_provider(resources.settings, "gateway", exporter=exporter)
    app = create_app(celery_app=traced[0].app, resources=resources, tracer_provider=provider)
    try:
        key = make_key("tracing", ["*"], ["recall"]).key
        with TestClient(app, headers={"Authorization": f"Bearer {key}"}) as client:
            yield client, exporter
    finally:
        telemetry.uninstrument_celery()


def test_one_recall_trace_covers_every_hop(
    traced: tuple[ExtraWorker, Path], gateway_spans: tuple[TestClient, Any], resources: Any, sample_facts: Path
) -> None:
    worker, tmp = traced
    client, exporter = gateway_spans
    bank = sample_bank(resources, sample_facts)
    receiver = Receiver(free_port()).start()
    try:
        body = {"query": "Where does Alice work?", "query_timestamp": WHEN, "callback_url": receiver.url}
        resp = client.post(f"/v1/default/banks/{bank}/memories/recall/async", json=body)
        assert resp.status_code == 202, resp.text
        job_id = resp.json()["job_id"]
        assert receiver.payload(receiver.wait(60))["job_id"] == job_id
    finally:
        receiver.stop()

    def whole_trace() -> list[dict[str, Any]] | None:
        spans = [{**json.loads(s.to_json()), "host": "gateway"} for s in exporter.get_finished_spans()]
        trace = trace_of([*spans, *load_spans(tmp / "spans")], job_id)
        return trace if not problems(trace, webhook=True) else None

    try:
        trace = wait_for(whole_trace, timeout=20, interval=0.2, what="every span of the recall")
    except AssertionError:
        spans = [{**json.loads(s.to_json()), "host": "gateway"} for s in exporter.get_finished_spans()]
        trace = trace_of([*spans, *load_spans(tmp / "spans")], job_id)
        pytest.fail(f"incomplete trace: {problems(trace, webhook=True)}; spans: {[s['name'] for s in trace]}")
    hosts = {s["host"] for s in trace}
    assert hosts == {"gateway", "worker"}
    server = next(s for s in trace if s.get("kind") == "SpanKind.SERVER")
    assert server["attributes"]["tempr.job_id"] == job_id
    runs = [s for s in trace if s["name"].startswith("run/")]
    assert all(s["attributes"].get("tempr.job_id") == job_id for s in runs)

    log = worker.log.read_text(errors="replace")
    for task in ("tempr.recall.start", "tempr.retrieve.strategy", "tempr.fuse.collect"):  # no cross-encoder: 3 steps
        assert any(f"job={job_id}" in line and task in line for line in log.splitlines()), task


def _samples(tmp: Path, name: str) -> list[Any]:
    from workers.metrics import registry

    return [s for fam in registry(None, tmp / "metrics").collect() for s in fam.samples if s.name == name]


def test_task_metrics_per_queue(traced: tuple[ExtraWorker, Path], resources: Any, sample_facts: Path) -> None:
    """Run time and wait per queue after a recall; an expired message counted as such, not run."""
    from tempr.client import recall_async

    worker, tmp = traced
    bank = sample_bank(resources, sample_facts)
    recall_async(bank, app=worker.app, query="Who moved to Berlin?", query_timestamp=WHEN).get(timeout=60)
    runs = {s.labels["queue"] for s in _samples(tmp, "tempr_task_seconds_count") if s.value > 0}
    assert {"fuse", "retrieve"} <= runs
    waits = {s.labels["queue"] for s in _samples(tmp, "tempr_task_wait_seconds_count") if s.value > 0}
    assert {"fuse", "retrieve"} <= waits

    past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=5)
    worker.app.send_task("tempr.retrieve.strategy", args=("semantic", {}, 0.0), expires=past)

    def expired() -> float:
        return sum(
            s.value
            for s in _samples(tmp, "tempr_task_events_total")
            if s.labels.get("event") == "expired" and s.labels.get("queue") == "retrieve"
        )

    assert wait_for(expired, timeout=20, what="the expired message to be counted") >= 1
