"""The recall result cache in Redis.

Key = bank + the bank's version + a fingerprint of the answer-shaping settings + sha256 of the
normalised request (``RecallRequest.cache_fields()``). Every write to a bank (ingest, delete)
changes its version, so a cached answer is never served for data it did not see; entries of old
versions are never read again and simply expire (``TEMPR_CACHE_TTL_S``).

Redis trouble never fails a recall: every error is logged and treated as a miss (or a skipped
write), and a breaker then skips Redis for a few seconds so a dead cache costs no latency. A
request without ``query_timestamp`` is answered relative to "now"; within the TTL the cached
answer's recency boosts are at most that many seconds old. The settings in the fingerprint are the
ones ``config/settings.py`` marks ``answer(...)``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from redis.exceptions import RedisError

from config.settings import Settings
from tempr.jobs.keys import recall_cache_key
from tempr.jobs.redis_client import Breaker
from tempr.recall.models import RecallRequest

log = logging.getLogger(__name__)


def request_hash(request: RecallRequest) -> str:
    """sha256 of the normalised request (``RecallRequest.cache_fields``): the request part of a cache key."""
    payload = json.dumps(request.cache_fields(), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def settings_fingerprint(settings: Settings) -> str:
    values = {name: getattr(settings, name) for name in settings.answer_settings()}
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:12]


def cache_key(bank_id: str, version: int, request: RecallRequest, settings: Settings) -> str:
    return recall_cache_key(bank_id, version, settings_fingerprint(settings), request_hash(request))


def stamp(raw: bytes, cache: str, timings_ms: dict[str, float]) -> bytes | None:
    """``raw`` (a compact JSON object without ``cache``/``timings_ms``) with those two keys appended.

    None for anything not shaped like such an object."""
    body = raw.strip()
    if not (body.startswith(b'{"') and body.endswith(b"}")):
        return None
    stamps = json.dumps({"cache": cache, "timings_ms": timings_ms}, separators=(",", ":"))
    return body[:-1] + b"," + stamps[1:].encode()


def stamp_hit(raw: bytes, lookup_ms: float) -> bytes | None:
    """A cached answer's JSON with this hit's ``cache`` and ``timings_ms`` added, without parsing it.

    ``RecallCache.set`` writes a compact JSON object without those two keys, so appending them
    before its closing brace gives the response a parse and a re-serialisation would (about 40 KB
    for a ``mid`` answer: most of a hit's cost). None for anything not shaped like such an entry
    (the caller then treats the entry as unreadable)."""
    return stamp(raw, "hit", {"cache_lookup": lookup_ms, "total": lookup_ms})


class RecallCache:
    """get/set with TTL over an optional Redis client; None or an unreachable Redis means no cache."""

    def __init__(self, client: Any, ttl_s: int, breaker: Breaker | None = None) -> None:
        self.redis = client
        self.ttl_s = ttl_s
        self.breaker = breaker or Breaker()

    def get_raw(self, key: str | None) -> bytes | None:
        """The stored answer as the JSON bytes it was written as (no ``cache``/``timings_ms``)."""
        if self.redis is None or key is None or not self.breaker.allows():
            return None
        try:
            raw = self.redis.get(key)
        except (RedisError, OSError) as exc:
            self.breaker.trip()
            log.warning("recall cache unavailable, treating as a miss: %s", exc)
            return None
        return None if raw is None else bytes(raw)

    def get(self, key: str | None) -> dict[str, Any] | None:
        raw = self.get_raw(key)
        if raw is None:
            return None
        try:
            return dict(json.loads(raw))
        except (ValueError, TypeError):
            log.warning("dropping an unreadable cache entry %s", key)
            return None

    def set(self, key: str | None, stored: bytes) -> bool:
        """Store an answer serialised as compact JSON without ``cache``/``timings_ms`` (``succeed_job``
        writes it so, and ``stamp_hit`` relies on it)."""
        if self.redis is None or key is None or self.ttl_s <= 0 or not self.breaker.allows():
            return False
        try:
            self.redis.set(key, stored, ex=self.ttl_s)
        except (RedisError, OSError) as exc:
            self.breaker.trip()
            log.warning("recall cache unavailable, not storing: %s", exc)
            return False
        return True
