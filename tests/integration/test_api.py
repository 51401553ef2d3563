"""The HTTP gateway over a real socket (uvicorn in a thread), the session worker behind it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import bearer, ensure_bank, entry_context, sample_bank, serve_api, wait_for

from tempr.recall.models import RecallRequest, RecallResponse
from tempr.recall.pipeline import recall

pytestmark = pytest.mark.integration
WHEN = datetime(2024, 6, 1, 12, tzinfo=UTC).isoformat()
RECALL = "/v1/default/banks/{}/memories/recall"


@pytest.fixture(scope="module")
def api(resources: Any, worker: Path, make_key: Any) -> Iterator[httpx.Client]:
    """A client of a real gateway, sending an admin key over every bank (authentication is on)."""
    key = make_key("api-tests", ["*"], ["admin"]).key
    with (
        serve_api(resources) as url,
        httpx.Client(base_url=url, timeout=60, trust_env=False, headers=bearer(key)) as client,
    ):
        yield client


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in ("cache", "timings_ms")}


def _direct(resources: Any, bank: str, body: dict[str, Any]) -> dict[str, Any]:
    ctx = entry_context(resources, bank)
    return recall(bank, RecallRequest.model_validate(body), ctx).model_dump(mode="json")


def test_http_recall_answers_like_the_entry_point(api: httpx.Client, resources: Any, sample_facts: Path) -> None:
    bank = sample_bank(resources, sample_facts)
    body = {"query": "Where did Bob move to?", "query_timestamp": WHEN, "budget": "mid"}
    response = api.post(RECALL.format(bank), json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["cache"] == "miss" and data["results"]
    assert comparable(data) == comparable(_direct(resources, bank, body))
    RecallResponse.model_validate(data)


def test_async_recall_job_status_and_idempotency(api: httpx.Client, resources: Any, sample_facts: Path) -> None:
    bank = sample_bank(resources, sample_facts)
    body = {"query": "What does Alice prefer for data work?", "query_timestamp": WHEN}
    key = {"Idempotency-Key": f"k-{time.time_ns()}"}
    first = api.post(RECALL.format(bank) + "/async", json=body, headers=key)
    assert first.status_code == 202, first.text
    job_id = first.json()["job_id"]
    again = api.post(RECALL.format(bank) + "/async", json=body, headers=key)
    assert again.json()["job_id"] == job_id and again.json()["reused"] is True
    clash = api.post(RECALL.format(bank) + "/async", json={**body, "query": "Something else?"}, headers=key)
    assert clash.status_code == 422 and clash.json()["field"] == "idempotency_key"
    in_body = {**body, "idempotency_key": key["Idempotency-Key"] + "-b"}
    assert (
        api.post(RECALL.format(bank) + "/async", json=in_body).json()["job_id"]
        == api.post(RECALL.format(bank) + "/async", json=in_body).json()["job_id"]
    )

    job = wait_for(
        lambda: (j := api.get(f"/v1/jobs/{job_id}").json())["status"] == "succeeded" and j,
        timeout=60,
        what="job to succeed",
    )
    assert comparable(job["result"]) == comparable(_direct(resources, bank, body))
    # the synchronous route with the same key returns that same job's answer
    same = api.post(RECALL.format(bank), json=body, headers=key)
    assert same.status_code == 200 and comparable(same.json()) == comparable(job["result"])


@pytest.mark.parametrize(
    ("method", "path", "payload", "status", "field"),
    [
        ("post", RECALL.format("b1"), {"query": ""}, 422, "query"),
        ("post", RECALL.format("b1"), {"query": "ok", "bogus": 1}, 422, "bogus"),
        ("post", RECALL.format("b1"), {"query": "ok", "budget": "huge"}, 422, "budget"),
        ("post", RECALL.format("b1"), {"query": "ok", "max_tokens": -1}, 422, "max_tokens"),
        # past 64 bits the fleet's JSON decoder reads a float: refused here, where it was a 502 later
        ("post", RECALL.format("b1"), {"query": "ok", "max_tokens": 10**20}, 422, "max_tokens"),
        (
            "post",
            RECALL.format("b1"),
            {"query": "ok", "include": {"chunks": {"max_tokens": 2**31}}},
            422,
            "include.chunks.max_tokens",
        ),
        ("post", RECALL.format("b1"), {"query": "ok", "timeout_s": 0}, 422, "timeout_s"),
        (
            "post",
            RECALL.format("b1"),
            {"query": "ok", "temporal_window": {"start": "2024-02-01", "end": "2024-01-01"}},
            422,
            "temporal_window",
        ),
        (
            "post",
            RECALL.format("b1"),
            {"query": "ok", "callback_url": "http://169.254.169.254/latest"},
            422,
            "callback_url",
        ),
        (
            "post",
            RECALL.format("b1") + "/async",
            {"query": "ok", "callback_url": "http://metadata.google.internal/"},
            422,
            "callback_url",
        ),
        ("post", RECALL.format("bad%20bank"), {"query": "ok"}, 422, "bank_id"),
        ("post", RECALL.format("b1"), "{not json", 400, "body"),
        ("post", RECALL.format("b1"), None, 422, None),
        ("get", "/v1/jobs/no-such-job", None, 404, None),
        ("delete", "/v1/default/banks/t-never-existed", None, 404, None),
        ("post", "/v1/default/banks/b1/facts", {"text": "not an array"}, 422, None),
        (
            "post",
            "/v1/default/banks/b1/facts",
            [{"text": "ok"}, {"text": "bad", "occurred_start": "soon"}],
            422,
            "occurred_start",
        ),
        ("post", "/v1/default/banks/b1/facts", [{"text": "ok"}, {"text": "x", "nope": 1}], 422, "nope"),
        ("post", "/v1/default/banks/b1/facts", ["just a string"], 422, None),
        ("post", RECALL.format("b1"), {"query": "ok\u0000"}, 422, "query"),
        ("post", RECALL.format("b1"), '{"query": "ok \\ud800"}', 422, "query"),
        ("post", RECALL.format("b1"), {"query": "ok", "tags": ["a", "b\u0000"]}, 422, "tags.1"),
        ("post", RECALL.format("b1"), '{"query": "ok", "tags": ["\\udfff"]}', 422, "tags.0"),
        ("post", RECALL.format("b1"), {"query": "word " * 1601}, 422, "query"),
        ("post", RECALL.format("b1"), {"query": "word " * 501}, 422, "query"),
        (
            "post",
            RECALL.format("b1"),
            {"query": "ok", "query_timestamp": "0001-01-01T00:00:00+05:00"},
            422,
            "query_timestamp",
        ),
        (
            "post",
            RECALL.format("b1"),
            {"query": "ok", "query_timestamp": "9999-12-31T23:00:00-05:00"},
            422,
            "query_timestamp",
        ),
        (
            "post",
            RECALL.format("b1"),
            {"query": "what happened last year?", "query_timestamp": "0001-01-01"},
            422,
            "query_timestamp",
        ),
        (
            "post",
            RECALL.format("b1"),
            {"query": "what happens next year?", "query_timestamp": "9999-12-31"},
            422,
            "query_timestamp",
        ),
        (
            "post",
            RECALL.format("b1"),
            {"query": "ok", "temporal_window": {"start": "0001-01-01T00:00:00+01:00", "end": "2024-01-01"}},
            422,
            "temporal_window",
        ),
        ("post", RECALL.format("b1%0A"), {"query": "ok"}, 422, "bank_id"),
        (
            "post",
            RECALL.format("b1"),
            {"query": "what happened 200 years ago?", "query_timestamp": "0150-01-01"},
            422,
            "query",
        ),
        (
            "post",
            RECALL.format("b1"),
            {"query": "what happens in 500 years?", "query_timestamp": "9800-01-01"},
            422,
            "query",
        ),
        ("post", "/v1/default/banks/b1/facts", [{"text": "nul \u0000 here"}], 422, "text"),
        ("post", "/v1/default/banks/b1/facts", '[{"text": "lone \\ud83d surrogate"}]', 422, "text"),
        ("post", "/v1/default/banks/b1/facts", [{"text": "ok", "tags": ["\u0000"]}], 422, "tags.0"),
        ("post", "/v1/default/banks/b1/facts", [{"text": "ok", "metadata": {"k": "v\u0000"}}], 422, "metadata.k"),
        ("post", "/v1/default/banks/b1/facts", [{"text": "ok", "entities": ["\u0000"]}], 422, "entities.0"),
        (
            "post",
            "/v1/default/banks/b1/facts",
            [{"text": "ok", "occurred_start": "0001-01-01T00:00:00+05:00"}],
            422,
            "occurred_start",
        ),
        (
            "post",
            "/v1/default/banks/b1/facts",
            [{"text": "ok", "mentioned_at": "9999-12-31T23:59:59-01:00"}],
            422,
            "mentioned_at",
        ),
        ("post", "/v1/default/banks/b1/facts", [{"text": "x"}] * 1001, 422, None),
        ("get", "/v1/nothing-here", None, 404, None),
        ("put", "/v1/jobs/x", None, 405, None),
    ],
)
def test_bad_input_is_a_4xx_with_a_json_body(
    api: httpx.Client, method: str, path: str, payload: Any, status: int, field: str | None, resources: Any
) -> None:
    ensure_bank(resources, "b1")  # the bank exists: what is refused is the input, not an unknown bank
    if isinstance(payload, str):
        response = api.request(method, path, content=payload, headers={"Content-Type": "application/json"})
    elif payload is None:
        response = api.request(method, path)
    else:
        response = api.request(method, path, json=payload)
    assert response.status_code == status, response.text
    data = response.json()
    assert set(data) >= {"error", "message", "field"} and data["message"]
    assert data["field"] == field
    assert "Traceback" not in response.text


def test_facts_line_numbers(api: httpx.Client) -> None:
    bad = api.post(
        "/v1/default/banks/b1/facts", json=[{"text": "ok"}, {"text": "ok2"}, {"text": "x", "occurred_start": "soon"}]
    )
    assert bad.json()["line"] == 3 and bad.json()["error"] == "IngestValidationError"


def test_ingest_recall_cache_and_delete_over_http(api: httpx.Client, bank_id: str) -> None:
    facts = [
        {"id": "1", "text": "Zed plays the cello in an orchestra.", "entities": ["Zed"]},
        {"id": "2", "text": "Zed lives in Porto.", "entities": ["Zed", "Porto"]},
    ]
    report = api.post(f"/v1/default/banks/{bank_id}/facts", json=facts)
    assert report.status_code == 200 and report.json()["inserted"] == 2
    assert api.post(f"/v1/default/banks/{bank_id}/facts", json=facts).json()["skipped"] == 2
    body = {"query": "What instrument does Zed play?", "query_timestamp": WHEN}
    first_response = api.post(RECALL.format(bank_id), json=body)
    miss_job, first = first_response.headers["X-Tempr-Job-Id"], first_response.json()
    second = api.post(RECALL.format(bank_id), json=body).json()
    assert (first["cache"], second["cache"]) == ("miss", "hit")
    assert "cello" in first["results"][0]["text"]
    assert [r["id"] for r in second["results"]] == [r["id"] for r in first["results"]]
    assert {"analyse", "strategies", "queue.fuse"} <= set(first["timings_ms"])  # analysed here, then the chord
    assert "queue.start" not in first["timings_ms"]  # a miss started at the gateway: no start task
    assert "strategies" not in second["timings_ms"]  # the gateway answered from the cache
    job = api.get(f"/v1/jobs/{miss_job}").json()
    assert job["status"] == "succeeded" and job["result"]["cache"] == "miss" and job["bank_id"] == bank_id
    hit = api.post(RECALL.format(bank_id), json=body)
    job = api.get(f"/v1/jobs/{hit.headers['X-Tempr-Job-Id']}").json()
    assert job["status"] == "succeeded" and job["result"]["cache"] == "hit"
    assert job["result"] == hit.json() and job["bank_id"] == bank_id  # the record keeps the answer sent
    keyed = api.post(RECALL.format(bank_id), json=body, headers={"Idempotency-Key": f"k-{bank_id}"}).json()
    assert keyed["cache"] == "hit" and "queue.start" in keyed["timings_ms"]  # keyed requests: through the workers
    api.post(f"/v1/default/banks/{bank_id}/facts", json=[{"id": "3", "text": "Zed also plays the viola."}])
    third = api.post(RECALL.format(bank_id), json=body).json()
    assert third["cache"] == "miss" and len(third["results"]) == 3
    assert api.delete(f"/v1/default/banks/{bank_id}").json() == {"bank_id": bank_id, "deleted": True}
    gone = api.post(RECALL.format(bank_id), json=body)  # a deleted bank is unknown, not empty
    assert gone.status_code == 404 and gone.json()["detail"] == f"bank {bank_id!r} does not exist"
    assert api.delete(f"/v1/default/banks/{bank_id}").status_code == 404


def test_deadline_past_is_504_with_the_job_id(api: httpx.Client, resources: Any, sample_facts: Path) -> None:
    bank = sample_bank(resources, sample_facts)
    response = api.post(RECALL.format(bank), json={"query": "Where does Alice work?", "timeout_s": 0.001})
    assert response.status_code == 504, response.text
    data = response.json()
    assert data["error"] == "RecallTimeout" and data["job_id"]
    job = api.get(f"/v1/jobs/{data['job_id']}").json()
    assert job["status"] == "failed" and job["error"]["error"] == "RecallTimeout"


def test_openapi_docs_and_metrics(api: httpx.Client) -> None:
    assert api.get("/docs").status_code == 200
    paths = api.get("/openapi.json").json()["paths"]
    for route in (
        "/v1/default/banks/{bank_id}/memories/recall",
        "/v1/default/banks/{bank_id}/memories/recall/async",
        "/v1/jobs/{job_id}",
        "/v1/default/banks/{bank_id}/facts",
        "/v1/default/banks/{bank_id}",
    ):
        assert route in paths, route
    metrics = api.get("/metrics").text
    for name in (
        'tempr_queue_depth{queue="retrieve"}',
        'tempr_queue_depth{queue="rerank"}',
        "tempr_cache_hit_ratio",
        'tempr_stage_seconds_count{stage="total"}',
        'tempr_recalls_total{outcome="succeeded"}',
        'tempr_unit_cache_rows_total{source="postgres"}',  # the learned ranker's rows, read once
    ):
        assert name in metrics, name


def test_without_gateway_analysis_a_miss_takes_the_start_task(
    resources: Any, worker: Path, make_key: Any, sample_facts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TEMPR_GATEWAY_ANALYSE=false: the gateway loads no model and every miss is the start task's."""
    bank = sample_bank(resources, sample_facts)
    monkeypatch.setattr(resources, "settings", resources.settings.model_copy(update={"gateway_analyse": False}))
    key = make_key("api-no-analysis", ["*"], ["recall"]).key
    body = {"query": "Where did Bob move to, and when?", "query_timestamp": WHEN}
    with (
        serve_api(resources) as url,
        httpx.Client(base_url=url, timeout=60, trust_env=False, headers=bearer(key)) as client,
    ):
        data = client.post(RECALL.format(bank), json=body).json()
    assert data["cache"] == "miss" and data["results"]
    assert {"queue.start", "analyse", "strategies"} <= set(data["timings_ms"])  # analysed by the start task
    assert comparable(data) == comparable(_direct(resources, bank, body))
