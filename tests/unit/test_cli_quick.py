"""`tempr recall`'s quick path through the local gateway: taken only when the gateway was started
with this very configuration, its errors raised as the Celery path's, and the fallback kept.

The gateway itself (started by `services up`, answering over HTTP) is tested for real in
tests/integration/test_services.py; here are the pure decisions."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from config import errors
from tempr.cli import cmd_recall, quick
from tempr.cli.main import build_parser
from tempr.services.gateway import INFO_FILE, config_fingerprint

ENV = {"TEMPR_DATABASE_URL": "postgresql://db/x", "PATH": "/bin"}


def _args(*extra: str) -> argparse.Namespace:
    return build_parser("recall").parse_args(["recall", "--bank", "demo", "Where does Alice work?", *extra])


def test_the_fingerprint_covers_tempr_settings_and_dotenv_but_not_the_callers_key(tmp_path: Path) -> None:
    base = config_fingerprint(ENV, tmp_path)
    assert config_fingerprint({**ENV, "PATH": "/usr/bin"}, tmp_path) == base  # not a setting
    assert config_fingerprint({**ENV, "TEMPR_API_KEY": "tk_1"}, tmp_path) == base  # the client's own
    assert config_fingerprint({**ENV, "TEMPR_AUTH": "off"}, tmp_path) != base
    assert config_fingerprint({"tempr_database_url": "postgresql://db/x"}, tmp_path) == base  # names: any case
    (tmp_path / ".env").write_text("TEMPR_BROKER_URL=amqp://elsewhere\n")
    assert config_fingerprint(ENV, tmp_path) != base


def test_the_state_folder_is_found_without_the_settings_or_left_to_them(tmp_path: Path) -> None:
    assert quick.state_dir({}, tmp_path) == tmp_path / ".tempr"
    assert quick.state_dir({"TEMPR_STATE_DIR": "/srv/tempr"}, tmp_path) == Path("/srv/tempr")
    assert quick.state_dir({"tempr_state_dir": "rel"}, tmp_path) == tmp_path / "rel"
    (tmp_path / ".env").write_text("TEMPR_STATE_DIR=/elsewhere\n")
    assert quick.state_dir({}, tmp_path) is None  # only pydantic-settings reads .env exactly


def _publish(state: Path, *, pid: int, fingerprint: str) -> None:
    (state / "gateway").mkdir(parents=True, exist_ok=True)
    info = {"url": "http://127.0.0.1:1", "pid": pid, "fingerprint": fingerprint}
    (state / "gateway" / INFO_FILE).write_text(json.dumps(info))


def test_a_gateway_is_used_only_when_alive_and_started_with_this_configuration(tmp_path: Path) -> None:
    env = {**ENV, "TEMPR_STATE_DIR": str(tmp_path / "state")}
    assert quick.gateway_url(env, tmp_path) is None  # none published
    _publish(tmp_path / "state", pid=os.getpid(), fingerprint=config_fingerprint(env, tmp_path))
    assert quick.gateway_url(env, tmp_path) == "http://127.0.0.1:1"
    assert quick.gateway_url({**env, "TEMPR_REDIS_URL": "redis://other"}, tmp_path) is None  # other settings
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    _publish(tmp_path / "state", pid=int(gone.stdout), fingerprint=config_fingerprint(env, tmp_path))
    assert quick.gateway_url(env, tmp_path) is None  # its process exited


def test_the_key_is_the_one_the_settings_would_send(tmp_path: Path) -> None:
    assert quick.api_key({}, tmp_path) is None
    (tmp_path / "api_key").write_text("tk_file\n")
    assert quick.api_key({}, tmp_path) == "tk_file"
    assert quick.api_key({"TEMPR_API_KEY": "tk_env"}, tmp_path) == "tk_env"


@pytest.mark.parametrize(
    ("status", "body", "kind", "text"),
    [
        (422, {"message": "must be at least 1", "field": "max_tokens"}, errors.ValidationError, "field 'max_tokens'"),
        (400, {"message": "the body is not valid JSON", "field": "body"}, errors.ValidationError, "not valid JSON"),
        (401, {"message": "unknown API key"}, errors.AuthError, "unknown API key"),
        (403, {"message": "not scoped to bank 'b'"}, errors.Forbidden, "not scoped"),
        (404, {"detail": "bank 'b' does not exist"}, errors.NotFound, "does not exist"),
        (503, {"message": "Redis is unavailable"}, errors.ServiceUnavailable, "Redis"),
        (504, {"message": "not answered in time", "job_id": "j"}, errors.RecallTimeout, "in time"),
        (502, {}, errors.RecallError, "HTTP 502"),
        (422, {"message": "is required", "field": "text", "line": 2}, errors.IngestValidationError, "line 2, field"),
        (413, {"message": "the body is over 16 MiB"}, errors.PayloadTooLarge, "16 MiB"),
    ],
)
def test_error_answers_become_the_celery_paths_exceptions(
    status: int, body: dict[str, Any], kind: type[Exception], text: str
) -> None:
    exc = quick.error_from(status, body, sent_key=True)
    assert type(exc) is kind and text in str(exc)


def test_no_key_at_all_gets_the_same_hint_as_the_celery_path(tmp_path: Path) -> None:
    exc = quick.error_from(401, {"message": "no API key"}, sent_key=False, key_file=tmp_path / "api_key")
    assert isinstance(exc, errors.AuthError) and "tempr keys local" in str(exc) and str(tmp_path) in str(exc)


ANSWER = {
    "results": [
        {
            "id": "u1",
            "text": "Alice joined Helix Health.",
            "occurred_start": "2024-09-01T00:00:00+00:00",
            "mentioned_at": None,
            "scores": {"final": 0.9, "semantic": 0.5, "keyword": None, "graph": 2.0, "temporal": None},
        }
    ],
    "bank_id": "demo",
    "budget": 300,
    "reranker": "learned:ranker",
    "cache": "miss",
    "degraded": [],
    "timings_ms": {},
}


def test_an_answer_from_the_gateway_is_printed_without_the_celery_path(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(quick, "recall", lambda bank, body: sent.append((bank, body)) or dict(ANSWER))
    monkeypatch.setattr(cmd_recall, "slow_answer", lambda *a: pytest.fail("took the Celery path"))
    assert cmd_recall.run(_args("--types", "world, experience")) == 0
    out = capsys.readouterr().out
    assert "1. 0.900 [SG  ] 2024-09-01 Alice joined Helix Health." in out and "cache miss" in out
    assert sent == [("demo", {**cmd_recall.request_body(_args("--types", "world,experience"))})]
    assert sent[0][1]["types"] == ["world", "experience"]

    assert cmd_recall.run(_args("--json")) == 0
    assert json.loads(capsys.readouterr().out) == ANSWER


def test_a_gateway_without_workers_hands_its_reason_to_the_fallback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def not_ready(bank: str, body: dict[str, Any]) -> None:
        raise quick.NotReady("no worker consuming the 'fuse' queue answered within 1 s")

    ran: list[str] = []
    monkeypatch.setattr(quick, "recall", not_ready)
    monkeypatch.setattr(cmd_recall, "fleet_unavailable", lambda: pytest.fail("asked the fleet again"))
    monkeypatch.setattr(cmd_recall, "recall_in_process", lambda bank, request: ran.append(request.query) or _response())
    assert cmd_recall.run(_args()) == 0
    assert ran == ["Where does Alice work?"]
    assert "no worker consuming the 'fuse' queue" in capsys.readouterr().err
    with pytest.raises(errors.ServiceUnavailable, match="--via-workers: no worker consuming"):
        cmd_recall.run(_args("--via-workers"))


def test_in_process_does_not_look_for_a_gateway(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quick, "recall", lambda *a: pytest.fail("asked the gateway"))
    monkeypatch.setattr(cmd_recall, "recall_in_process", lambda bank, request: _response())
    assert cmd_recall.run(_args("--in-process")) == 0


def _response() -> Any:
    from tempr.recall.models import RecallResponse

    return RecallResponse.model_validate({"results": [], "bank_id": "demo", "budget": 300, "reranker": "rrf"})


def test_an_ingest_without_a_key_is_left_to_the_celery_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Celery path writes to the database itself and needs no key: without one (and auth on) the
    quick path steps aside rather than turn a working command into a 401."""
    state = tmp_path / "state"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEMPR_STATE_DIR", str(state))
    monkeypatch.delenv("TEMPR_API_KEY", raising=False)
    monkeypatch.delenv("TEMPR_AUTH", raising=False)
    _publish(state, pid=os.getpid(), fingerprint=config_fingerprint(dict(os.environ), tmp_path))
    facts = tmp_path / "f.jsonl"
    facts.write_text('{"text": "x"}\n')
    asked: list[str] = []
    monkeypatch.setattr(quick, "_call", lambda method, url, *a, **k: asked.append(url) or {"ready": True})
    assert quick.ingest("b", facts, chunk_facts=None, spread_over=2, on_progress=print) is None
    assert asked == []
