"""The recall tasks called directly with fakes (no broker, no database): typed messages in and out,
timings, the no-model shortcut, the rerank hop, and a failing step ending the job."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from celery.exceptions import Ignore
from fakes_jobs import fake_ends

from tasks import fuse, rerank
from tasks.messages import FinishState, FuseState, RerankState, StrategyCall, StrategyReport
from tempr.core.types import ALL_STRATEGIES, FusedCandidate, Hit, Strategy, StrategyResult
from tempr.jobs.envelope import JobEnvelope
from tempr.jobs.outcome import JobEnds
from tempr.recall.models import RecallRequest, RecallResponse
from tempr.recall.plan import QueryPlan
from tempr.recall.scoring import RRF_FALLBACK, RerankOutcome
from workers.resources import get_resources

WHEN = datetime(2024, 6, 1, 12, tzinfo=UTC)


def _plan(**request: Any) -> QueryPlan:
    req = RecallRequest(query="Where does Alice work?", query_timestamp=WHEN, **request)
    return QueryPlan(bank_id="b", request=req, embedding=[0.1, 0.2], budget=10, depth=1, now=WHEN)


def _env(**kw: Any) -> JobEnvelope:
    now = time.time()
    return JobEnvelope.model_validate(
        {"job_id": "job-1", "bank_id": "b", "deadline": now + 60, "enqueued_at": now, **kw}
    )


def _reports() -> list[dict[str, Any]]:
    now = time.time()
    out = []
    for i, s in enumerate(ALL_STRATEGIES):
        hits = (Hit(f"id{i}", 0.9), Hit("shared", 0.5))
        result = StrategyResult(s, hits, None, 1.5, {"n": i})
        out.append(StrategyReport.of(result, queue_ms=2.0, finished_at=now - 0.01 * i).send())
    return out


@pytest.fixture()
def ends(monkeypatch: pytest.MonkeyPatch) -> JobEnds:
    made = fake_ends()
    monkeypatch.setattr(fuse, "job_ends", lambda: made)
    monkeypatch.setattr(fuse, "recall_context", lambda **_: "ctx")
    monkeypatch.setattr("tasks.common.job_ends", lambda: made)
    return made


def test_messages_survive_json_and_skip_the_request_checks_on_arrival() -> None:
    call = StrategyCall(strategy=Strategy.GRAPH, plan=_plan(), deadline=1.0, sent_at=0.5)
    assert StrategyCall.receive(call.send()) == call
    long_query = {**call.send(), "plan": {**call.send()["plan"]}}
    long_query["plan"]["request"] = {**long_query["plan"]["request"], "query": "word " * 600}
    assert StrategyCall.receive(long_query).plan.request.query.startswith("word")  # trusted: not recounted
    with pytest.raises(ValueError, match="tokens"):
        RecallRequest.model_validate(long_query["plan"]["request"])  # at the edge it is refused


def test_the_plan_carries_the_bank_version_to_the_reranking_process() -> None:
    plan = _plan().model_copy(update={"bank_version": 41})
    call = StrategyCall(strategy=Strategy.SEMANTIC, plan=plan, deadline=1.0, sent_at=0.5)
    assert StrategyCall.receive(call.send()).plan.bank_version == 41
    assert _plan().bank_version is None  # a plan made without one: the row cache is not used


def test_strategy_report_round_trips_a_result() -> None:
    result = StrategyResult(Strategy.KEYWORD, (Hit("a", 1.5),), "boom", 3.0, {"x": 1})
    assert StrategyReport.receive(StrategyReport.of(result).send()).result() == result


@pytest.mark.parametrize("profile", ["seed", "default"])
def test_collect_without_a_cross_encoder_answers_at_once(
    ends: JobEnds, monkeypatch: pytest.MonkeyPatch, profile: str
) -> None:
    """RRF fallback (seed) or the learned ranker (default): both run in the callback, no more hops."""
    seen: dict[str, Any] = {}

    def answer(plan: QueryPlan, results: list[StrategyResult], ctx: Any, timings: dict[str, float]) -> RecallResponse:
        seen.update(plan=plan, results=results, timings=dict(timings))
        return RecallResponse(results=[], bank_id=plan.bank_id, budget=plan.budget, reranker=RRF_FALLBACK)

    monkeypatch.setattr(fuse, "fuse_rerank_finish", answer)
    monkeypatch.setattr(get_resources().settings, "reranker_model", None)
    monkeypatch.setattr(get_resources().settings, "recall_profile", profile)
    state = FuseState(env=_env(), plan=_plan(), timings={"queue.start": 1.0}, sent_at=time.time() - 0.2)
    reports = _reports()
    out = fuse.collect(list(reversed(reports[1:])), state.send())  # out of order, one missing
    assert [r.strategy for r in seen["results"]] == list(ALL_STRATEGIES)
    assert seen["results"][0].error == "no result came back from the strategy task"
    assert {"queue.start", "strategies", "queue.fuse", "strategy.graph", "queue.strategy.keyword"} <= set(
        seen["timings"]
    )
    assert "_last_finished_at" not in seen["timings"]
    assert out["cache"] == "miss"
    assert ends.store.outcomes["job-1"]["result"] == out  # type: ignore[attr-defined]


def test_collect_with_a_model_hands_typed_candidates_to_rerank(ends: JobEnds, monkeypatch: pytest.MonkeyPatch) -> None:
    captured: list[Any] = []
    monkeypatch.setattr(get_resources().settings, "reranker_model", "fake")
    monkeypatch.setattr(fuse.collect, "replace", lambda sig: captured.append(sig) or Ignore())
    state = FuseState(env=_env(), plan=_plan(), timings={}, sent_at=time.time())
    with pytest.raises(Ignore):
        fuse.collect(_reports(), state.send())
    first = captured[0].tasks[0]
    assert first.task == "tempr.rerank.score"
    msg = RerankState.receive(first.args[0])
    assert msg.candidates[0].id == "shared"  # in all four lists: fused first
    assert all(r.hits == [] for r in msg.strategies), "no trace asked: hits do not travel on"
    assert "fuse" in msg.timings and ends.store.outcomes == {}  # type: ignore[attr-defined]

    traced = FuseState(env=_env(), plan=_plan(trace=True), timings={}, sent_at=time.time())
    with pytest.raises(Ignore):
        fuse.collect(_reports(), traced.send())
    assert all(r.hits for r in RerankState.receive(captured[1].tasks[0].args[0]).strategies)


def test_rerank_scores_with_the_fallback_and_passes_everything_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rerank, "process_reranker", lambda: None)
    monkeypatch.setattr(rerank, "recall_context", lambda **kw: _Ctx(kw.get("reranker")))
    candidates = [FusedCandidate(f"id{i}", 0.1 / (i + 1), {"semantic": i + 1}, {"semantic": 0.5}) for i in range(3)]
    state = RerankState(
        env=_env(), plan=_plan(), timings={"fuse": 1.0}, sent_at=time.time(), candidates=candidates, strategies=[]
    )
    out = FinishState.receive(rerank.score(state.send()))
    assert out.outcome.reranker == RRF_FALLBACK and list(out.outcome.scores) == ["id0", "id1", "id2"]
    assert out.candidates == candidates and {"fuse", "queue.rerank", "rerank"} <= set(out.timings)


def test_a_learned_outcome_crosses_to_finish_without_its_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows the learned ranker read hold token vectors (bytes): sent as JSON, they failed the
    recall with a UnicodeDecodeError when the ranking ran on the rerank queue."""
    outcome = RerankOutcome(
        {"id0": 0.9},
        "learned:ranker",
        {"id0": 2.2},
        learned=True,
        error="ConfigError: no model",
        units={"id0": {"text": "x", "tokens": b"\xda\x01\xff"}},
    )
    state = FinishState(env=_env(), plan=_plan(), sent_at=time.time(), candidates=[], strategies=[], outcome=outcome)
    out = FinishState.receive(json.loads(json.dumps(state.send())))
    assert out.outcome.units == {} and out.outcome.error == "ConfigError: no model"
    assert out.outcome.scores == {"id0": 0.9} and out.outcome.learned and out.outcome.raw == {"id0": 2.2}


