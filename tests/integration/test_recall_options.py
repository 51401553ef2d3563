"""Pipeline rules that depend on settings and request options (real database, in-process path)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import ask

from tempr.providers.reranker.cross_encoder import CrossEncoderReranker
from tempr.recall.context import RecallContext

pytestmark = pytest.mark.integration
REF = "2024-09-15T12:00:00+00:00"


def with_settings(ctx: RecallContext, **update: object) -> RecallContext:
    return replace(ctx, settings=ctx.settings.model_copy(update=update))


def test_budget_limits_each_strategy_and_the_packing_pool(ctx, sample_bank) -> None:
    small = with_settings(ctx, recall_budget_fixed_low=4)
    response = ask(small, sample_bank, "Alice Google Bob", budget="low", max_tokens=100_000, trace=True)
    assert response.budget == 4
    for name in ("semantic", "keyword", "graph"):
        assert len(response.trace["strategies"][name]["hits"]) <= 4
    assert len(response.results) <= 8  # 2 x budget considered for packing


def test_adaptive_budget(ctx, sample_bank) -> None:
    adaptive = with_settings(ctx, recall_budget_function="adaptive")
    assert ask(adaptive, sample_bank, "Alice", budget="mid", max_tokens=1000).budget == 75
    assert ask(adaptive, sample_bank, "Alice", budget="low", max_tokens=100).budget == 20  # clamped up


def test_reranker_candidate_cap(ctx, sample_bank) -> None:
    capped = with_settings(ctx, reranker_max_candidates=5)
    response = ask(capped, sample_bank, "What did Alice do?", trace=True, max_tokens=100_000)
    assert len(response.trace["fusion"]) == 5 and len(response.results) <= 5


def test_strategy_boost_promotes_its_arm(ctx, sample_bank) -> None:
    plain = ask(ctx, sample_bank, "What did Alice do in 2023?", trace=True)
    boosted = ask(
        with_settings(ctx, recall_strategy_boosts="temporal:high"),
        sample_bank,
        "What did Alice do in 2023?",
        trace=True,
    )
    assert boosted.trace["strategy_boosts"] == {"temporal": "high"}

    def temporal_share(response, n: int = 10) -> int:
        return sum(1 for c in response.trace["fusion"][:n] if "temporal" in c["ranks"])

    assert temporal_share(boosted) >= temporal_share(plain)
    assert temporal_share(boosted) == 10


def test_chunks_and_entities_included(ctx, sample_bank) -> None:
    response = ask(
        ctx, sample_bank, "What did Alice say about Python?", include={"entities": True, "chunks": {"max_tokens": 12}}
    )
    assert response.chunks and any(c.truncated for c in response.chunks.values())
    assert response.entities and "Alice" in response.entities
    assert any(r.entities for r in response.results)
    off = ask(ctx, sample_bank, "What did Alice say about Python?", include={"entities": None})
    assert off.entities is None and off.chunks is None and all(r.entities is None for r in off.results)


def test_trace_has_every_stage(ctx, sample_bank) -> None:
    trace = ask(ctx, sample_bank, "What did Alice do last spring?", trace=True).trace
    assert set(trace["strategies"]) == {"semantic", "keyword", "graph", "temporal"}
    assert {"rrf", "ranks"} <= set(trace["fusion"][0])
    assert {"recency_boost", "temporal_boost", "proof_boost"} <= set(trace["boosts"][0])
    assert {"outcome", "tokens"} <= set(trace["packing"][0])
    assert {"embed", "fuse", "rerank", "finish"} <= set(trace["timings_ms"])


def test_cross_encoder_path_with_a_tiny_model(ctx, sample_bank, tiny_cross_encoder: Path) -> None:
    reranker = CrossEncoderReranker(str(tiny_cross_encoder), device="cpu")
    response = ask(replace(ctx, reranker=reranker), sample_bank, "Where does Alice work?", trace=True)
    assert response.reranker.startswith("cross-encoder:")
    raw = response.trace["rerank"]["raw"]
    for r in response.results:
        assert r.scores.reranker == pytest.approx(1 / (1 + math.exp(-raw[r.id])))  # sigmoid of the logit


@pytest.mark.parametrize("profile", ["seed", "default"])
def test_a_cross_encoder_that_cannot_load_degrades_the_recall_instead_of_failing_it(
    ctx, default_ctx, sample_bank, tmp_path: Path, profile: str
) -> None:
    """A missing model (or a GPU out of memory) failed every recall with the loader's OSError; now the
    candidates are ranked as with no cross-encoder configured, and the answer says it is degraded."""
    base = ctx if profile == "seed" else default_ctx
    broken = CrossEncoderReranker(str(tmp_path / "no-model"), device="cpu")
    plain = ask(base, sample_bank, "Where does Alice work?")
    response = ask(replace(base, reranker=broken), sample_bank, "Where does Alice work?", trace=True)
    assert response.degraded == ["rerank"] and plain.degraded == []
    assert response.reranker == plain.reranker  # the learned ranker, or the seed's fallback
    assert [r.id for r in response.results] == [r.id for r in plain.results]


def test_recency_on_the_fallback_can_be_turned_off(ctx, sample_bank) -> None:
    seed = ask(ctx, sample_bank, "Alice works at Google", trace=True)
    off = ask(with_settings(ctx, recall_fallback_recency=False), sample_bank, "Alice works at Google", trace=True)
    assert {b["recency_boost"] for b in off.trace["boosts"]} == {1.0}
    assert len({b["recency_boost"] for b in seed.trace["boosts"]}) > 1  # the seed's default applies it
    assert all(b["temporal_boost"] == 1.0 for b in off.trace["boosts"])  # no window: neutral either way
