"""`tempr recall`: the fleet by default, in-process only when no worker answers (said on stderr),
``--via-workers`` insists on the fleet, ``--in-process`` skips it; and the fleet path's imports stay light."""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

import pytest

from config.errors import ServiceUnavailable
from tempr.cli import cmd_recall, fleet_probe
from tempr.cli.main import _COMMANDS, _MODULES, build_parser, main
from tempr.recall.models import RecallResponse


def _args(*extra: str) -> argparse.Namespace:
    return build_parser("recall").parse_args(["recall", "--bank", "demo", "Where does Alice work?", *extra])


def test_flags_choose_where_the_recall_runs() -> None:
    assert cmd_recall.where_to_run(_args()) == fleet_probe.AUTO
    assert cmd_recall.where_to_run(_args("--via-workers")) == cmd_recall.FLEET
    assert cmd_recall.where_to_run(_args("--in-process")) == cmd_recall.IN_PROCESS


def test_the_two_flags_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _args("--via-workers", "--in-process")
    assert "not allowed with" in capsys.readouterr().err


class _Paths:
    """Records which path ran; the probe answers ``why_not`` (None: a worker answered)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, why_not: str | None) -> None:
        self.ran: list[str] = []
        self.probed = 0
        response = RecallResponse.model_validate({"results": [], "bank_id": "demo", "budget": 300, "reranker": "rrf"})

        def probe() -> str | None:
            self.probed += 1
            return why_not

        def path(name: str) -> Any:
            return lambda bank, request: self.ran.append(name) or response

        monkeypatch.setattr(cmd_recall, "fleet_unavailable", probe)
        monkeypatch.setattr(cmd_recall, "recall_on_fleet", path("fleet"))
        monkeypatch.setattr(cmd_recall, "recall_in_process", path("in-process"))


def test_by_default_a_worker_that_answers_gets_the_recall(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _Paths(monkeypatch, None)
    assert cmd_recall.run(_args()) == 0
    assert paths.ran == ["fleet"] and capsys.readouterr().err == ""


def test_without_a_worker_it_runs_here_and_says_why_on_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _Paths(monkeypatch, "no worker answered a ping within 1 s")
    assert cmd_recall.run(_args()) == 0
    assert paths.ran == ["in-process"]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no worker answered" in err[0] and "`tempr services up`" in err[0]


def test_via_workers_without_a_worker_is_an_error_naming_services_up(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _Paths(monkeypatch, "the broker (Redis) does not answer")
    with pytest.raises(ServiceUnavailable, match="tempr services up"):
        cmd_recall.run(_args("--via-workers"))
    assert paths.ran == []
    assert main(["recall", "--bank", "demo", "q", "--via-workers"]) == 1


def test_in_process_does_not_even_ask_the_fleet(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _Paths(monkeypatch, None)
    cmd_recall.run(_args("--in-process"))
    assert paths.ran == ["in-process"] and paths.probed == 0


def test_every_command_is_found_by_name() -> None:
    """``tempr <command>`` imports only the module that registers it: the table must be complete."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(_COMMANDS) and set(_COMMANDS.values()) == set(_MODULES)
    for name in _COMMANDS:
        only = next(a for a in build_parser(name)._actions if isinstance(a, argparse._SubParsersAction))
        assert name in only.choices


def test_the_fleet_path_imports_no_model_and_no_database_driver() -> None:
    code = (
        "import sys\n"
        "from tempr.cli.main import build_parser\n"
        "from tempr.cli import cmd_recall, fleet_probe\n"
        "import tempr.client, tempr.auth, tempr.endpoints\n"
        "cmd_recall.build_request(build_parser('recall').parse_args(['recall', '--bank', 'b', 'Where?']))\n"
        "heavy = ('sqlalchemy', 'psycopg', 'torch', 'onnxruntime', 'sentence_transformers', 'spacy', 'transformers')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_a_short_query_is_not_token_counted_but_a_long_one_still_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cl100k token is at least one byte: a query of at most 500 bytes is within the 500-token
    limit without loading the encoding (~0.3 s in a fresh CLI process)."""
    from config.errors import ValidationError
    from tempr.recall import models

    counted: list[str] = []
    monkeypatch.setattr(models, "count_tokens", lambda text: counted.append(text) or len(text.encode()))
    models.parse_request({"query": "Where does Alice work?"})
    assert counted == []
    with pytest.raises(ValidationError, match="tokens; the limit is 500"):
        models.parse_request({"query": "Zürich " * 100})  # 800 bytes: counted
    assert len(counted) == 1
