"""Stages 4 and 5 (recall/scoring.rerank, recall/finish.finish) over fakes: no database, no model."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from config.settings import Settings
from tempr.core.types import FusedCandidate, Hit, Strategy, StrategyResult
from tempr.recall import finish as finish_module
from tempr.recall import scoring
from tempr.recall.context import RecallContext
from tempr.recall.finish import finish
from tempr.recall.models import RecallRequest
from tempr.recall.plan import QueryPlan
from tempr.recall.scoring import RRF_FALLBACK, RerankOutcome, boost_divisors, fallback_scores, passage, rerank

NOW = datetime(2024, 6, 1, tzinfo=UTC)


class FakeEngine:
    @contextmanager
    def connect(self) -> Iterator[None]:
        yield None


class FakeReranker:
    name = "fake-ce"
    calibrated = True

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.pairs.extend(pairs)
        return [1.0 / (1 + i) for i in range(len(pairs))]


def _unit(i: int, **kw: Any) -> dict[str, Any]:
    unit = {
        "id": f"u{i}",
        "fact_id": f"f{i}",
        "text": f"memory number {i}",
        "type": "world",
        "entities": [f"E{i}", "Shared"],
        "context": None,
        "occurred_start": None,
        "occurred_end": None,
        "mentioned_at": None,
        "event_date": NOW - timedelta(days=i),
        "document_id": None,
        "metadata": {},
        "chunk_id": None,
        "tags": [],
        "proof_count": 1,
    }
    return {**unit, **kw}


@pytest.fixture()
def units(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    table = {f"u{i}": _unit(i) for i in range(6)}

    def fetch(_conn: Any, ids: Sequence[str], *, with_entities: bool = True) -> dict[str, dict[str, Any]]:
        return {i: dict(table[i]) for i in ids if i in table}

    monkeypatch.setattr(finish_module.recall_repo, "fetch_units", fetch)
    monkeypatch.setattr(scoring.recall_repo, "fetch_units", fetch)
    return table


def _ctx(reranker: Any = None) -> RecallContext:
    return RecallContext(FakeEngine(), None, Settings(), reranker=reranker, count_tokens=lambda s: len(s.split()))  # type: ignore[arg-type]


def _plan(budget: int = 10, **request: Any) -> QueryPlan:
    req = RecallRequest(query="what happened", query_timestamp=NOW, **request)
    return QueryPlan(bank_id="b", request=req, embedding=[], budget=budget, depth=1, now=NOW)


def _candidates(n: int) -> list[FusedCandidate]:
    return [FusedCandidate(f"u{i}", 1 / (61 + i), {"semantic": i + 1}, {"semantic": 0.9 - i / 10}) for i in range(n)]


def test_rerank_without_a_model_is_the_rrf_fallback(units: dict[str, Any]) -> None:
    outcome = rerank(_plan(), _candidates(4), _ctx())
    assert outcome.reranker == RRF_FALLBACK and outcome.scores == fallback_scores(_candidates(4)).scores
    assert list(outcome.scores) == ["u0", "u1", "u2", "u3"] and outcome.scores["u0"] == pytest.approx(1.0)


def test_rerank_with_a_model_scores_the_passages(units: dict[str, Any]) -> None:
    model = FakeReranker()
    units["u1"]["context"] = "work"
    outcome = rerank(_plan(), [*_candidates(3), FusedCandidate("gone", 0.001, {}, {})], _ctx(model))
    assert outcome.reranker == "fake-ce" and set(outcome.scores) == {"u0", "u1", "u2"}  # a deleted id is skipped
    assert model.pairs[1] == ("what happened", passage(units["u1"]))
    assert passage(units["u1"]).startswith("[Date: May 31, 2024] work:")


def test_boost_divisors_take_the_strongest_favoured_arm() -> None:
    plan = _plan().model_copy(update={"boosts": {"graph": "high", "semantic": "low"}})
    c = FusedCandidate("x", 0.1, {"semantic": 1, "graph": 3}, {})
    assert boost_divisors(plan, [c, FusedCandidate("y", 0.1, {"keyword": 1}, {})]) == {"x": 6.0}


def test_finish_ranks_packs_and_reports(units: dict[str, Any]) -> None:
    results = [StrategyResult(Strategy.SEMANTIC, (Hit("u0", 0.9),)), StrategyResult(Strategy.GRAPH, (), "boom")]
    candidates = _candidates(6)
    outcome = RerankOutcome({c.id: 1.0 - i / 10 for i, c in enumerate(candidates)}, "fake-ce")
    response = finish(_plan(budget=2, max_tokens=9), results, candidates, outcome, _ctx(), {"fuse": 1.0})
    assert [r.id for r in response.results] == ["u0", "u1", "u2"]  # 2 x budget considered, 3 x 3 tokens fit
    assert response.degraded == ["graph"] and response.reranker == "fake-ce"
    assert response.results[0].scores.reranker == 1.0 and response.results[0].scores.semantic == 0.9
    assert set(response.entities or {}) == {"E0", "Shared", "E1", "E2"}
    assert response.entities["Shared"].entity_id == "Shared"  # type: ignore[index]
    assert {"fuse", "finish"} <= set(response.timings_ms) and response.trace is None


def test_the_entities_map_has_its_own_token_budget(units: dict[str, Any]) -> None:
    outcome = fallback_scores(_candidates(3))
    plan = _plan(include={"entities": {"max_tokens": 2}})
    response = finish(plan, [], _candidates(3), outcome, _ctx(), {})
    assert list(response.entities or {}) == ["E0", "Shared"]
    assert finish(_plan(include={"entities": False}), [], _candidates(3), outcome, _ctx(), {}).entities is None
    assert response.results[0].scores.reranker is None  # the fallback is not a reranker score


def test_the_trace_carries_every_stage(units: dict[str, Any]) -> None:
    results = [StrategyResult(Strategy.KEYWORD, (Hit("u1", 2.0),), None, 1.0, {"n": 1})]
    response = finish(_plan(trace=True), results, _candidates(2), fallback_scores(_candidates(2)), _ctx(), {})
    trace = response.trace or {}
    assert trace["now"] == NOW.isoformat() and trace["strategies"]["keyword"]["hits"] == [["u1", 2.0]]
    assert {"fusion", "rerank", "boosts", "packing", "timings_ms"} <= set(trace)
