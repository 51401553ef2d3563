"""Webhook signing and callback-URL safety: small, pure functions (the only I/O is DNS).

Signature scheme (documented in docs/execution.md)::

    X-Tempr-Timestamp: <unix seconds>
    X-Tempr-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>." + body)>

The HMAC covers the exact body bytes, prefixed with the timestamp so a captured delivery cannot
be replayed later with a fresh timestamp; receivers reject timestamps outside a tolerance.

Callback URLs are refused when their host is a cloud-metadata name or resolves to a link-local,
metadata, multicast or unspecified address (SSRF into the fleet's own cloud account). Loopback and
private ranges are allowed, so a receiver on the same host or network works out of the box.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
import time
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from config.errors import ValidationError

SIGNATURE_HEADER = "X-Tempr-Signature"
TIMESTAMP_HEADER = "X-Tempr-Timestamp"
JOB_HEADER = "X-Tempr-Job-Id"
ATTEMPT_HEADER = "X-Tempr-Delivery-Attempt"

METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack
        ipaddress.ip_address("169.254.170.2"),  # AWS ECS task metadata
        ipaddress.ip_address("fd00:ec2::254"),  # AWS IMDS over IPv6
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
    }
)

Resolver = Callable[[str, int], Iterable[str]]


def sign(body: bytes, secret: str, timestamp: int) -> str:
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
    try:
        ts = int(timestamp)
    except (TypeError, ValueError):
        return False
    current = now if now is not None else time.time()
    if abs(current - ts) > tolerance_s:
        return False
    return hmac.compare_digest(sign(body, secret, ts), signature or "")


def _default_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


def _forbidden(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    mapped = getattr(addr, "ipv4_mapped", None)
    if mapped is not None:
        addr = mapped
    if addr in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if addr.is_link_local:
        return "a link-local address"
    if addr.is_multicast or addr.is_unspecified:
        return "not a unicast address"
    return None


def check_callback_url(url: str, *, allow_link_local: bool = False, resolve: Resolver | None = None) -> str:
    """Return ``url`` if tempr may POST to it, else raise ValidationError(field="callback_url")."""

    def refuse(why: str) -> ValidationError:
        return ValidationError(f"callback_url refused: {why}", field="callback_url")

    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise refuse(f"not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise refuse("the scheme must be http or https")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise refuse("no host")
    if parts.username or parts.password:
        raise refuse("credentials in the URL are not allowed")
    if allow_link_local:
        return url
    if host in METADATA_HOSTS:
        raise refuse(f"{host} is a cloud metadata host")
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            addresses = [ipaddress.ip_address(a.split("%")[0]) for a in (resolve or _default_resolver)(host, port)]
        except (OSError, UnicodeError) as exc:
            raise refuse(f"host {host!r} does not resolve ({exc})") from None
    if not addresses:
        raise refuse(f"host {host!r} does not resolve")
    for addr in addresses:
        why = _forbidden(addr)
        if why:
            raise refuse(f"host {host!r} resolves to {addr}, {why} (set TEMPR_WEBHOOK_ALLOW_LINK_LOCAL=true to allow)")
    return url


def backoff_s(attempt: int, *, base: float, cap: float) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): base, 2 base, 4 base... capped."""
    return float(min(cap, base * (2 ** max(attempt - 1, 0))))
