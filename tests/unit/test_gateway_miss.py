"""The gateway's own query analysis: warmed before it serves, and given up (not fatal) when its
model cannot load, so misses then take the start task."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace
from typing import Any

import pytest

from config.settings import Settings
from tempr.api.gateway import Gateway
from tempr.api.miss import ChordParts, warm_up
from tempr.services.gateway import gateway_env


class _Embedder:
    def __init__(self, fail: bool) -> None:
        self.fail, self.calls = fail, 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        if self.fail:
            raise FileNotFoundError("model.onnx")
        return [[0.0] * 4 for _ in texts]

    def embed_tokens(self, texts: list[str], *, tokens: bool = True) -> tuple[list[list[float]], list[None]]:
        return self.embed(texts), [None] * len(texts)


PARTS = ChordParts(build_chord=lambda *a: None, recall_context=lambda **k: None, sending_only=lambda b: nullcontext())


def _gateway(embedder: _Embedder, parts: ChordParts | None = PARTS, **settings: Any) -> Gateway:
    resources = SimpleNamespace(settings=Settings(**settings), embedder=embedder)
    return Gateway(object(), resources, chord_parts=parts)


def test_warm_up_loads_the_model_before_serving() -> None:
    embedder = _Embedder(fail=False)
    gw = _gateway(embedder)
    assert gw.analyses
    warm_up(gw)
    assert gw.analyses and embedder.calls == 1


def test_a_model_that_cannot_load_sends_misses_to_the_start_task(caplog: pytest.LogCaptureFixture) -> None:
    gw = _gateway(_Embedder(fail=True))
    warm_up(gw)
    assert not gw.analyses
    assert "misses go to the start task" in caplog.text and "model.onnx" in caplog.text


def test_switched_off_by_setting_or_without_the_worker_side() -> None:
    assert not _gateway(_Embedder(fail=False), gateway_analyse=False).analyses
    assert not _gateway(_Embedder(fail=False), parts=None).analyses


def test_the_gateway_process_embeds_on_one_thread_unless_told_otherwise() -> None:
    assert gateway_env({}) == {"TEMPR_EMBEDDER_THREADS": "1"}
    assert gateway_env({"TEMPR_EMBEDDER_THREADS": "3"}) == {}


def test_sending_only_registers_no_waiter_in_this_thread_alone() -> None:
    import threading

    from workers.result_waiters import sending_only

    calls: list[str] = []

    class Backend:
        def add_pending_result(self, result: Any, weak: bool = False, start_drainer: bool = True) -> Any:
            calls.append(f"pending {result}")
            return result

        def on_task_call(self, producer: Any, task_id: str) -> None:
            calls.append(f"subscribe {task_id}")

    backend = Backend()
    seen_elsewhere: list[str] = []
    with sending_only(backend):
        backend.on_task_call(None, "strategy")
        assert backend.add_pending_result("header") == "header"
        other = threading.Thread(target=lambda: backend.on_task_call(None, "other-thread"))
        other.start()
        other.join()
        seen_elsewhere = list(calls)
    backend.on_task_call(None, "job")
    backend.add_pending_result("answer")
    assert seen_elsewhere == ["subscribe other-thread"]  # another thread's waiting is untouched
    assert calls == ["subscribe other-thread", "subscribe job", "pending answer"]
