"""Seeds handed from the semantic and keyword strategies to the graph walk of the same recall.

The graph strategy starts from the best semantic and keyword hits (RRF of the two lists, top
``graph_seed_count``), which are the first hits of those strategies' own lists: BM25 and the
vector search of a bank of up to 20,000 memories are exact top-k with ties broken by id, so the top
ten of the top 300 are the top ten. (A larger bank's HNSW search widens its candidate list with the
limit, so the top ten of 300 are at least as near as a search for ten.) Without a
hand-off the graph task runs both queries again, about 25 ms of PostgreSQL CPU per recall at 10k
facts (BENCHMARKS.md, "Tried on 2026-12-02"). With one, the semantic and keyword strategies post
their first hits on a board keyed by the recall, and the graph takes them from there.

What keeps this safe in a fixed-size worker pool: the graph waits only for a strategy that has
already *started* (it runs in another process or thread and needs nothing from the graph task),
and at most ``wait_s``; a strategy not yet started, a failure (posted as ``None``) or a timeout
sends the graph back to its own queries, as before the hand-off. So a pool whose every process
holds a graph task never waits on work queued behind them.

``LocalSeedBoard`` serves the in-process pipeline (threads); ``tempr.jobs.seed_board`` the chord.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from typing import Protocol

from tempr.core.types import Hit

SHARED = ("semantic", "keyword")
"""The strategies whose first hits seed the graph walk."""


class SeedBoard(Protocol):
    def started(self, strategy: str) -> None:
        """``strategy`` began its search for this recall."""

    def post(self, strategy: str, hits: Sequence[Hit] | None) -> None:
        """Its first hits (``None``: it failed; the graph runs its own query)."""

    def running(self, strategies: Iterable[str]) -> set[str]:
        """Those of ``strategies`` that have started (posted or not)."""

    def take(self, strategy: str, timeout_s: float) -> list[Hit] | None:
        """Its posted hits, waiting up to ``timeout_s``; ``None`` after a failure or the timeout."""


class LocalSeedBoard:
    """One recall's board between threads of one process."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._started: set[str] = set()
        self._posted: dict[str, list[Hit] | None] = {}

    def started(self, strategy: str) -> None:
        with self._cond:
            self._started.add(strategy)

    def post(self, strategy: str, hits: Sequence[Hit] | None) -> None:
        with self._cond:
            self._posted[strategy] = None if hits is None else list(hits)
            self._cond.notify_all()

    def running(self, strategies: Iterable[str]) -> set[str]:
        with self._cond:
            return self._started & set(strategies)

    def take(self, strategy: str, timeout_s: float) -> list[Hit] | None:
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while strategy not in self._posted:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            return self._posted[strategy]
