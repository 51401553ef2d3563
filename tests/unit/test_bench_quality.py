"""The quality report from hand-made rankings: recall per variant, fold and category (bench.quality)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench import locomo, quality, report
from bench.quality_render import render


def _conv(name: str, questions: list[locomo.Question]) -> locomo.Conversation:
    return locomo.Conversation(
        name,
        ("A", "B"),
        [{"id": "x"}],
        questions,
        datetime(2024, 1, 1, tzinfo=UTC),
        1,
        {"adversarial (category 5)": 1, "no usable evidence": 0},
    )


@pytest.fixture()
def result() -> quality.QualityResult:
    q1 = locomo.Question("26", 0, "When?", "then", ("D1:1",), 2)
    q2 = locomo.Question("41", 3, "Who?", "her", ("D2:1", "D2:2"), 4)
    hit_first = [["D1:1"]] + [["D9:9"]] * 60
    half_late = [["D9:9"]] * 7 + [["D2:1"]] + [["D9:9"]] * 60
    asked = []
    for q, ranking, fired in ((q1, hit_first, 3), (q2, half_late, 0)):
        a = quality.Asked(q, windows=1 if fired else 0, temporal_hits=fired)
        for name in (*quality.VARIANTS, quality.WORKERS):
            a.rankings[name] = ranking
        a.rankings[quality.SEMANTIC] = [["D9:9"]] * 60 if fired else ranking
        a.ms = {
            "analyse": 10.0,
            "strategies": 50.0,
            f"complete:{quality.DEFAULT}": 5.0,
            f"rerank:{quality.DEFAULT}": 4.0,
            f"rerank:{quality.SEED}": 0.5,
            "workers": 80.0,
        }
        asked.append(a)
    out = quality.QualityResult(
        asked,
        [_conv("26", [q1]), _conv("41", [q2])],
        report.machine(),
        12.0,
        {"facts": 2, "inserted": 0, "seconds": 0.0},
        ["w: prefork×2"],
        "",
        {"questions": 2, "identical_top50": 2, "same_recall": 2},
    )
    out.folds = {"26": 1, "41": 1}
    return out


def test_recall_per_variant_and_category(result: quality.QualityResult) -> None:
    assert result.recall(quality.DEFAULT, 5) == (50.0, 2)  # q1 found at rank 1, q2 nothing in the top 5
    assert result.recall(quality.DEFAULT, 10) == (75.0, 2)  # q2: one of its two evidence turns at rank 8
    assert result.recall(quality.SEMANTIC, 50) == (25.0, 2)
    assert result.recall(quality.DEFAULT, 10, lambda a: a.question.category == 4) == (50.0, 1)
    assert result.variants()[0] == quality.WORKERS
    assert result.stage_ms(quality.DEFAULT) == 4.0


def test_render_has_every_table(result: quality.QualityResult) -> None:
    text = render(result)
    assert "| **default, through the workers** | 50.0 | 75.0 | 75.0 | 75.0 |" in text
    assert "| *DRAGON (LoCoMo paper, 10 conversations)* | *49.6* | *57.1* | *66.0* | *71.1* |" in text
    assert "| 41 | 1 | **default** | 0.0 | 50.0 | 50.0 | 50.0 |" in text  # per fold
    assert "| 2 temporal | 1 | semantic only | 0.0 | 0.0 | 0.0 | 0.0 |" in text  # per category
    assert "| 2 temporal | 1 | seed profile | 100.0 | 100.0 | 100.0 | 100.0 |" in text
    assert "Smallest margin of *default, through the workers* over *semantic only*" in text
    assert "+100.0 points" not in text and "+0.0 points" in text  # the category-4 margin is the smallest
    assert "**+3.5 ms**" in text  # the rerank stage's cost: 4.0 vs 0.5
    assert "identical top-50 ranking (by dia_id) for 2 of 2" in text
    assert "26: 1, 41: 1" in text  # fold sizes are stated
    assert "evidence `dia_id`s found among" in text  # the definition is stated