def test_finish_ends_the_job_once(ends: JobEnds, monkeypatch: pytest.MonkeyPatch) -> None:
    def answer(plan: QueryPlan, results: Any, candidates: Any, outcome: Any, ctx: Any, timings: Any) -> RecallResponse:
        return RecallResponse(
            results=[], bank_id="b", budget=plan.budget, reranker=outcome.reranker, timings_ms=timings
        )

    monkeypatch.setattr(fuse, "finish_response", answer)
    env = _env(callback_url="http://127.0.0.1/hook")
    state = FinishState(
        env=env,
        plan=_plan(),
        sent_at=time.time(),
        candidates=[],
        strategies=[],
        outcome={"scores": {}, "reranker": "cross-encoder:x"},  # type: ignore[arg-type]
    )
    out = fuse.finish(state.send())
    assert out["reranker"] == "cross-encoder:x" and "queue.finish" in out["timings_ms"]
    assert [name for name, _ in ends.app.sent] == ["tempr.webhooks.deliver"]


def test_a_failing_step_fails_its_job(ends: JobEnds, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: Any) -> Any:
        raise RuntimeError("model exploded")

    monkeypatch.setattr(fuse, "finish_response", boom)
    state = FinishState(
        env=_env(),
        plan=_plan(),
        sent_at=time.time(),
        candidates=[],
        strategies=[],
        outcome={"scores": {}, "reranker": "x"},  # type: ignore[arg-type]
    )
    with pytest.raises(RuntimeError):
        fuse.finish(state.send())
    assert ends.store.outcomes["job-1"]["error"]["error"] == "RuntimeError"  # type: ignore[attr-defined]
    assert ends.app.backend.failures[0][0] == "job-1"  # not run under the job id: the waiter is woken


