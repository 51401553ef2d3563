"""Fakes for the job layer: a job store, a cache and a Celery app that only record what they get."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tempr.jobs.cache import RecallCache
from tempr.jobs.outcome import JobEnds


@dataclass
class FakeStore:
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def record_outcome(self, job_id: str, *, result_json: bytes | None = None, error: Any = None) -> bool:
        if job_id in self.outcomes:
            return False
        result = json.loads(result_json) if result_json is not None else None
        self.outcomes[job_id] = {"result": result, "error": error}
        return True


@dataclass
class FakeBackend:
    failures: list[tuple[str, BaseException]] = field(default_factory=list)

    def mark_as_failure(self, task_id: str, exc: BaseException) -> None:
        self.failures.append((task_id, exc))


@dataclass
class FakeApp:
    sent: list[tuple[str, Any]] = field(default_factory=list)
    backend: FakeBackend = field(default_factory=FakeBackend)

    def send_task(self, name: str, args: Any = None, **_: Any) -> None:
        self.sent.append((name, args))


class FakeCache(RecallCache):
    def __init__(self) -> None:
        super().__init__(None, 60)
        self.stored: dict[str, Any] = {}

    def set(self, key: str | None, stored: bytes) -> bool:
        if key is None:
            return False
        self.stored[key] = json.loads(stored)
        return True


@dataclass
class Counting:
    succeeded_count: int = 0
    failed_count: int = 0

    def succeeded(self, response: Any, *, cached: bool) -> None:
        self.succeeded_count += 1

    def failed(self, exc: BaseException) -> None:
        self.failed_count += 1


def fake_ends() -> JobEnds:
    return JobEnds(FakeStore(), FakeCache(), FakeApp(), Counting())  # type: ignore[arg-type]
