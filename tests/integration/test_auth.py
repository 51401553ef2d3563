"""Authentication and tenancy over a real gateway: 401 without or with a bad key, 403 outside a
key's banks or roles, one tenant's jobs invisible to another, revocation, and keys stored hashed."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import bearer, ensure_bank, serve_api, wait_for
from sqlalchemy import text

pytestmark = pytest.mark.integration
RECALL = "/v1/default/banks/{}/memories/recall"
BODY = {"query": "Where does Alice work?"}


@pytest.fixture(scope="module")
def url(resources: Any, worker: Path) -> Iterator[str]:
    with serve_api(resources) as base:
        yield base


@pytest.fixture()
def http(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=60, trust_env=False) as client:
        yield client


@pytest.fixture()
def prefix() -> str:
    return f"acme{uuid.uuid4().hex[:8]}-"


@pytest.mark.parametrize(
    ("method", "path", "payload"),
    [
        ("post", RECALL.format("b1"), BODY),
        ("post", RECALL.format("b1") + "/async", BODY),
        ("get", "/v1/jobs/some-job", None),
        ("post", "/v1/default/banks/b1/facts", [{"text": "x"}]),
        ("delete", "/v1/default/banks/b1", None),
        ("get", "/metrics", None),
    ],
)
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer nonsense"},
        {"X-API-Key": "tk_0123456789abcdef_" + "x" * 43},
        {"Authorization": "Basic dXNlcjpwYXNz"},
    ],
)
def test_no_key_or_a_bad_key_is_401_on_every_route(
    http: httpx.Client, method: str, path: str, payload: Any, headers: dict[str, str]
) -> None:
    response = http.request(method, path, json=payload, headers=headers)
    assert response.status_code == 401, response.text
    assert response.json()["error"] == "AuthError" and response.json()["field"] == "authorization"
    assert response.headers["www-authenticate"] == "Bearer"


def test_open_routes_hold_no_bank_data(http: httpx.Client) -> None:
    assert http.get("/healthz").status_code == 200
    assert http.get("/openapi.json").status_code == 200


def test_a_key_works_in_either_header(http: httpx.Client, make_key: Any, prefix: str, resources: Any) -> None:
    ensure_bank(resources, prefix + "x")
    key = make_key("t-headers", [prefix + "*"], ["recall"]).key
    for headers in (bearer(key), {"X-API-Key": key}):
        assert http.post(RECALL.format(prefix + "x"), json=BODY, headers=headers).status_code == 200


def test_out_of_scope_bank_or_missing_role_is_403(
    http: httpx.Client, make_key: Any, prefix: str, resources: Any
) -> None:
    ensure_bank(resources, prefix + "a", "exact-" + prefix)
    reader = bearer(make_key("t-scope", [prefix + "*", "exact-" + prefix], ["recall"]).key)
    assert http.post(RECALL.format(prefix + "a"), json=BODY, headers=reader).status_code == 200
    assert http.post(RECALL.format("exact-" + prefix), json=BODY, headers=reader).status_code == 200
    for bank in ("other" + prefix, "exact-" + prefix + "x", prefix[:-1]):
        denied = http.post(RECALL.format(bank), json=BODY, headers=reader)
        assert denied.status_code == 403 and denied.json()["error"] == "Forbidden", bank
    facts = http.post(f"/v1/default/banks/{prefix}a/facts", json=[{"text": "x"}], headers=reader)
    assert facts.status_code == 403 and "ingest" in facts.json()["message"]
    assert http.delete(f"/v1/default/banks/{prefix}a", headers=reader).status_code == 403
    assert http.get("/metrics", headers=reader).status_code == 403
    writer = bearer(make_key("t-scope", [prefix + "*"], ["ingest"]).key)
    written = http.post(f"/v1/default/banks/{prefix}w/facts", json=[{"text": "Ann likes tea."}], headers=writer)
    assert written.status_code == 200 and written.json()["inserted"] == 1
    assert http.post(RECALL.format(prefix + "w"), json=BODY, headers=writer).status_code == 403
    assert http.delete(f"/v1/default/banks/{prefix}w", headers=writer).status_code == 403
    admin = bearer(make_key("t-scope", [prefix + "*"], ["admin"]).key)
    assert http.delete(f"/v1/default/banks/{prefix}w", headers=admin).status_code == 200
    assert http.delete(f"/v1/default/banks/other{prefix}", headers=admin).status_code == 403


def test_a_job_is_readable_only_by_its_tenant(http: httpx.Client, make_key: Any, prefix: str, resources: Any) -> None:
    bank = prefix + "shared"
    ensure_bank(resources, bank)
    a = bearer(make_key(f"tenant-a-{prefix[:-1]}", [bank], ["recall"]).key)
    a2 = bearer(make_key(f"tenant-a-{prefix[:-1]}", [bank], ["recall"]).key)  # same tenant, another key
    b = bearer(make_key(f"tenant-b-{prefix[:-1]}", ["*"], ["admin"]).key)
    job_id = http.post(RECALL.format(bank) + "/async", json=BODY, headers=a).json()["job_id"]
    done = wait_for(
        lambda: (r := http.get(f"/v1/jobs/{job_id}", headers=a)).json()["status"] == "succeeded" and r,
        timeout=60,
        what="job",
    )
    assert done.json()["tenant"] == f"tenant-a-{prefix[:-1]}"
    assert http.get(f"/v1/jobs/{job_id}", headers=a2).status_code == 200
    other = http.get(f"/v1/jobs/{job_id}", headers=b)
    assert other.status_code == 404 and other.json()["error"] == "NotFound"
    assert other.json()["message"] == http.get("/v1/jobs/no-such-job", headers=b).json()["message"].replace(
        "no-such-job", job_id
    )


def test_the_same_idempotency_key_never_crosses_tenants(
    http: httpx.Client, make_key: Any, prefix: str, resources: Any
) -> None:
    bank = prefix + "idem"
    ensure_bank(resources, bank)
    a = bearer(make_key(f"ta-{prefix[:-1]}", [bank], ["recall"]).key)
    b = bearer(make_key(f"tb-{prefix[:-1]}", [bank], ["recall"]).key)
    headers = {"Idempotency-Key": "same-key"}
    job_a = http.post(RECALL.format(bank) + "/async", json=BODY, headers={**a, **headers}).json()
    job_b = http.post(RECALL.format(bank) + "/async", json=BODY, headers={**b, **headers}).json()
    assert job_a["job_id"] != job_b["job_id"] and not job_b["reused"]
    again = http.post(RECALL.format(bank) + "/async", json=BODY, headers={**a, **headers}).json()
    assert again["job_id"] == job_a["job_id"] and again["reused"]


def test_a_key_revoked_elsewhere_is_refused_within_the_auth_cache_ttl(
    http: httpx.Client, resources: Any, make_key: Any, prefix: str
) -> None:
    """Revoked behind this gateway's back (`tempr keys revoke`, another gateway): the gateway trusts
    a key it checked for TEMPR_AUTH_CACHE_S, then asks PostgreSQL again and refuses it."""
    from tempr.auth import revoke

    new = make_key("t-revoke", [prefix + "*"], ["recall"])
    ensure_bank(resources, prefix + "r")
    assert http.post(RECALL.format(prefix + "r"), json=BODY, headers=bearer(new.key)).status_code == 200
    assert revoke(resources.engine, new.id) and not revoke(resources.engine, new.id)
    ttl = resources.settings.auth_cache_s
    deadline = time.monotonic() + ttl + 5  # the TTL, and room for a slow request on a shared machine
    while True:
        refused = http.post(RECALL.format(prefix + "r"), json=BODY, headers=bearer(new.key))
        if refused.status_code != 200 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert refused.status_code == 401 and "revoked" in refused.json()["message"]


def test_keys_are_stored_hashed(resources: Any, make_key: Any) -> None:
    new = make_key("t-hash", ["*"], ["recall"])
    secret = new.key.split("_", 2)[2]
    with resources.engine.connect() as conn:
        row = conn.execute(text("SELECT * FROM api_keys WHERE id = :i"), {"i": new.id}).mappings().one()
        dump = " ".join(str(v) for v in row.values())
        assert new.key not in dump and secret not in dump
        assert row["key_hash"] != secret and len(row["key_hash"]) == 64


def test_a_forged_key_with_a_real_id_is_refused(http: httpx.Client, make_key: Any) -> None:
    new = make_key("t-forge", ["*"], ["recall"])
    forged = f"tk_{new.id}_{'A' * 43}"
    assert http.post(RECALL.format("b1"), json=BODY, headers=bearer(forged)).status_code == 401


def test_send_task_callers_are_checked_by_the_start_task(resources: Any, worker: Path, make_key: Any) -> None:
    """An app on the broker passes api_key (or a tenant); out of scope, the job fails with Forbidden."""
    from workers.app import app

    key = make_key("t-celery", ["celery-ok-*"], ["recall"]).key
    ensure_bank(resources, "celery-ok-1")
    ok = app.send_task("tempr.recall.start", kwargs={"bank_id": "celery-ok-1", "request": BODY, "api_key": key})
    assert ok.get(timeout=60)["bank_id"] == "celery-ok-1"
    for kwargs in (
        {"api_key": key, "bank_id": "celery-other"},
        {"tenant": "t-celery", "bank_id": "celery-other"},
        {"bank_id": "celery-ok-2"},
        {"api_key": "tk_0123456789abcdef_" + "y" * 43, "bank_id": "celery-ok-3"},
    ):
        refused = app.send_task("tempr.recall.start", kwargs={"request": BODY, **kwargs})
        with pytest.raises(Exception) as info:
            refused.get(timeout=60)
        assert type(info.value).__name__ in ("AuthError", "Forbidden"), (kwargs, info.value)
    ingest = app.send_task(
        "tempr.ingest.facts", kwargs={"bank_id": "celery-ok-1", "facts": [{"text": "x"}], "api_key": key}
    ).get(timeout=60)
    assert ingest["error"] == "Forbidden"


def test_an_admin_key_manages_its_own_tenants_keys_within_its_banks(
    http: httpx.Client, make_key: Any, prefix: str, resources: Any
) -> None:
    tenant = f"keys-{prefix[:-1]}"
    ensure_bank(resources, prefix + "x1")
    admin = bearer(make_key(tenant, [prefix + "*"], ["admin"]).key)
    made = http.post("/v1/keys", json={"banks": [prefix + "x*"], "roles": ["recall"]}, headers=admin)
    assert made.status_code == 201, made.text
    new = made.json()
    assert new["tenant"] == tenant and new["key"].startswith("tk_") and len(new["webhook_secret"]) >= 32
    assert http.post(RECALL.format(prefix + "x1"), json=BODY, headers=bearer(new["key"])).status_code == 200
    assert http.post("/v1/keys", json={"banks": ["*"]}, headers=admin).status_code == 403
    assert http.post("/v1/keys", json={"banks": [prefix + "y"], "roles": ["root"]}, headers=admin).status_code == 422
    listed = http.get("/v1/keys", headers=admin).json()["keys"]
    assert {k["tenant"] for k in listed} == {tenant} and new["id"] in {k["id"] for k in listed}
    assert all("key" not in k and "key_hash" not in k for k in listed)
    other_admin = bearer(make_key(f"other-{prefix[:-1]}", ["*"], ["admin"]).key)
    assert http.delete(f"/v1/keys/{new['id']}", headers=other_admin).status_code == 404
    assert http.post("/v1/keys", json={"banks": ["x"]}, headers=bearer(new["key"])).status_code == 403
    assert http.delete(f"/v1/keys/{new['id']}", headers=admin).json() == {"id": new["id"], "revoked": True}
    assert http.post(RECALL.format(prefix + "x1"), json=BODY, headers=bearer(new["key"])).status_code == 401


def test_the_keys_cli(resources: Any) -> None:
    def tempr(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tempr.cli.main", "keys", *args],
            capture_output=True,
            text=True,
            timeout=180,
            env=dict(os.environ),
        )

    made = tempr("create", "--tenant", "cli-t", "--banks", "cli-*,other", "--roles", "recall,ingest", "--json")
    assert made.returncode == 0, made.stderr
    new = json.loads(made.stdout)
    assert new["banks"] == ["cli-*", "other"] and new["roles"] == ["ingest", "recall"]
    assert new["id"] in tempr("list", "--tenant", "cli-t").stdout
    bad = tempr("create", "--tenant", "cli-t", "--banks", "bad bank", "--json")
    assert bad.returncode == 2 and "banks" in bad.stderr and "Traceback" not in bad.stderr
    assert tempr("revoke", new["id"]).returncode == 0
    assert "revoked" in tempr("list", "--tenant", "cli-t").stdout
    assert tempr("revoke", new["id"]).returncode == 1
    key_file = resources.settings.api_key_file
    before = key_file.read_text()
    again = tempr("local")
    assert again.returncode == 0 and "using the local API key" in again.stdout
    assert key_file.read_text() == before and stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_the_local_key_is_made_once_and_remade_when_revoked(resources: Any, tmp_path: Path) -> None:
    """`tempr keys local` and the benchmarks' set-up: reuse a working saved key, else make one (0600)."""
    from tempr.auth import authenticate, ensure_local_key, revoke

    settings = resources.settings.model_copy(update={"state_dir": tmp_path, "api_key": None})
    first, new = ensure_local_key(settings, resources.engine)
    assert new and stat.S_IMODE(settings.api_key_file.stat().st_mode) == 0o600
    key = settings.api_key_file.read_text().strip()
    authenticate(resources.engine, key).require("admin")
    assert ensure_local_key(settings, resources.engine) == (str(settings.api_key_file), False)
    assert settings.api_key_file.read_text().strip() == key
    assert revoke(resources.engine, first)
    second, new = ensure_local_key(settings, resources.engine)
    assert new and second != first and settings.api_key_file.read_text().strip() != key
