"""Every Redis key tempr writes, built by one function from typed parts.

Bank ids may contain ``:`` (the Redis separator by convention), and idempotency keys are caller
text. Joining such parts with ``:`` is ambiguous: bank ``a`` + key ``b:c`` and bank ``a:b`` + key
``c`` would meet in one key, and one tenant would read another's job. So every part is
percent-encoded (``%`` and ``:`` included) before joining: the encoding is injective per part, and
the separators that remain are the only ``:`` in the key, so distinct part tuples give distinct keys.
"""

from __future__ import annotations

from urllib.parse import quote

ROOT = "tempr"
KINDS = frozenset({"job", "deliveries", "idem", "recall"})


def _part(value: str | int) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"a Redis key part must be str or int, not {type(value).__name__}")
    return quote(str(value), safe="")


def redis_key(kind: str, *parts: str | int) -> str:
    """``tempr:<kind>:<part>:<part>…`` with each part percent-encoded."""
    if kind not in KINDS:
        raise ValueError(f"unknown Redis key kind {kind!r}")
    return ":".join((ROOT, kind, *(_part(p) for p in parts)))


def job_key(job_id: str) -> str:
    return redis_key("job", job_id)


def deliveries_key(job_id: str) -> str:
    return redis_key("deliveries", job_id)


def idempotency_key(tenant: str, bank_id: str, key: str) -> str:
    """Per tenant as well as per bank: two tenants sharing a bank never share a job by reusing a key."""
    return redis_key("idem", tenant, bank_id, key)


def recall_cache_key(bank_id: str, version: int, fingerprint: str, digest: str) -> str:
    return redis_key("recall", bank_id, version, fingerprint, digest)
