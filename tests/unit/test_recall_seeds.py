"""The in-process seed board (``tempr.recall.seeds.LocalSeedBoard``): what the graph may wait for."""

from __future__ import annotations

import threading
import time

from tempr.core.types import Hit
from tempr.recall.seeds import LocalSeedBoard


def test_running_lists_only_started_strategies() -> None:
    board = LocalSeedBoard()
    assert board.running(("semantic", "keyword")) == set()
    board.started("semantic")
    assert board.running(("semantic", "keyword")) == {"semantic"}


def test_take_waits_for_a_post_from_another_thread() -> None:
    board = LocalSeedBoard()
    board.started("keyword")
    hits = [Hit("a", 2.0), Hit("b", 1.0)]
    threading.Timer(0.05, board.post, args=("keyword", hits)).start()
    t = time.monotonic()
    assert board.take("keyword", 5.0) == hits
    assert time.monotonic() - t < 4.0  # woken by the post, not by the timeout


def test_a_failure_or_a_timeout_gives_none() -> None:
    board = LocalSeedBoard()
    board.post("semantic", None)
    assert board.take("semantic", 1.0) is None  # failed: answered at once
    t = time.monotonic()
    assert board.take("keyword", 0.05) is None  # never posted
    assert time.monotonic() - t >= 0.05
