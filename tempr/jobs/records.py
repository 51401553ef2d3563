"""Job records in Redis: status, result or error, webhook deliveries, idempotency keys.

Celery's result backend says whether a task finished; a *job* is what a caller asked for, and it
outlives the chord's bookkeeping (``TEMPR_JOB_RESULT_TTL_S``). One hash per job::

    tempr:job:<id>              status (queued|running|succeeded|failed), bank_id, tenant, created_at,
                                deadline, callback_url, request_hash, result.zlib (the answer,
                                compressed), error, finished_at
    tempr:deliveries:<id>       list of JSON delivery records (attempt, at, ok, status_code|error)
    tempr:idem:<tenant>:<bank>:<key>  {"job_id", "request_hash"} an Idempotency-Key maps to, set at once

Keys are built by ``tempr.jobs.keys`` (each part percent-encoded, so a ``:`` in a bank id or an
Idempotency-Key cannot make two tenants' keys meet).

The first terminal transition wins (``record_outcome`` uses HSETNX on a "final" field), so a watchdog that
times a job out and a late finisher never both report. Redis trouble is logged and never fails a
recall: the caller then simply gets no record (and no idempotency).
"""

from __future__ import annotations

import json
import logging
import time
import zlib
from typing import Any

from redis.exceptions import RedisError

from config.errors import public_text
from tempr.jobs.keys import deliveries_key, idempotency_key, job_key
from tempr.jobs.redis_client import Breaker

log = logging.getLogger(__name__)

QUEUED, RUNNING, SUCCEEDED, FAILED = "queued", "running", "succeeded", "failed"
TERMINAL = (SUCCEEDED, FAILED)
_ERRORS = (RedisError, OSError)


def error_dict(exc: BaseException) -> dict[str, Any]:
    """The JSON shape of a job's error: ``ValidationError.to_dict()`` where there is one."""
    to_dict = getattr(exc, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict())
    return {"error": type(exc).__name__, "message": public_text(exc), "field": None}


_key = job_key


RESULT_FIELD = "result.zlib"
"""The answer, zlib-compressed JSON: the one copy kept for the job's lifetime (Celery's copy of the
final step's result expires after TEMPR_CELERY_RESULT_EXPIRES_S), about a quarter of its size."""


def pack_json(answer_json: bytes) -> bytes:
    """Level 1: about 3x faster than 6 on a 40 KB answer, and the record lives an hour at most."""
    return zlib.compress(answer_json, 1)


def unpack_result(data: dict[str, Any]) -> Any:
    if data.get(RESULT_FIELD):
        return json.loads(zlib.decompress(data[RESULT_FIELD]))
    return json.loads(data["result"]) if data.get("result") else None  # records written before compression


