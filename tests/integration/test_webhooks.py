"""Webhook callbacks: signed delivery to a local receiver, retries with backoff, refusals, error
payloads and the deadline watchdog. A worker started here has a 0.1 s backoff; jobs are signed with
their tenant's secret (the session's local key's tenant here), and jobs without a tenant with
TEMPR_WEBHOOK_SECRET, which only that worker has.

Loopback is refused by default (SSRF guard), so the receiver's network is allow-listed explicitly:
in the worker's environment and in the settings this process enqueues with."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import ExtraWorker, Receiver, extra_worker, redis_db_url, sample_bank, wait_for

from config.errors import RecallTimeout, ValidationError
from tempr.client import get_job, recall_async
from tempr.jobs.webhooks import ATTEMPT_HEADER, JOB_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from tempr.services.process import free_port

pytestmark = pytest.mark.integration
SECRET = "test-webhook-secret-for-jobs-without-a-tenant"
ALLOW = "127.0.0.1/32"
TENANT_SECRET: dict[str, str] = {}
WHEN = datetime(2024, 6, 1, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def hooks(resources: Any, stack: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExtraWorker]:
    env = {
        "TEMPR_WEBHOOK_SECRET": SECRET,
        "TEMPR_WEBHOOK_BACKOFF_BASE_S": "0.1",
        "TEMPR_WEBHOOK_MAX_ATTEMPTS": "8",
        "TEMPR_WEBHOOK_ALLOW_NETWORKS": ALLOW,
    }
    with extra_worker(
        "hooks",
        tmp_path_factory.mktemp("hooks"),
        env=env,
        broker_url=redis_db_url(stack.redis_url, 7),
        result_backend=resources.endpoints.result_backend,
    ) as worker:
        yield worker


@pytest.fixture(scope="module")
def local(resources: Any) -> Any:
    """This process's settings with the local receiver's network allow-listed."""
    return resources.settings.model_copy(update={"webhook_allow_networks": ALLOW})


@pytest.fixture(scope="module", autouse=True)
def tenant_secret(resources: Any) -> str:
    """The webhook secret of the session key's tenant (every recall_async here runs as that tenant)."""
    from tempr.auth import webhook_secret_for

    secret = webhook_secret_for(resources.engine, resources.settings, "local")
    assert secret and len(secret) >= 32
    TENANT_SECRET["local"] = secret
    return secret


@pytest.fixture()
def receiver() -> Iterator[Receiver]:
    r = Receiver(free_port()).start()
    yield r
    r.stop()


def _check_signed(call: dict[str, Any], job_id: str, secret: str | None = None) -> dict[str, Any]:
    headers = {k.lower(): v for k, v in call["headers"].items()}
    assert headers[JOB_HEADER.lower()] == job_id
    stamp, signature = headers[TIMESTAMP_HEADER.lower()], headers[SIGNATURE_HEADER.lower()]
    assert verify(call["body"], secret or TENANT_SECRET["local"], stamp, signature)
    for wrong in ("wrong-secret", SECRET if secret is None else TENANT_SECRET["local"]):
        assert not verify(call["body"], wrong, stamp, signature)
    return headers


def test_result_is_posted_signed(
    local: Any, hooks: ExtraWorker, receiver: Receiver, resources: Any, sample_facts: Path
) -> None:
    bank = sample_bank(resources, sample_facts)
    job = recall_async(
        bank,
        app=hooks.app,
        query="Where does Alice work?",
        query_timestamp=WHEN,
        callback_url=receiver.url,
        settings=local,
    )
    answer = job.get(timeout=60)
    call = receiver.wait(30)
    headers = _check_signed(call, job.id)
    assert headers[ATTEMPT_HEADER.lower()] == "1"
    payload = receiver.payload(call)
    assert payload["job_id"] == job.id and payload["status"] == "succeeded" and payload["error"] is None
    assert [r["id"] for r in payload["result"]["results"]] == [r.id for r in answer.results]
    status = wait_for(
        lambda: (s := job.status()).get("webhook", {}).get("status") == "delivered" and s,
        timeout=10,
        what="delivery record",
    )
    assert [d["ok"] for d in status["webhook"]["deliveries"]] == [True]


def test_receiver_down_at_first_is_delivered_after_retries(
    local: Any, hooks: ExtraWorker, resources: Any, sample_facts: Path
) -> None:
    bank = sample_bank(resources, sample_facts)
    down = Receiver(free_port())  # nothing listens on this port yet
    job = recall_async(bank, app=hooks.app, query="Why did Bob leave?", callback_url=down.url, settings=local)
    job.get(timeout=60)
    wait_for(
        lambda: len(job.status().get("webhook", {}).get("deliveries", [])) >= 2, timeout=20, what="two failed attempts"
    )
    down.start()
    try:
        call = down.wait(30)
        headers = _check_signed(call, job.id)
        assert int(headers[ATTEMPT_HEADER.lower()]) >= 3
        status = wait_for(
            lambda: (s := job.status())["webhook"]["status"] == "delivered" and s, timeout=10, what="delivery record"
        )
        deliveries = status["webhook"]["deliveries"]
        assert [d["ok"] for d in deliveries] == [False] * (len(deliveries) - 1) + [True]
        assert "Connect" in deliveries[0]["error"]
        assert [d["attempt"] for d in deliveries] == list(range(1, len(deliveries) + 1))
    finally:
        down.stop()


