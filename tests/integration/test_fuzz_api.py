"""Property-based fuzzing of the gateway's OpenAPI (schemathesis) against a real gateway + worker.

Every operation in /openapi.json gets requests generated from its schema, valid ones (positive)
and schema-violating ones (negative), sent with an admin key over every bank, a key scoped to one
prefix with the recall role only, no key, or a forged key. No response may be a 5xx, except a 504
that is a RecallTimeout carrying the job id: the documented answer when a recall's deadline passes
(its own ``timeout_s``, or the default deadline on this shared 2-core machine while the worker's
children load their models). Those are counted and printed apart; every other 5xx fails the test.

``TEMPR_FUZZ_EXAMPLES`` sets the examples per operation and mode (``make test``: a few hundred
requests in all; ``make fuzz``: over 10,000, with ``TEMPR_FUZZ_MIN_REQUESTS`` asserting the total).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from helpers import bearer, ensure_bank, serve_api
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.integration
EXAMPLES = int(os.environ.get("TEMPR_FUZZ_EXAMPLES", "25"))
MIN_REQUESTS = int(os.environ.get("TEMPR_FUZZ_MIN_REQUESTS", "0"))
CALLERS = ("admin", "admin", "scoped", "none", "forged")
AUTH_HEADERS = ("authorization", "x-api-key")


@pytest.fixture(scope="module")
def gateway_url(resources: Any, worker: Path) -> Iterator[str]:
    with serve_api(resources) as url:
        yield url


def _warm_up(url: str, headers: dict[str, str]) -> None:
    """Recalls on every worker child first (async, polled), so loading the models on this shared
    machine (tens of seconds) does not eat the first fuzzed requests' deadlines."""
    import time

    with requests.Session() as own:
        own.trust_env = False
        path = f"{url}/v1/default/banks/fuzz-warm/memories/recall/async"
        jobs = [
            own.post(path, json={"query": f"warm up {i}", "timeout_s": 300}, headers=headers, timeout=60).json()
            for i in range(4)
        ]
        for job in jobs:
            for _ in range(600):
                status = own.get(f"{url}/v1/jobs/{job['job_id']}", headers=headers, timeout=60).json()["status"]
                if status in ("succeeded", "failed"):
                    break
                time.sleep(0.5)
            assert status == "succeeded", job


def _deadline_504(response: requests.Response) -> bool:
    """A recall past its deadline: 504, RecallTimeout, with the job id to poll."""
    if response.status_code != 504:
        return False
    data = response.json()
    return bool(data.get("error") == "RecallTimeout" and data.get("job_id"))


def test_generated_requests_never_get_a_5xx(gateway_url: str, make_key: Any, resources: Any) -> None:
    import schemathesis
    from schemathesis import GenerationMode

    schema = schemathesis.openapi.from_url(f"{gateway_url}/openapi.json")
    keys = {
        "admin": bearer(make_key("fuzz-admin", ["*"], ["admin"]).key),
        "scoped": bearer(make_key("fuzz-scoped", ["fuzz-*"], ["recall"]).key),
        "forged": bearer("tk_0123456789abcdef_" + "z" * 43),
        "none": {},
    }
    counts: Counter[str] = Counter()
    failures: list[str] = []
    session = requests.Session()
    session.trust_env = False
    ensure_bank(resources, "fuzz-warm")  # recall on an unknown bank is a 404 before any worker runs
    _warm_up(gateway_url, keys["admin"])
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 5, [op.label for op in operations]
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            _fuzz(operation, mode, gateway_url, session, keys, counts, failures)
    deadline = counts.pop("504 deadline", 0)
    total = sum(counts.values())
    five = sum(n for code, n in counts.items() if code.startswith("5"))
    print(
        f"\nfuzz: {total} generated requests over {len(operations)} operations; by status: "
        + ", ".join(f"{code}={n}" for code, n in sorted(counts.items()))
        + f"; >= 500: {five} (504 RecallTimeout with a job id, deadline passed: {deadline}; "
        f"any other 5xx or no response: {len(failures)})"
    )
    assert not failures, "\n".join(failures[:20])
    assert total >= MIN_REQUESTS, f"only {total} requests were generated (wanted {MIN_REQUESTS})"


def _fuzz(
    operation: Any,
    mode: Any,
    url: str,
    session: requests.Session,
    keys: dict[str, dict[str, str]],
    counts: Counter[str],
    failures: list[str],
) -> None:
    """EXAMPLES generated cases of one operation in one mode, each sent as a random kind of caller."""

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode), caller=st.sampled_from(CALLERS))
    def run(case: Any, caller: str) -> None:
        for name in list(case.headers or {}):
            if name.lower() in AUTH_HEADERS:
                del case.headers[name]
        try:
            response = case.call(base_url=url, session=session, headers=keys[caller], timeout=120)
        except requests.RequestException as exc:
            failures.append(f"{operation.label} [{mode.value}/{caller}]: no response ({exc})")
            counts["no response"] += 1
            return
        counts[str(response.status_code)] += 1
        if _deadline_504(response):
            counts["504 deadline"] += 1
        elif response.status_code >= 500:
            failures.append(
                f"{operation.label} [{mode.value}/{caller}] -> {response.status_code} "
                f"{response.text[:300]!r} for {case.as_curl_command()[:600]}"
            )

    run()
