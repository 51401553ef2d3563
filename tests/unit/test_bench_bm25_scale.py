"""The BM25-at-scale benchmark's report (bench.bm25_scale): growth and speed-up read off the numbers."""

from __future__ import annotations

from bench import bm25_scale


def _cell(full: float, bounded: float, pruned: int = 3, differ: int = 0) -> dict:
    return {
        "full_p50": full,
        "full_p95": 2 * full,
        "bounded_p50": bounded,
        "bounded_p95": 2 * bounded,
        "pruned": pruned,
        "differ": differ,
        "queries": 4,
    }


def test_render_reports_speed_up_growth_and_identical_answers() -> None:
    results = {
        "budget mid (300)": {10_000: _cell(10, 9, 0), 100_000: _cell(40, 20), 1_000_000: _cell(2000, 300, differ=1)}
    }
    text = bm25_scale.render(results, [10_000, 100_000, 1_000_000], 4)
    assert "| 1,000,000 | 2,000 | 4,000 | 300 | 600 | 6.7x | 3 / 4 | 3 / 4 |" in text
    assert "| 10,000 | 10 | 20 | 9 | 18 | 1.1x | 0 / 4 | 4 / 4 |" in text
    assert "all postings 50.0x, bounded 15.0x (p50)" in text


def test_p95_is_a_measured_value() -> None:
    assert bm25_scale._p95([5.0]) == 5.0
    assert bm25_scale._p95([float(i) for i in range(1, 101)]) == 95.0
