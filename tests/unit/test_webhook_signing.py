"""Webhook signatures and retry backoff (the callback-URL guard: test_callback_guard.py)."""

from __future__ import annotations

import pytest

from tempr.jobs.webhooks import backoff_s, sign, signed_headers, verify

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


def test_an_empty_secret_never_signs_nor_verifies() -> None:
    with pytest.raises(ValueError):
        sign(b"{}", "", 1)
    assert not verify(b"{}", "", "1", "sha256=00", now=1)


def test_backoff_doubles_and_is_capped() -> None:
    assert [backoff_s(n, base=0.5, cap=3.0) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
