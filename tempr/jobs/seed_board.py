"""The graph strategy's seed board across the chord's worker processes, in Redis.

The rules are ``tempr.recall.seeds``'s; here is only where the board lives. One recall's board is
keyed by the chord (``board_key``): its bank, its query and the time the chord was sent, which
its four strategy messages share. A start marker and a one-item list per strategy, both expiring
after ``TTL_S`` (a hand-off nobody takes costs nothing after that). Redis errors never fail a
strategy: the board then reads as empty and the graph runs its own queries.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

import redis

from tempr.core.types import Hit

TTL_S = 30
_ERRORS = (redis.RedisError, OSError)


def board_key(bank_id: str, query: str, sent_at: float) -> str:
    digest = hashlib.sha1(f"{bank_id}\0{query}\0{sent_at!r}".encode()).hexdigest()[:20]
    return f"tempr:seeds:{digest}"


class RedisSeedBoard:
    def __init__(self, client: Any, key: str) -> None:
        self.client = client
        self.key = key

    def started(self, strategy: str) -> None:
        try:
            self.client.set(f"{self.key}:{strategy}:started", 1, ex=TTL_S)
        except _ERRORS:
            pass

    def post(self, strategy: str, hits: Sequence[Hit] | None) -> None:
        payload = json.dumps(None if hits is None else [[h.id, h.score] for h in hits])
        try:
            pipe = self.client.pipeline(transaction=False)
            pipe.rpush(f"{self.key}:{strategy}", payload)
            pipe.expire(f"{self.key}:{strategy}", TTL_S)
            pipe.execute()
        except _ERRORS:
            pass

    def running(self, strategies: Iterable[str]) -> set[str]:
        names = list(strategies)
        try:
            pipe = self.client.pipeline(transaction=False)
            for s in names:
                pipe.exists(f"{self.key}:{s}:started")
            flags = pipe.execute()
        except _ERRORS:
            return set()
        return {s for s, on in zip(names, flags, strict=True) if on}

    def take(self, strategy: str, timeout_s: float) -> list[Hit] | None:
        try:
            got = self.client.blpop([f"{self.key}:{strategy}"], timeout=max(timeout_s, 0.01))
        except _ERRORS:
            return None
        if not got:
            return None
        hits = json.loads(got[1])
        return None if hits is None else [Hit(str(i), float(s)) for i, s in hits]
