"""Webhook signing and callback-URL safety: small, pure functions (the only I/O is DNS).

Signature scheme (documented in docs/execution.md)::

    X-Tempr-Timestamp: <unix seconds>
    X-Tempr-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>." + body)>

The HMAC covers the exact body bytes, prefixed with the timestamp so a captured delivery cannot
be replayed later with a fresh timestamp; receivers reject timestamps outside a tolerance.

Which callback URLs are allowed, and the pinned address a delivery connects to, is decided by
``tempr.jobs.callback_guard`` (re-exported here): only public addresses unless a network is allow-listed.
"""

from __future__ import annotations

import hashlib
import hmac
import time

from tempr.jobs.callback_guard import (  # noqa: F401 - re-exported: the guard's public names
    METADATA_ADDRESSES,
    METADATA_HOSTS,
    CallbackTarget,
    check_callback_url,
    resolve_callback,
)

SIGNATURE_HEADER = "X-Tempr-Signature"
TIMESTAMP_HEADER = "X-Tempr-Timestamp"
JOB_HEADER = "X-Tempr-Job-Id"
ATTEMPT_HEADER = "X-Tempr-Delivery-Attempt"


def sign(body: bytes, secret: str, timestamp: int) -> str:
    if not secret:
        raise ValueError("refusing to sign a webhook with an empty secret")
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def signed_headers(body: bytes, secret: str, *, job_id: str, attempt: int, now: float | None = None) -> dict[str, str]:
    timestamp = int(now if now is not None else time.time())
    return {
        "Content-Type": "application/json",
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: sign(body, secret, timestamp),
        JOB_HEADER: job_id,
        ATTEMPT_HEADER: str(attempt),
        "User-Agent": "tempr-webhooks/1",
    }


def verify(
    body: bytes,
    secret: str,
    timestamp: str | int,
    signature: str,
    *,
    tolerance_s: float = 300.0,
    now: float | None = None,
) -> bool:
    """What a receiver runs: constant-time compare, and a timestamp within the tolerance."""
    if not secret:
        return False
    try:
        ts = int(timestamp)
    except (TypeError, ValueError):
        return False
    current = now if now is not None else time.time()
    if abs(current - ts) > tolerance_s:
        return False
    return hmac.compare_digest(sign(body, secret, ts), signature or "")


def backoff_s(attempt: int, *, base: float, cap: float) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): base, 2 base, 4 base... capped."""
    return float(min(cap, base * (2 ** max(attempt - 1, 0))))
