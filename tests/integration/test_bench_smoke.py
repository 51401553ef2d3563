"""Smoke run of the LoCoMo quality benchmark, end to end: one conversation, 20 questions.

Ingests the conversation, runs every variant in-process and the default pipeline through
the session's Celery worker (the chord), and renders the report. Writes no file. With one
conversation there is nothing to cross-validate on: the shipped ranker model ranks it.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bench import locomo, quality
from bench.quality_render import render

pytestmark = pytest.mark.integration

LOCOMO = Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "locomo-dev"


class SessionWorker:
    """The test session's worker, in the shape the benchmark reports its fleet."""

    def fleet(self) -> list[str]:
        return ["test session worker: prefork×2 on every queue"]


@pytest.mark.timeout(120)
def test_quality_benchmark_smoke(resources, worker) -> None:
    if not (LOCOMO / "26.json").exists():
        pytest.skip(f"no LoCoMo data at {LOCOMO}")
    started = time.perf_counter()
    cfg = quality.QualityConfig(locomo_dir=LOCOMO, conversations=["26"], max_questions=20, write=False, plots=False)
    result = quality.run(cfg, fleet=SessionWorker())
    elapsed = time.perf_counter() - started
    assert len(result.asked) == 20
    for asked in result.asked:
        assert set(asked.rankings) == {*quality.VARIANTS, quality.WORKERS}
        assert asked.rankings[quality.DEFAULT], asked.question
    # every variant's recall@k is a percentage that does not fall as k grows
    for variant in result.variants():
        values = [result.recall(variant, k)[0] for k in (5, 10, 25, 50)]
        assert all(0 <= v <= 100 for v in values) and values == sorted(values), (variant, values)
    # the default finds some evidence on this conversation, and workers agree with in-process
    assert result.recall(quality.DEFAULT, 50)[0] > 20
    assert abs(result.recall(quality.WORKERS, 50)[0] - result.recall(quality.DEFAULT, 50)[0]) < 10
    assert result.folds == {"26": 0}
    text = render(result)
    assert "| **default, through the workers** |" in text and "DRAGON" in text
    assert "### Per fold" in text and "### Per category" in text
    print(f"smoke run took {elapsed:.0f} s")  # speed is the benchmarks' job, not an assertion here
    with resources.engine.connect() as conn:
        from sqlalchemy import text as sql

        count = conn.execute(
            sql("SELECT count(*) FROM memory_units WHERE bank_id = :b"), {"b": locomo.bank_id("26")}
        ).scalar_one()
    assert count == 184