def test_5xx_answers_are_retried(local: Any, hooks: ExtraWorker, resources: Any, sample_facts: Path) -> None:
    flaky = Receiver(free_port(), fail_first=2).start()
    try:
        job = recall_async(
            sample_bank(resources, sample_facts),
            app=hooks.app,
            query="Who is Carol?",
            callback_url=flaky.url,
            settings=local,
        )
        job.get(timeout=60)
        call = flaky.wait(30)
        assert len(flaky.calls) == 3 and _check_signed(call, job.id)[ATTEMPT_HEADER.lower()] == "3"
    finally:
        flaky.stop()


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://[fe80::1]:8080/hook",
        "http://[::ffff:169.254.169.254]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://127.0.0.1:9/hook",  # loopback: refused unless allow-listed
    ],
)
def test_forbidden_callback_hosts_are_refused_at_enqueue(hooks: ExtraWorker, url: str) -> None:
    with pytest.raises(ValidationError) as info:
        recall_async("t-any", app=hooks.app, query="Where does Alice work?", callback_url=url)
    assert info.value.field == "callback_url"


def test_forbidden_host_is_refused_again_at_delivery(hooks: ExtraWorker) -> None:
    job_id = f"job-{uuid.uuid4()}"
    record = hooks.app.send_task(
        "tempr.webhooks.deliver", args=[job_id, "http://169.254.169.254/latest", {"job_id": job_id}]
    ).get(timeout=30)
    assert record["delivery"] == "refused" and record["ok"] is False and "metadata" in record["error"]
    beside = hooks.app.send_task(  # loopback outside the allow-list (127.0.0.1/32)
        "tempr.webhooks.deliver", args=[job_id, "http://127.0.0.2:9/hook", {"job_id": job_id}]
    ).get(timeout=30)
    assert beside["delivery"] == "refused" and "loopback" in beside["error"]


def test_timeout_sends_an_error_payload(
    local: Any, hooks: ExtraWorker, receiver: Receiver, resources: Any, sample_facts: Path
) -> None:
    job = recall_async(
        sample_bank(resources, sample_facts),
        app=hooks.app,
        query="Where does Alice work?",
        timeout_s=0.001,
        callback_url=receiver.url,
        settings=local,
    )
    with pytest.raises(RecallTimeout):
        job.get()
    payload = receiver.payload(receiver.wait(30))
    assert payload["status"] == "failed" and payload["result"] is None
    assert payload["error"]["error"] == "RecallTimeout"


def test_watchdog_fails_a_job_that_never_finished(hooks: ExtraWorker, receiver: Receiver) -> None:
    job_id = f"job-{uuid.uuid4()}"
    store = get_job(job_id).store
    store.create(job_id, bank_id="t-lost", deadline=time.time() - 1, callback_url=receiver.url)
    assert hooks.app.send_task("tempr.webhooks.watchdog", args=[job_id]).get(timeout=30) == "timed out"
    call = receiver.wait(30)
    _check_signed(call, job_id, SECRET)  # no tenant: signed with TEMPR_WEBHOOK_SECRET
    payload = receiver.payload(call)
    assert payload["job_id"] == job_id and payload["error"]["error"] == "RecallTimeout"
    assert store.get(job_id)["status"] == "failed"
    assert hooks.app.send_task("tempr.webhooks.watchdog", args=[job_id]).get(timeout=30) == "ended"


def test_each_tenant_signs_with_its_own_secret(
    local: Any, hooks: ExtraWorker, receiver: Receiver, resources: Any, sample_facts: Path, make_key: Any
) -> None:
    other = make_key(f"hooks-{uuid.uuid4().hex[:8]}", ["*"], ["recall"])
    assert other.webhook_secret != TENANT_SECRET["local"]
    job = recall_async(
        sample_bank(resources, sample_facts),
        app=hooks.app,
        api_key=other.key,
        query="Where does Alice work?",
        callback_url=receiver.url,
        settings=local,
    )
    job.get(timeout=60)
    _check_signed(receiver.wait(30), job.id, other.webhook_secret)


def test_a_job_without_tenant_or_secret_is_never_signed(worker: Path, receiver: Receiver) -> None:
    """The session worker has no TEMPR_WEBHOOK_SECRET: a job without a tenant is refused, unsigned."""
    from workers.app import app

    job_id = f"job-{uuid.uuid4()}"
    get_job(job_id).store.create(job_id, bank_id="t-orphan", deadline=time.time() + 60, callback_url=receiver.url)
    record = app.send_task("tempr.webhooks.deliver", args=[job_id, receiver.url, {"job_id": job_id}]).get(timeout=30)
    assert record["delivery"] == "refused" and "no webhook secret" in record["error"]
    assert receiver.calls == []
