"""The recall result cache in Redis.

Key = bank + the bank's version + a fingerprint of the answer-shaping settings + sha256 of the
normalised request (``RecallRequest.cache_fields()``). Every write to a bank (ingest, delete)
changes its version, so a cached answer is never served for data it did not see; entries of old
versions are never read again and simply expire (``TEMPR_CACHE_TTL_S``).

Redis trouble never fails a recall: every error is logged and treated as a miss (or a skipped
write), and a breaker then skips Redis for a few seconds so a dead cache costs no latency. A request without ``query_timestamp`` is answered relative to "now"; within the TTL the
cached answer's recency boosts are at most that many seconds old.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from config.settings import Settings
from tempr.recall.models import RecallRequest
from tempr.redis_keys import recall_cache_key

log = logging.getLogger(__name__)

# Settings that change the answer for the same request and data; part of every key.
_ANSWER_SETTINGS = (
    "embedder",
    "reranker_model",
    "reranker_calibrated",
    "reranker_max_candidates",
    "recall_budget_function",
    "recall_budget_fixed_low",
    "recall_budget_fixed_mid",
    "recall_budget_fixed_high",
    "recall_budget_adaptive_low",
    "recall_budget_adaptive_mid",
    "recall_budget_adaptive_high",
    "recall_budget_min",
    "recall_budget_max",
    "recall_strategy_boosts",
    "recall_fallback_recency",
    "text_search_config",
    "bm25_k1",
    "bm25_b",
    "graph_hop_decay",
    "graph_seed_count",
    "hemisphere",
)


class Breaker:
    """After a Redis failure, skip Redis for ``cooldown_s``: a dead cache costs one failed call
    per cooldown, not one (connect timeout) per operation of every recall."""

    def __init__(self, cooldown_s: float = 5.0) -> None:
        self.cooldown_s = cooldown_s
        self.open_until = 0.0

    def allows(self) -> bool:
        return time.monotonic() >= self.open_until

    def trip(self) -> None:
        self.open_until = time.monotonic() + self.cooldown_s

    def reset(self) -> None:
        self.open_until = 0.0


_clients: dict[tuple[int, str], tuple[Any, Breaker]] = {}
_clients_lock = threading.Lock()


def cache_redis(url: str | None, *, timeout_s: float = 0.5) -> tuple[Any, Breaker]:
    """This process's client for the cache/job Redis (fork-safe: one per pid), with its breaker.

    No retries and short timeouts: redis-py's default (3 retries with backoff up to 10 s) would
    turn a dead cache into seconds of latency per operation."""
    if not url:
        return None, Breaker()
    key = (os.getpid(), url)
    if key not in _clients:
        with _clients_lock:
            if key not in _clients:
                client = redis.Redis.from_url(
                    url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s, retry=Retry(NoBackoff(), 0)
                )
                _clients[key] = (client, Breaker())
    return _clients[key]


def request_digest(request: RecallRequest) -> str:
    payload = json.dumps(request.cache_fields(), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def settings_fingerprint(settings: Settings) -> str:
    values = {name: getattr(settings, name) for name in _ANSWER_SETTINGS}
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:12]


def cache_key(bank_id: str, version: int, request: RecallRequest, settings: Settings) -> str:
    return recall_cache_key(bank_id, version, settings_fingerprint(settings), request_digest(request))


class RecallCache:
    """get/set with TTL over an optional Redis client; None or an unreachable Redis means no cache."""

    def __init__(self, client: Any, ttl_s: int, breaker: Breaker | None = None) -> None:
        self.redis = client
        self.ttl_s = ttl_s
        self.breaker = breaker or Breaker()

    def get(self, key: str | None) -> dict[str, Any] | None:
        if self.redis is None or key is None or not self.breaker.allows():
            return None
        try:
            raw = self.redis.get(key)
        except (RedisError, OSError) as exc:
            self.breaker.trip()
            log.warning("recall cache unavailable, treating as a miss: %s", exc)
            return None
        if raw is None:
            return None
        try:
            return dict(json.loads(raw))
        except (ValueError, TypeError):
            log.warning("dropping an unreadable cache entry %s", key)
            return None

    def set(self, key: str | None, response: dict[str, Any]) -> bool:
        if self.redis is None or key is None or self.ttl_s <= 0 or not self.breaker.allows():
            return False
        stored = {k: v for k, v in response.items() if k not in ("cache", "timings_ms")}
        try:
            self.redis.set(key, json.dumps(stored, separators=(",", ":")), ex=self.ttl_s)
        except (RedisError, OSError) as exc:
            self.breaker.trip()
            log.warning("recall cache unavailable, not storing: %s", exc)
            return False
        return True
