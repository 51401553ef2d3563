"""Recall cache keys and the never-fail contract (an unreachable Redis is a miss, not an error)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.settings import Settings
from tempr.jobs.cache import RecallCache, cache_key, request_hash, stamp_hit
from tempr.jobs.records import JobStore
from tempr.jobs.redis_client import cache_redis
from tempr.recall.models import RecallRequest
from tempr.services.process import free_port


class DictRedis:
    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.ttl: dict[str, int] = {}

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def set(self, key: str, value: str | bytes, ex: int | None = None, **_: Any) -> bool:
        self.data[key] = value if isinstance(value, bytes) else value.encode()
        self.ttl[key] = ex or 0
        return True


def _req(**kw: Any) -> RecallRequest:
    return RecallRequest(query="Where does Alice work?", **kw)


def test_key_ignores_envelope_fields_and_list_order() -> None:
    a = _req(types=["world", "experience"], tags=["b", "a"])
    b = _req(
        types=["experience", "world", "world"],
        tags=["a", "b"],
        callback_url="http://127.0.0.1/x",
        idempotency_key="k1",
        timeout_s=3,
    )
    assert request_hash(a) == request_hash(b)


@pytest.mark.parametrize(
    "change",
    [
        {"query": "Where does Bob work?"},
        {"budget": "high"},
        {"max_tokens": 100},
        {"types": ["world"]},
        {"tags": ["x"]},
        {"tags_match": "all"},
        {"trace": True},
        {"include": {"chunks": {}}},
        {"query_timestamp": datetime(2024, 1, 1, tzinfo=UTC)},
    ],
)
def test_key_changes_with_anything_that_shapes_the_answer(change: dict[str, Any]) -> None:
    base = {"query": "Where does Alice work?"}
    assert request_hash(RecallRequest(**base)) != request_hash(RecallRequest(**{**base, **change}))


def test_key_holds_bank_version_and_settings() -> None:
    s = Settings()
    req = _req()
    key = cache_key("bank-1", 7, req, s)
    assert key.startswith("tempr:recall:bank-1:7:")
    assert key != cache_key("bank-1", 8, req, s)  # any bank write bumps the version
    assert key != cache_key("bank-2", 7, req, s)
    assert key != cache_key("bank-1", 7, req, s.model_copy(update={"reranker_model": "x"}))
    assert key == cache_key("bank-1", 7, _req(timeout_s=1), s)


def test_set_then_get_round_trips_the_stored_json_and_uses_ttl() -> None:
    fake = DictRedis()
    cache = RecallCache(fake, ttl_s=42)
    assert cache.get("k") is None
    assert cache.set("k", b'{"results":[],"bank_id":"b"}')
    assert cache.get("k") == {"results": [], "bank_id": "b"}
    assert fake.ttl["k"] == 42


def test_no_redis_or_no_key_means_no_cache() -> None:
    assert RecallCache(None, 60).get("k") is None
    assert not RecallCache(None, 60).set("k", b"{}")
    assert RecallCache(DictRedis(), 60).get(None) is None
    assert not RecallCache(DictRedis(), 0).set("k", b"{}")


def test_unreachable_redis_is_a_fast_miss_not_an_error(caplog: pytest.LogCaptureFixture) -> None:
    dead, breaker = cache_redis(f"redis://127.0.0.1:{free_port()}/0")
    cache = RecallCache(dead, 60, breaker)
    started = time.perf_counter()
    assert cache.get("k") is None
    assert "unavailable" in caplog.text
    assert not breaker.allows()  # tripped: the next calls do not even try
    assert cache.set("k", b'{"results":[]}') is False
    assert time.perf_counter() - started < 2.0  # no redis-py retry/backoff on the recall path
    breaker.reset()
    jobs = JobStore(dead, 60, breaker)
    jobs.create("j", bank_id="b", deadline=0.0)
    assert jobs.get("j") is None
    assert jobs.claim_idempotency("b", "key", "j", "h") is None
    assert jobs.record_outcome("j", result_json=b"{}") is True  # unknown outcome: the caller should still notify
    assert jobs.get("j") is None


def test_unreadable_entry_is_dropped() -> None:
    fake = DictRedis()
    fake.data["k"] = b"{not json"
    assert RecallCache(fake, 60).get("k") is None


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@given(
    st.dictionaries(st.text().filter(lambda k: k not in ("cache", "timings_ms")), _JSON, min_size=1), st.floats(0, 1e4)
)
def test_a_hit_spliced_into_the_stored_json_is_what_parsing_and_stamping_would_send(
    answer: dict[str, Any], lookup_ms: float
) -> None:
    cache = RecallCache(DictRedis(), 60)
    cache.set("k", json.dumps(answer, separators=(",", ":")).encode())
    raw = cache.get_raw("k")
    assert raw is not None
    sent = stamp_hit(raw, lookup_ms)
    assert sent is not None
    stamps = {"cache_lookup": lookup_ms, "total": lookup_ms}
    assert json.loads(sent) == {**answer, "cache": "hit", "timings_ms": stamps}


def test_an_entry_not_shaped_like_a_stored_answer_is_not_stamped() -> None:
    for raw in (b"", b"{}", b"[1]", b"null", b'{"a": 1'):
        assert stamp_hit(raw, 1.0) is None
