"""How a job ends (tempr.jobs.outcome), with fakes: once, cached unless degraded, webhook on the first outcome."""

from __future__ import annotations

import json
import logging
import time

import pytest
from fakes_jobs import fake_ends

from config import codec
from config.codec import EncodedAnswer
from config.errors import RecallTimeout, ValidationError
from tempr.jobs.envelope import JobEnvelope
from tempr.jobs.outcome import check_deadline, fail_job, succeed_job
from tempr.jobs.records import error_dict
from tempr.recall.models import RecallResponse


def _env(**kw: object) -> JobEnvelope:
    now = time.time()
    fields: dict[str, object] = {"job_id": "j1", "bank_id": "b", "deadline": now + 60, "enqueued_at": now - 0.5}
    return JobEnvelope.model_validate({**fields, **kw})


def _response(**kw: object) -> RecallResponse:
    return RecallResponse.model_validate({"results": [], "bank_id": "b", "budget": 10, "reranker": "rrf", **kw})


def test_success_is_recorded_cached_and_stamped() -> None:
    ends = fake_ends()
    out = succeed_job(ends, _env(cache_key="k"), _response())
    assert out["cache"] == "miss" and out["timings_ms"]["total"] >= 500
    assert ends.store.outcomes["j1"]["result"] == out  # type: ignore[attr-defined]
    per_call = ("cache", "timings_ms")
    assert ends.cache.stored == {"k": {k: v for k, v in out.items() if k not in per_call}}  # type: ignore[attr-defined]
    assert ends.app.sent == []  # no callback_url: no webhook


def test_the_answer_is_serialised_once_as_the_standard_library_would() -> None:
    """One pydantic serialisation feeds the cache, the record and the return value: the same
    values ``model_dump(mode="json")`` gives, NaN included (written as json.dumps writes it)."""
    ends = fake_ends()
    result = {"id": "u1", "fact_id": "f1", "text": 'Ünïcode, "quotes" and a tab\t', "type": "world"}
    response = _response(
        results=[{**result, "scores": {"final": 0.5, "reranker": float("nan"), "semantic": 1e-05}}],
        trace={"features": [[1.0, None]], "nested": {"a": [1, 2]}},
    )
    out = succeed_job(ends, _env(cache_key="k"), response)
    expected = response.model_dump(mode="json")
    assert json.dumps(out, sort_keys=True) == json.dumps(expected, sort_keys=True)  # NaN == NaN as text
    assert list(out)[-2:] == ["cache", "timings_ms"]
    # the Celery result reuses that serialisation (config.codec.dumps): the text is the value's own
    assert isinstance(out, EncodedAnswer)
    assert json.dumps(json.loads(out.json_text), sort_keys=True) == json.dumps(out, sort_keys=True)
    assert json.loads(codec.dumps({"status": "SUCCESS", "result": out}))["result"].keys() == out.keys()


def test_a_degraded_answer_is_not_cached_and_a_hit_is_not_rewritten() -> None:
    ends = fake_ends()
    succeed_job(ends, _env(cache_key="k"), _response(degraded=["graph"]))
    succeed_job(ends, _env(job_id="j2", cache_key="k"), _response(), cached=True)
    assert ends.cache.stored == {}  # type: ignore[attr-defined]


def test_the_webhook_goes_out_only_for_the_first_outcome() -> None:
    ends = fake_ends()
    env = _env(callback_url="http://127.0.0.1/hook")
    succeed_job(ends, env, _response())
    fail_job(ends, env, RecallTimeout("late"))
    assert [name for name, _ in ends.app.sent] == ["tempr.webhooks.deliver"]
    _, (job_id, url, payload) = ends.app.sent[0]
    assert (job_id, url, payload["status"]) == ("j1", "http://127.0.0.1/hook", "succeeded")
    assert ends.observer.failed_count == 0  # type: ignore[attr-defined]


def test_a_failure_is_recorded_once_and_can_wake_the_waiter() -> None:
    ends = fake_ends()
    exc = ValidationError("bad", field="query")
    fail_job(ends, _env(callback_url="http://127.0.0.1/hook"), exc, store_under_job_id=True)
    assert ends.store.outcomes["j1"]["error"] == error_dict(exc) == exc.to_dict()  # type: ignore[attr-defined]
    assert ends.app.backend.failures == [("j1", exc)]
    assert ends.app.sent[0][1][2]["status"] == "failed"
    assert ends.observer.failed_count == 1  # type: ignore[attr-defined]


def test_a_late_answer_is_refused() -> None:
    ends = fake_ends()
    with pytest.raises(RecallTimeout, match="deadline"):
        succeed_job(ends, _env(deadline=time.time() - 1), _response())
    assert ends.store.outcomes == {}  # type: ignore[attr-defined]
    check_deadline(_env(), "anything")  # in time: no error


def test_error_dict_names_any_exception() -> None:
    assert error_dict(RuntimeError("boom")) == {"error": "RuntimeError", "message": "boom", "field": None}
    assert error_dict(RuntimeError())["message"] == "RuntimeError"


def _job_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "tempr.jobs"]


def test_one_info_line_per_job_whatever_ends_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tempr.jobs")
    ends = fake_ends()
    succeed_job(ends, _env(), _response(degraded=["temporal", "graph"]))
    fail_job(ends, _env(), RecallTimeout("late"))  # the same job: its end was already recorded and logged
    fail_job(ends, _env(job_id="j2", bank_id="other"), RecallTimeout("late"))
    first, second = _job_lines(caplog)
    assert first.levelno == logging.INFO
    assert first.getMessage().startswith("recall succeeded bank=b cache=miss total_ms=")
    assert first.getMessage().endswith(" degraded=graph,temporal")
    assert second.getMessage().startswith("recall failed bank=other error=RecallTimeout total_ms=")
    assert second.tempr_job["error"] == "RecallTimeout"  # type: ignore[attr-defined]
    assert "results" not in first.getMessage()  # never the answer itself


def test_a_cache_hit_says_so(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tempr.jobs")
    succeed_job(fake_ends(), _env(), _response(), cached=True)
    (line,) = _job_lines(caplog)
    assert " cache=hit " in line.getMessage()