def test_a_step_past_its_deadline_is_refused(ends: JobEnds) -> None:
    state = FinishState(
        env=_env(deadline=time.time() - 1),
        plan=_plan(),
        sent_at=time.time(),
        candidates=[],
        strategies=[],
        outcome={"scores": {}, "reranker": "x"},  # type: ignore[arg-type]
    )
    with pytest.raises(Exception, match="deadline"):
        fuse.finish(state.send())
    assert ends.store.outcomes["job-1"]["error"]["error"] == "RecallTimeout"  # type: ignore[attr-defined]


class _Ctx:
    def __init__(self, reranker: Any) -> None:
        self.reranker = reranker
        self.ranker = None  # the seed profile: no learned ranker


def test_a_query_without_a_time_window_sends_no_temporal_task() -> None:
    """The plan settles the temporal strategy (nothing to search): three strategy tasks, and the
    empty temporal report rides in the chord's body; with a window all four run."""
    from tasks.recall import build_chord
    from tempr.core.types import TimeWindow

    undated = build_chord(_env(), _plan(), {})
    sent = [StrategyCall.receive(sig.args[0]).strategy for sig in undated.tasks]
    assert sent == [Strategy.SEMANTIC, Strategy.KEYWORD, Strategy.GRAPH]
    body = FuseState.receive(undated.body.args[0])
    assert [r.strategy for r in body.settled] == [Strategy.TEMPORAL]
    assert body.settled[0].hits == [] and body.settled[0].error is None and "skipped" in body.settled[0].detail

    window = TimeWindow(datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 5, 31, tzinfo=UTC), "season")
    dated = build_chord(_env(), _plan().model_copy(update={"windows": [window]}), {})
    assert [StrategyCall.receive(sig.args[0]).strategy for sig in dated.tasks] == list(ALL_STRATEGIES)
    assert FuseState.receive(dated.body.args[0]).settled == []


def test_collect_merges_the_settled_reports_with_the_header_s(ends: JobEnds, monkeypatch: pytest.MonkeyPatch) -> None:
    from tempr.recall.strategies import settled

    seen: dict[str, Any] = {}

    def answer(plan: QueryPlan, results: list[StrategyResult], ctx: Any, timings: dict[str, float]) -> RecallResponse:
        seen.update(results=results)
        return RecallResponse(results=[], bank_id=plan.bank_id, budget=plan.budget, reranker=RRF_FALLBACK)

    monkeypatch.setattr(fuse, "fuse_rerank_finish", answer)
    monkeypatch.setattr(get_resources().settings, "reranker_model", None)
    skipped = settled(Strategy.TEMPORAL, _plan())
    assert skipped is not None
    state = FuseState(env=_env(), plan=_plan(), timings={}, sent_at=time.time(), settled=[StrategyReport.of(skipped)])
    fuse.collect(_reports()[:3], state.send())
    temporal = seen["results"][3]
    assert temporal.strategy is Strategy.TEMPORAL and temporal.error is None and temporal.detail == skipped.detail
