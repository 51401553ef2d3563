"""Process-wide dynamic batching for the cross-encoder: what a GPU rerank queue is for.

A rerank worker runs a threads pool, so concurrent rerank tasks live in one process. Each task
hands its (query, passage) pairs to the batcher and waits on a future; one collector thread takes
the first waiting request, gathers more until the batch holds ``max_pairs`` pairs or ``wait_ms``
has passed, and makes ONE ``score_pairs`` call for all of them. A request larger than
``max_pairs`` is scored in chunks of ``max_pairs``. Only the collector thread touches the model,
so the model needs no locking and is loaded once per process, on first use.

``BatchingReranker`` wraps this behind the plain ``Reranker`` interface, so
``tempr.recall.scoring.rerank`` runs unchanged on a rerank worker.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from tempr.providers.reranker import Reranker

log = logging.getLogger(__name__)
Pairs = Sequence[tuple[str, str]]
OnBatch = Callable[[int, int], None]
"""on_batch(requests_in_batch, pairs_in_batch), called after each model call."""


@dataclass
class _Request:
    pairs: list[tuple[str, str]]
    future: Future[list[float]] = field(default_factory=Future)


class RerankBatcher:
    def __init__(
        self, reranker: Reranker, *, max_pairs: int = 512, wait_ms: float = 10.0, on_batch: OnBatch | None = None
    ) -> None:
        self.reranker = reranker
        self.max_pairs = max(1, int(max_pairs))
        self.wait_s = max(0.0, wait_ms / 1000.0)
        self.on_batch = on_batch
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        self._held: _Request | None = None
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.batches: list[tuple[int, int]] = []  # (requests, pairs) per model call, newest last (bounded)

    def submit(self, pairs: Pairs) -> Future[list[float]]:
        request = _Request([(str(q), str(p)) for q, p in pairs])
        if not request.pairs:
            request.future.set_result([])
            return request.future
        self._ensure_thread()
        self._queue.put(request)
        return request.future

    def score_pairs(self, pairs: Pairs, timeout: float | None = None) -> list[float]:
        return self.submit(pairs).result(timeout=timeout)

    def close(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout=5)

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            with self._start_lock:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._loop, name="rerank-batcher", daemon=True)
                    self._thread.start()

    def _next(self, timeout: float | None) -> _Request | None:
        if self._held is not None:
            held, self._held = self._held, None
            return held
        return self._queue.get(timeout=timeout) if timeout is None or timeout > 0 else self._queue.get_nowait()

    def _loop(self) -> None:
        while True:
            first = self._next(None)
            if first is None:
                return
            batch, size = [first], len(first.pairs)
            closes_at = time.monotonic() + self.wait_s
            stop = False
            while size < self.max_pairs:
                try:
                    item = self._next(closes_at - time.monotonic())
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                if size + len(item.pairs) > self.max_pairs:
                    self._held = item  # opens the next batch
                    break
                batch.append(item)
                size += len(item.pairs)
            self._run(batch)
            if stop:
                return

    def _run(self, batch: list[_Request]) -> None:
        pairs = [p for r in batch for p in r.pairs]
        try:
            scores: list[float] = []
            for start in range(0, len(pairs), self.max_pairs):
                chunk = pairs[start : start + self.max_pairs]
                scores.extend(self.reranker.score_pairs(chunk))
                self._record(len(batch) if start == 0 else 1, len(chunk))
        except Exception as exc:  # noqa: BLE001 - hand any model failure to every waiting caller
            for r in batch:
                r.future.set_exception(exc)
            return
        offset = 0
        for r in batch:
            r.future.set_result(scores[offset : offset + len(r.pairs)])
            offset += len(r.pairs)

    def _record(self, requests: int, pairs: int) -> None:
        self.batches.append((requests, pairs))
        del self.batches[:-1000]
        if self.on_batch is not None:
            try:
                self.on_batch(requests, pairs)
            except Exception:
                log.exception("rerank batch metrics hook failed")


class BatchingReranker:
    """The ``Reranker`` interface over a shared batcher (what rerank tasks put in RecallContext)."""

    def __init__(self, reranker: Reranker, batcher: RerankBatcher) -> None:
        self.name = reranker.name
        self.calibrated = reranker.calibrated
        self.batcher = batcher

    def score_pairs(self, pairs: Pairs) -> list[float]:
        return self.batcher.score_pairs(pairs)


_process_reranker: BatchingReranker | None = None
_process_lock = threading.Lock()


def process_reranker() -> BatchingReranker | None:
    """This process's batching reranker, built once; None when no cross-encoder is configured."""
    global _process_reranker
    if _process_reranker is None:
        from tempr.providers.reranker import make_reranker
        from workers.resources import get_resources

        s = get_resources().settings
        inner = make_reranker(
            s.reranker_model,
            calibrated=s.reranker_calibrated,
            batch_size=s.reranker_batch_size,
            device=s.reranker_device,
        )
        if inner is None:
            return None
        with _process_lock:
            if _process_reranker is None:
                from workers.metrics import observe_batch

                batcher = RerankBatcher(
                    inner, max_pairs=s.rerank_batch_max_pairs, wait_ms=s.rerank_batch_wait_ms, on_batch=observe_batch
                )
                _process_reranker = BatchingReranker(inner, batcher)
    return _process_reranker


def reset_after_fork() -> None:
    """A forked child must not reuse its parent's collector thread (it does not exist there)."""
    global _process_reranker
    _process_reranker = None


def warm_up() -> None:
    """Load the model in the background so the first request does not pay for it."""

    def run() -> None:
        try:
            reranker = process_reranker()
            if reranker is not None:
                reranker.score_pairs([("warm up", "warm up")])
        except Exception:
            log.exception("rerank warm-up failed")

    threading.Thread(target=run, name="rerank-warm-up", daemon=True).start()
