"""The process-wide rerank batcher, the real CrossEncoder path (tiny model) and the no-model fallback."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from config.settings import Settings
from tempr.core.types import FusedCandidate
from tempr.providers.reranker import make_reranker
from tempr.recall.context import RecallContext
from tempr.recall.scoring import RRF_FALLBACK, rerank
from workers.rerank_batcher import BatchingReranker, RerankBatcher


class Recording:
    name = "recording"
    calibrated = False

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.calls: list[int] = []
        self.delay = delay
        self.fail = fail

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.calls.append(len(pairs))
        time.sleep(self.delay)
        if self.fail:
            raise RuntimeError("CUDA out of memory (simulated)")
        return [float(len(q) * 1000 + len(p)) for q, p in pairs]  # identifies the pair


def _pairs(tag: str, n: int) -> list[tuple[str, str]]:
    return [(tag, "p" * i) for i in range(n)]


def _expected(tag: str, n: int) -> list[float]:
    return [float(len(tag) * 1000 + i) for i in range(n)]


def test_concurrent_requests_share_one_model_call() -> None:
    model = Recording()
    seen: list[tuple[int, int]] = []
    batcher = RerankBatcher(model, max_pairs=100, wait_ms=200, on_batch=lambda r, p: seen.append((r, p)))
    out: dict[str, list[float]] = {}

    def call(tag: str) -> None:
        out[tag] = batcher.score_pairs(_pairs(tag, 5))

    threads = [threading.Thread(target=call, args=("q" * (i + 1),)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert {tag: scores == _expected(tag, 5) for tag, scores in out.items()} == {"q" * (i + 1): True for i in range(6)}
    assert len(model.calls) < 6 and max(r for r, _ in seen) > 1
    assert sum(p for _, p in seen) == 30
    batcher.close()


def test_batches_never_exceed_max_pairs_and_big_requests_are_chunked() -> None:
    model = Recording(delay=0.05)
    batcher = RerankBatcher(model, max_pairs=8, wait_ms=50)
    futures = [batcher.submit(_pairs("a" * (i + 1), 3)) for i in range(5)] + [batcher.submit(_pairs("big", 20))]
    results = [f.result(10) for f in futures]
    assert all(n <= 8 for n in model.calls)
    assert results[-1] == _expected("big", 20)
    assert results[0] == _expected("a", 3)
    assert sum(model.calls) == 35
    batcher.close()


def test_a_model_failure_reaches_every_caller_and_the_batcher_survives() -> None:
    model = Recording(fail=True)
    batcher = RerankBatcher(model, max_pairs=64, wait_ms=30)
    futures = [batcher.submit(_pairs("x", 2)) for _ in range(3)]
    for f in futures:
        with pytest.raises(RuntimeError, match="out of memory"):
            f.result(10)
    model.fail = False
    assert batcher.score_pairs(_pairs("y", 2), timeout=10) == _expected("y", 2)
    assert batcher.score_pairs([]) == []
    batcher.close()


def test_single_request_waits_at_most_wait_ms() -> None:
    batcher = RerankBatcher(Recording(), max_pairs=512, wait_ms=20)
    started = time.perf_counter()
    batcher.score_pairs(_pairs("a", 2), timeout=5)
    assert time.perf_counter() - started < 2.0
    batcher.close()


def test_real_cross_encoder_scores_through_the_provider_and_the_batcher(tiny_cross_encoder: Path) -> None:
    reranker = make_reranker(str(tiny_cross_encoder), device="cpu")
    assert reranker is not None and reranker.name.startswith("cross-encoder:")
    pairs = [("where does alice work", "Alice works at Google."), ("where does alice work", "Bread needs flour.")]
    direct = reranker.score_pairs(pairs)
    assert len(direct) == 2 and all(isinstance(s, float) for s in direct) and direct[0] != direct[1]
    batched = BatchingReranker(reranker, RerankBatcher(reranker, max_pairs=64, wait_ms=5))
    assert batched.score_pairs(pairs) == pytest.approx(direct, abs=1e-5)
    assert batched.name == reranker.name


class Explodes:
    def __getattr__(self, name: str) -> None:
        raise AssertionError(f"no model and no database call expected (touched {name})")


def test_no_model_means_fallback_without_any_model_call() -> None:
    assert make_reranker(None) is None
    from tempr.recall.plan import QueryPlan

    plan = QueryPlan(
        bank_id="b", request={"query": "q"}, embedding=[], budget=10, depth=1, now="2024-01-01T00:00:00+00:00"
    )
    candidates = [FusedCandidate(f"id{i}", 1.0 / (61 + i), {"semantic": i + 1}, {"semantic": 0.5}) for i in range(4)]
    ctx = RecallContext(Explodes(), Explodes(), Settings(), reranker=None)  # type: ignore[arg-type]
    outcome = rerank(plan, candidates, ctx)
    assert outcome.reranker == RRF_FALLBACK
    assert list(outcome.scores) == [c.id for c in candidates]
    assert outcome.scores["id0"] == pytest.approx(1.0) and outcome.scores["id3"] == pytest.approx(0.1)


def test_process_reranker_is_none_without_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from workers import rerank_batcher
    from workers.resources import get_resources

    monkeypatch.setattr(get_resources().settings, "reranker_model", None)
    rerank_batcher.reset_after_fork()
    assert rerank_batcher.process_reranker() is None
