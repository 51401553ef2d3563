"""Missing things are named: an unknown bank is 404 / exit 1, never an empty answer.

Checked at every door: HTTP (sync and async recall, bank reads, delete), the CLI (in-process and
through the workers), and a Celery-native caller that enqueues ``tempr.recall.start`` by name.
An existing bank with no facts answers 200 with no results; ingest still creates banks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import serve_api

pytestmark = pytest.mark.integration
MISSING = "no-such-bank"
DETAIL = "bank 'no-such-bank' does not exist"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def api(resources: Any, worker: Path, make_key: Any) -> Iterator[httpx.Client]:
    key = make_key("t-http").key
    with (
        serve_api(resources) as url,
        httpx.Client(base_url=url, timeout=60, trust_env=False, headers={"Authorization": f"Bearer {key}"}) as client,
    ):
        yield client


@pytest.fixture()
def empty_bank(resources: Any, bank_id: str) -> str:
    """A bank that exists and holds nothing (what a bank is between creation and its first facts)."""
    from tempr.store.ingest_repo import lock_bank

    with resources.engine.begin() as conn:
        lock_bank(conn, bank_id, "english", resources.embedder.space)
    return bank_id


def _tempr(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tempr.cli.main", *args],
        cwd=ROOT,
        env={**os.environ},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", f"/v1/default/banks/{MISSING}/memories/recall", {"query": "Where does Alice work?"}),
        ("post", f"/v1/default/banks/{MISSING}/memories/recall/async", {"query": "Where does Alice work?"}),
        ("get", f"/v1/banks/{MISSING}", None),
        ("delete", f"/v1/default/banks/{MISSING}", None),
    ],
)
def test_http_unknown_bank_is_404_with_its_name(api: httpx.Client, method: str, path: str, body: Any) -> None:
    response = api.request(method.upper(), path, json=body)
    assert response.status_code == 404, response.text
    assert response.json()["detail"] == DETAIL
    assert response.json()["error"] == "NotFound"


def test_http_empty_bank_answers_200_with_no_results(api: httpx.Client, empty_bank: str) -> None:
    response = api.post(f"/v1/default/banks/{empty_bank}/memories/recall", json={"query": "Where does Alice work?"})
    assert response.status_code == 200, response.text
    assert response.json()["results"] == []
    info = api.get(f"/v1/banks/{empty_bank}")
    assert info.status_code == 200 and info.json()["facts"] == 0


def test_http_ingest_still_creates_the_bank(api: httpx.Client, bank_id: str) -> None:
    assert api.get(f"/v1/banks/{bank_id}").status_code == 404
    facts = [{"id": "f1", "text": "Alice joined Google in March 2023.", "occurred_start": "2023-03-01"}]
    assert api.post(f"/v1/default/banks/{bank_id}/facts", json=facts).status_code == 200
    assert api.get(f"/v1/banks/{bank_id}").json()["facts"] == 1
    assert bank_id in {b["bank_id"] for b in api.get("/v1/banks").json()["banks"]}


def test_celery_native_caller_gets_not_found(resources: Any, worker: Path, make_key: Any) -> None:
    """A caller that enqueues by name, without tempr's client, learns the bank is unknown."""
    from tempr.client import get_job
    from workers.app import app

    key = make_key("t-native").key
    result = app.send_task(
        "tempr.recall.start", kwargs={"bank_id": MISSING, "request": {"query": "Where?"}, "api_key": key}
    )
    with pytest.raises(Exception, match="does not exist") as caught:
        result.get(timeout=60)
    assert type(caught.value).__name__ == "NotFound"
    record = get_job(result.id).status()
    assert record["status"] == "failed" and record["error"]["error"] == "NotFound"
    assert record["error"]["message"] == DETAIL


@pytest.mark.parametrize("via_workers", [False, True])
def test_cli_unknown_bank_exits_non_zero_naming_it(worker: Path, via_workers: bool) -> None:
    args = ["recall", "--bank", MISSING, "Where does Alice work?", "--via-workers" if via_workers else "--in-process"]
    done = _tempr(*args)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"error: {DETAIL}" in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_empty_bank_exits_zero_with_no_results(worker: Path, empty_bank: str) -> None:
    done = _tempr("recall", "--bank", empty_bank, "Where does Alice work?")
    assert done.returncode == 0, done.stderr
    assert "(no memories matched)" in done.stdout
