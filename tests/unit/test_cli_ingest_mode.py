"""`tempr ingest`: where it runs (fleet by default, --via-workers, --in-process), how a small file is
split over the workers, and the probe's answers without a broker (no services needed)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import pytest

from tempr.cli import cmd_ingest
from tempr.cli import fleet_probe as probe
from tempr.ingest import fleet


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cmd_ingest.add_parser(sub)
    return parser.parse_args(["ingest", "--bank", "b", "f.jsonl", *argv])


def test_the_fleet_is_the_default_and_each_flag_forces_a_side() -> None:
    assert cmd_ingest.where_to_run(_parse()) == probe.AUTO
    assert cmd_ingest.where_to_run(_parse("--via-workers")) == cmd_ingest.FLEET
    assert cmd_ingest.where_to_run(_parse("--in-process")) == cmd_ingest.IN_PROCESS


def test_via_workers_and_in_process_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _parse("--via-workers", "--in-process")
    assert "not allowed with" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("total", "cap", "spread", "expected"),
    [
        (250, 2000, 2, 125),  # a 250-fact file on 2 cores: one chunk per worker process
        (250, 2000, 16, 64),  # never below the minimum chunk
        (40, 2000, 2, 64),  # a tiny file stays one chunk
        (100_000, 2000, 2, 2000),  # a large file: the configured chunk
        (250, 100, 2, 100),  # the configured chunk is a ceiling
        (250, 2000, None, 2000),  # no spreading asked: as configured
        (250, 2000, 1, 2000),
    ],
)
def test_chunk_size_spreads_a_small_file_over_the_workers(
    total: int, cap: int, spread: int | None, expected: int
) -> None:
    assert fleet.chunk_size(total, cap, spread) == expected


def test_probe_without_a_broker_says_so_quickly() -> None:
    assert probe.no_consumer_reason(object(), None, "ingest", timeout_s=0.2) == "Redis (the broker) is not running"
    why = probe.no_consumer_reason(object(), "redis://127.0.0.1:1/0", "ingest", timeout_s=0.2)
    assert why == "the broker (Redis) does not answer"


def test_probe_stops_at_the_first_ingest_consumer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replies from workers without the ingest queue are skipped; the first with it ends the wait."""
    seen: list[str] = []

    class Control:
        def broadcast(self, command: str, *, callback: Any, **_: Any) -> list[Any]:
            assert command == "active_queues"
            for node, queues in (("webhooks@h", ["webhooks"]), ("default@h", ["retrieve", "ingest"]), ("late@h", [])):
                seen.append(node)
                callback({node: [{"name": q} for q in queues]})
            return []

    class App:
        control = Control()

        def connection_for_write(self, **_: Any) -> Any:
            import contextlib

            return contextlib.nullcontext(None)

    monkeypatch.setattr(probe, "_redis_answers", lambda url, timeout_s: True)
    assert probe.no_consumer_reason(App(), "redis://x/0", "ingest", timeout_s=0.5) is None
    assert seen == ["webhooks@h", "default@h"]
    assert "'nosuch' queue" in (probe.no_consumer_reason(App(), "redis://x/0", "nosuch", timeout_s=0.5) or "")


def test_the_fleet_path_imports_no_model_runtime() -> None:
    """The CLI's fleet path (probe, validation, enqueue, polling) must not pull in numpy's users:
    the models, or the pipeline that embeds."""
    import subprocess

    code = (
        "import sys; from tempr.cli import cmd_ingest, fleet_probe; from tempr.ingest import fleet, imports; "
        "heavy = [m for m in ('onnxruntime', 'torch', 'spacy', 'tempr.ingest.pipeline', 'numpy') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_a_local_ingest_worker_that_just_started_is_waited_for(tmp_path: Any) -> None:
    """`services up` moments ago (pidfile age), alive, consuming ingest: worth waiting for; an old one
    that does not answer, or one without the ingest queue, is not."""
    import os
    import subprocess
    import types

    settings = types.SimpleNamespace(state_dir=tmp_path)
    (tmp_path / "workers").mkdir()
    pidfile = tmp_path / "workers" / "default.pid"
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)", "-Q"]
    with subprocess.Popen([*sleeper, "retrieve,ingest"]) as ingest, subprocess.Popen([*sleeper, "webhooks"]) as hooks:
        try:
            assert not cmd_ingest._local_ingest_worker_starting(settings)
            pidfile.write_text(str(hooks.pid))
            assert not cmd_ingest._local_ingest_worker_starting(settings)
            pidfile.write_text(str(ingest.pid))
            assert cmd_ingest._local_ingest_worker_starting(settings)
            os.utime(pidfile, (0, 0))
            assert not cmd_ingest._local_ingest_worker_starting(settings)
        finally:
            ingest.kill()
            hooks.kill()


class _Terminal:
    """A stderr that says it is a terminal (``isatty``), as a user's shell gives."""

    def __init__(self, tty: bool) -> None:
        self.tty, self.text = tty, ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize(
    ("argv", "tty", "shown"), [((), False, True), (("--json",), True, True), (("--json",), False, False)]
)
def test_json_keeps_the_progress_bar_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...], tty: bool, shown: bool
) -> None:
    """--json owns stdout; the bar is on stderr, so a long import still shows progress on a
    terminal, and only a redirected stderr (a log, a pipeline) goes without it."""
    err = _Terminal(tty)
    monkeypatch.setattr(sys, "stderr", err)
    bar = cmd_ingest._bar(_parse(*argv), 10, "facts")
    bar.update(10)
    bar.close()
    assert ("10/10" in err.text) is shown
