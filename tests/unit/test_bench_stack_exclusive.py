"""An exclusive benchmark fleet pauses every other consumer of its queues and resumes them after.

(A quality run beside `tempr services up`'s pools once had its "through the workers" row answered
by those pools, with the shipped model instead of the fold models.) The Celery control API is
faked here; the real broadcast is exercised by `tempr bench quality` itself."""

from __future__ import annotations

from typing import Any

import pytest

from bench import stack
from config.errors import ServiceError


class FakeControl:
    def __init__(self, consumers: dict[str, list[str]], *, ignore_cancel: bool = False) -> None:
        self.consumers = consumers
        self.ignore_cancel = ignore_cancel
        self.calls: list[tuple[str, str, str]] = []

    def inspect(self, timeout: float) -> Any:
        control = self

        class Inspect:
            def active_queues(self) -> dict[str, list[dict[str, str]]]:
                return {w: [{"name": q} for q in qs] for w, qs in control.consumers.items()}

        return Inspect()

    def cancel_consumer(self, queue: str, destination: list[str], **_: Any) -> None:
        self.calls.append(("cancel", destination[0], queue))
        if not self.ignore_cancel:
            self.consumers[destination[0]].remove(queue)

    def add_consumer(self, queue: str, destination: list[str], **_: Any) -> None:
        self.calls.append(("add", destination[0], queue))
        self.consumers[destination[0]].append(queue)


class FakeApp:
    def __init__(self, control: FakeControl) -> None:
        self.control = control


def _fleet(monkeypatch: pytest.MonkeyPatch, app: FakeApp) -> stack.BenchWorkers:
    import workers.app

    monkeypatch.setattr(workers.app, "app", app)
    fleet = stack.BenchWorkers(
        [stack.WorkerSpec("bench-retrieve", "retrieve", 4), stack.WorkerSpec("bench-analyse", "fuse,rerank", 2)],
        exclusive=True,
    )
    return fleet


OURS = {"bench-retrieve@h", "bench-analyse@h"}


def test_other_consumers_of_our_queues_pause_and_resume(monkeypatch: pytest.MonkeyPatch) -> None:
    control = FakeControl(
        {
            "bench-retrieve@h": ["retrieve"],
            "bench-analyse@h": ["fuse", "rerank"],
            "analyse@h": ["fuse", "rerank"],
            "ingest@h": ["ingest"],  # not our queue: left alone
        }
    )
    app = FakeApp(control)
    fleet = _fleet(monkeypatch, app)
    assert fleet.foreign_consumers(app, OURS) == [("analyse@h", "fuse"), ("analyse@h", "rerank")]
    fleet._pause_foreign(app, OURS)
    assert fleet.paused == [("analyse@h", "fuse"), ("analyse@h", "rerank")]
    assert control.consumers["analyse@h"] == [] and control.consumers["ingest@h"] == ["ingest"]
    fleet.stop()
    assert sorted(control.consumers["analyse@h"]) == ["fuse", "rerank"] and fleet.paused == []
    assert [c[0] for c in control.calls] == ["cancel", "cancel", "add", "add"]


def test_a_consumer_that_will_not_pause_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    control = FakeControl({"bench-retrieve@h": ["retrieve"], "retrieve@h": ["retrieve"]}, ignore_cancel=True)
    app = FakeApp(control)
    fleet = _fleet(monkeypatch, app)
    with pytest.raises(ServiceError, match="still consume"):
        fleet._pause_foreign(app, OURS)
    assert fleet.paused == []  # stop() ran: whatever was paused was resumed
    assert control.calls[-1][0] == "add"
