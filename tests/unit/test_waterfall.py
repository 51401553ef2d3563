"""The stage waterfall: queue waits and work on one time line from enqueue."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from tempr.fleet import _pool_name, merge_local
from tempr.recall.waterfall import waterfall

CHORD = {
    "queue.start": 5.0,
    "cache_lookup": 1.0,
    "embed": 10.0,
    "analyse": 20.0,
    "queue.strategy.semantic": 3.0,
    "strategy.semantic": 7.0,
    "queue.strategy.keyword": 4.0,
    "strategy.keyword": 2.0,
    "strategies": 12.0,
    "queue.fuse": 2.0,
    "fuse": 1.0,
    "queue.rerank": 4.0,
    "rerank": 30.0,
    "queue.finish": 1.0,
    "finish": 2.0,
    "total": 90.0,
}


def test_chord_timings_line_up_from_enqueue() -> None:
    bars, total = waterfall(CHORD)
    by = {b.step: b for b in bars}
    assert [b.step for b in bars] == [
        "start",
        "strategy.semantic",
        "strategy.keyword",
        "fuse",
        "rerank",
        "finish",
    ]
    assert (by["start"].start_ms, by["start"].wait_ms, by["start"].work_ms) == (0.0, 5.0, 21.0)  # embed is in analyse
    assert by["strategy.semantic"].start_ms == by["strategy.keyword"].start_ms == 26.0  # side by side
    assert by["fuse"].start_ms == 26.0 + 12.0  # after the slowest strategy (the "strategies" span)
    assert by["rerank"].start_ms == by["fuse"].end_ms and by["finish"].start_ms == by["rerank"].end_ms
    assert total == 90.0


def test_in_process_timings_have_no_waits() -> None:
    bars, total = waterfall({"analyse": 3.0, "strategy.graph": 2.0, "strategies": 2.5, "fuse": 1.0, "finish": 1.0})
    assert all(b.wait_ms == 0.0 for b in bars)
    assert total == bars[-1].end_ms == 3.0 + 2.5 + 1.0 + 1.0


@given(st.dictionaries(st.sampled_from(sorted(CHORD)), st.floats(0, 1e5)))
def test_bars_never_start_before_zero_or_overlap_their_predecessor(timings: dict[str, float]) -> None:
    bars, total = waterfall(timings)
    sequential = [b for b in bars if not b.step.startswith("strategy.")]
    assert all(b.start_ms >= 0 and b.wait_ms >= 0 and b.work_ms >= 0 for b in bars)
    assert all(a.end_ms <= b.start_ms + 1e-6 for a, b in itertools.pairwise(sequential))
    assert total >= 0


def test_fleet_joins_local_workers_with_answering_nodes() -> None:
    nodes = {
        "default@h": {
            "node": "default@h",
            "pid": 11,
            "pool": "prefork",
            "concurrency": 2,
            "queues": ["fuse"],
            "ping": True,
        },
        "rerank@h": {
            "node": "rerank@h",
            "pid": 12,
            "pool": "threads",
            "concurrency": 8,
            "queues": ["rerank"],
            "ping": True,
        },
    }
    rows = merge_local(nodes, {"default": 11, "stale": 99})
    by = {r["name"]: r for r in rows}
    assert by["default"]["ping"] and by["default"]["started_here"] and by["default"]["queues"] == ["fuse"]
    assert by["stale"]["ping"] is False  # started here, does not answer
    assert by["rerank"]["started_here"] is False and by["rerank"]["pool"] == "threads"
    assert _pool_name("celery.concurrency.prefork:TaskPool") == "prefork" and _pool_name(None) is None