def _decode(raw: dict[Any, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = key.decode() if isinstance(key, bytes) else key
        out[name] = value if name == RESULT_FIELD or not isinstance(value, bytes) else value.decode()
    return out


class JobStore:
    def __init__(self, client: Any, ttl_s: int, breaker: Breaker | None = None) -> None:
        self.redis = client
        self.ttl_s = ttl_s
        self.breaker = breaker or Breaker()

    def _safe(self, what: str, fn: Any, default: Any = None) -> Any:
        if self.redis is None or not self.breaker.allows():
            return default
        try:
            return fn()
        except _ERRORS as exc:
            self.breaker.trip()
            log.warning("job store unavailable (%s): %s", what, exc)
            return default

    def create(
        self,
        job_id: str,
        *,
        bank_id: str,
        deadline: float,
        callback_url: str | None = None,
        request_hash: str | None = None,
        status: str = QUEUED,
        tenant: str | None = None,
    ) -> None:
        fields = {
            "job_id": job_id,
            "status": status,
            "bank_id": bank_id,
            "tenant": tenant or "",
            "created_at": time.time(),
            "deadline": deadline,
            "callback_url": callback_url or "",
            "request_hash": request_hash or "",
        }

        def run() -> None:
            pipe = self.redis.pipeline()
            pipe.hsetnx(_key(job_id), "created_at", fields.pop("created_at"))
            for name, value in fields.items():
                if name == "status":
                    continue
                pipe.hsetnx(_key(job_id), name, value)
            pipe.hsetnx(_key(job_id), "status", status)
            pipe.expire(_key(job_id), self.ttl_s)
            pipe.execute()

        self._safe("create", run)

    def create_answered(
        self, job_id: str, *, bank_id: str, answer_json: bytes, request_hash: str, tenant: str | None = None
    ) -> None:
        """A job answered the moment it was created (a cache hit at the gateway): the whole record,
        ``answer_json`` stored as ``result.zlib``, in one round trip. The id is new, so nothing can
        race this write; ``create`` + ``record_outcome`` would cost three round trips and a second
        serialisation of the answer."""
        now = time.time()
        fields: dict[str, Any] = {
            "job_id": job_id,
            "status": SUCCEEDED,
            "final": SUCCEEDED,
            "bank_id": bank_id,
            "tenant": tenant or "",
            "created_at": now,
            "finished_at": now,
            "deadline": now,
            "callback_url": "",
            "request_hash": request_hash,
            RESULT_FIELD: pack_json(answer_json),
        }

        def run() -> None:
            pipe = self.redis.pipeline(transaction=False)
            pipe.hset(_key(job_id), mapping=fields)
            pipe.expire(_key(job_id), self.ttl_s)
            pipe.execute()

        self._safe("create_answered", run)

    def claim_idempotency(
        self, bank_id: str, key: str, job_id: str, request_hash: str, *, tenant: str = ""
    ) -> tuple[str, str] | None:
        """Map (tenant, bank, key) to ``job_id`` and its request hash unless already mapped; if it was,
        return the earlier ``(job_id, request_hash)``.

        Job id and hash go into one value written by one ``SET NX``: a racing second caller
        always sees the first caller's hash, never a mapping whose hash is not written yet."""
        claim = json.dumps({"job_id": job_id, "request_hash": request_hash})

        def run() -> tuple[str, str] | None:
            idem = idempotency_key(tenant, bank_id, key)
            if self.redis.set(idem, claim, nx=True, ex=self.ttl_s):
                return None
            found = self.redis.get(idem)
            if found is None:  # expired between the two calls: claim again
                return None if self.redis.set(idem, claim, nx=True, ex=self.ttl_s) else ("", "")
            earlier = json.loads(found)
            return str(earlier["job_id"]), str(earlier["request_hash"])

        return self._safe("idempotency", run)

    def release_idempotency(self, bank_id: str, key: str, job_id: str, *, tenant: str = "") -> None:
        """Drop (tenant, bank, key) -> job_id, if it still names ``job_id`` (an enqueue that failed)."""

        def run() -> None:
            idem = idempotency_key(tenant, bank_id, key)
            found = self.redis.get(idem)
            if found is not None and json.loads(found).get("job_id") == job_id:
                self.redis.delete(idem)

        self._safe("release_idempotency", run)

    def mark_running(self, job_id: str, **fields: Any) -> None:
        """Called by the start task; creates the record for apps that used send_task directly."""

        def run() -> None:
            pipe = self.redis.pipeline()
            for name, value in {**fields, "job_id": job_id}.items():
                pipe.hsetnx(_key(job_id), name, "" if value is None else value)
            pipe.hsetnx(_key(job_id), "created_at", time.time())
            pipe.hset(_key(job_id), "started_at", time.time())
            pipe.expire(_key(job_id), self.ttl_s)
            pipe.execute()
            # running only if nothing terminal was recorded meanwhile
            if self.redis.hget(_key(job_id), "final") is None:
                self.redis.hset(_key(job_id), "status", RUNNING)

        self._safe("mark_running", run)

    def record_outcome(
        self,
        job_id: str,
        *,
        result_json: bytes | None = None,
        error: dict[str, Any] | None = None,
    ) -> bool:
        """Record the outcome. True when this call made the job terminal (or Redis is unavailable,
        so the caller should still notify); False when another outcome was recorded first.
        ``result_json``: the answer, serialised once by the caller."""
        status = FAILED if error is not None else SUCCEEDED

        def run() -> bool:
            if not self.redis.hsetnx(_key(job_id), "final", status):
                return False
            mapping = {"status": status, "finished_at": time.time()}
            if result_json is not None:
                mapping[RESULT_FIELD] = pack_json(result_json)
            if error is not None:
                mapping["error"] = json.dumps(error)
            pipe = self.redis.pipeline()
            pipe.hset(_key(job_id), mapping=mapping)
            pipe.expire(_key(job_id), self.ttl_s)
            pipe.execute()
            return True

        return bool(self._safe("record_outcome", run, default=True))

    def add_delivery(self, job_id: str, record: dict[str, Any]) -> None:
        def run() -> None:
            key = deliveries_key(job_id)
            pipe = self.redis.pipeline()
            pipe.rpush(key, json.dumps(record))
            pipe.expire(key, self.ttl_s)
            if "delivery" in record:
                pipe.hset(_key(job_id), "webhook", record["delivery"])
            pipe.execute()

        self._safe("add_delivery", run)

    def get(self, job_id: str) -> dict[str, Any] | None:
        """The job as a JSON-able dict, or None if unknown (or Redis is unavailable)."""

        def run() -> dict[str, Any] | None:
            raw = self.redis.hgetall(_key(job_id))
            if not raw:
                return None
            data: dict[str, Any] = _decode(raw)
            deliveries = self.redis.lrange(deliveries_key(job_id), 0, -1)
            return _shape(data, [json.loads(d) for d in deliveries])

        return self._safe("get", run)


def _shape(data: dict[str, Any], deliveries: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "job_id": data.get("job_id"),
        "status": data.get("status", QUEUED),
        "bank_id": data.get("bank_id"),
        "tenant": data.get("tenant") or None,
        "result": unpack_result(data),
        "error": json.loads(data["error"]) if data.get("error") else None,
    }
    for name in ("created_at", "started_at", "finished_at", "deadline"):
        out[name] = float(data[name]) if data.get(name) else None
    out["callback_url"] = data.get("callback_url") or None
    if out["callback_url"]:
        out["webhook"] = {"status": data.get("webhook", "pending"), "deliveries": deliveries}
    return out
