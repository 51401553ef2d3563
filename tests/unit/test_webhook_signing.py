"""Webhook signatures and the callback-URL safety check (no network: resolvers are injected)."""

from __future__ import annotations

import pytest

from config.errors import ValidationError
from tempr.jobs.webhooks import backoff_s, check_callback_url, sign, signed_headers, verify

SECRET = "s3cret"


def test_signature_round_trip_and_tampering() -> None:
    body = b'{"job_id":"j1","status":"succeeded"}'
    headers = signed_headers(body, SECRET, job_id="j1", attempt=1, now=1_700_000_000)
    ts, sig = headers["X-Tempr-Timestamp"], headers["X-Tempr-Signature"]
    assert sig.startswith("sha256=") and ts == "1700000000"
    assert verify(body, SECRET, ts, sig, now=1_700_000_010)
    assert not verify(body + b" ", SECRET, ts, sig, now=1_700_000_010)  # body changed
    assert not verify(body, "other", ts, sig, now=1_700_000_010)  # wrong secret
    assert not verify(body, SECRET, "1700000001", sig, now=1_700_000_010)  # timestamp changed
    assert not verify(body, SECRET, ts, sig, now=1_700_000_000 + 3600)  # replayed later
    assert not verify(body, SECRET, "not-a-number", sig)
    assert sign(body, SECRET, 1) != sign(body, SECRET, 2)


def _resolver(mapping: dict[str, list[str]]):
    def resolve(host: str, port: int) -> list[str]:
        if host not in mapping:
            raise OSError("Name or service not known")
        return mapping[host]

    return resolve


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "https://10.1.2.3/x",
        "http://192.168.0.5:9000/",
        "http://[::1]:8000/hook",
        "https://hooks.example.com/tempr",
    ],
)
def test_loopback_private_and_public_hosts_are_allowed(url: str) -> None:
    resolve = _resolver({"localhost": ["127.0.0.1"], "hooks.example.com": ["93.184.216.34"]})
    assert check_callback_url(url, resolve=resolve) == url


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://metadata.google.internal/computeMetadata/v1/", "metadata host"),
        ("http://METADATA.GOOGLE.INTERNAL./", "metadata host"),
        ("http://169.254.10.1/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[::ffff:169.254.169.254]/", "metadata"),
        ("http://[fd00:ec2::254]/", "metadata"),
        ("http://100.100.100.200/", "metadata"),
        ("http://rebind.example/", "link-local"),
        ("http://0.0.0.0/", "unicast"),
        ("ftp://127.0.0.1/", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("http:///nohost", "no host"),
        ("http://user:pw@127.0.0.1/", "credentials"),
        ("http://nowhere.invalid/", "does not resolve"),
    ],
)
def test_forbidden_callback_hosts_are_refused(url: str, why: str) -> None:
    resolve = _resolver({"rebind.example": ["93.184.216.34", "169.254.1.1"]})
    with pytest.raises(ValidationError) as info:
        check_callback_url(url, resolve=resolve)
    assert info.value.field == "callback_url"
    assert why in info.value.message
    assert info.value.to_dict()["error"] == "ValidationError"


def test_link_local_allowed_only_when_explicitly_enabled() -> None:
    url = "http://169.254.169.254/latest"
    assert check_callback_url(url, allow_link_local=True) == url
    with pytest.raises(ValidationError):
        check_callback_url("gopher://169.254.169.254/", allow_link_local=True)


def test_backoff_doubles_and_is_capped() -> None:
    assert [backoff_s(n, base=0.5, cap=3.0) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
