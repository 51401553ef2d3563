"""The fleet clients' start-up trims (``tempr.cli.startup``): same entry points, fewer scans,
no OpenTelemetry metrics SDK; every other command starts as before. Each case runs in a fresh
interpreter, because the trims change the process they run in."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import importlib.metadata as md, json, sys
original = md.entry_points
before = {{g: sorted((e.name, e.value) for e in original(group=g)) for g in GROUPS}}
scans = []
def counting(**params):
    scans.append(params)
    return original(**params)
md.entry_points = counting
from tempr.cli.startup import trim_imports
applied = trim_imports({command!r})
after = {{g: sorted((e.name, e.value) for e in md.entry_points(group=g)) for g in GROUPS}}
everything = md.entry_points()
import redis, celery.app, pydantic
import tempr.client, tempr.recall.models
print(json.dumps({{
    "applied": applied,
    "same": before == after,
    "scans": len(scans),
    "all_groups": sorted(set(everything.groups)) == sorted(set(original().groups)),
    "otel_metrics": sys.modules.get("opentelemetry.sdk.metrics") is not None,
    "redis_otel": __import__("redis.observability.providers").observability.providers.OTEL_AVAILABLE,
}}))
"""
GROUPS = ("console_scripts", "kombu.serializers", "celery.result_backends", "pydantic", "spacy_factories")


def _probe(command: str) -> dict[str, object]:
    code = f"GROUPS = {GROUPS!r}\n" + PROBE.format(command=command)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("command", ["recall", "ingest", "demo"])
def test_a_fleet_client_scans_entry_points_once_and_skips_the_metrics_sdk(command: str) -> None:
    out = _probe(command)
    assert out["applied"] is True
    assert out["same"] is True and out["all_groups"] is True  # the same answers as a fresh scan
    assert out["scans"] == 1  # kombu, Celery and pydantic asked too: all served by the first scan
    assert out["otel_metrics"] is False and out["redis_otel"] is False


@pytest.mark.parametrize("command", ["worker", "api", "services", "bench", ""])
def test_other_commands_start_as_before(command: str) -> None:
    out = _probe(command)
    assert out["applied"] is False
    assert int(out["scans"]) > 1  # every import scanned again, as without tempr
    assert out["otel_metrics"] is True  # installed, and redis-py found it


def test_the_console_script_trims_and_main_does_not() -> None:
    """``cli()`` (the ``tempr`` script and ``python -m tempr.cli.main``) trims; ``main()`` is what
    tests and embedders call, and leaves their process alone."""
    code = (
        "import sys\n"
        "from tempr.cli import main as m\n"
        "sys.argv = ['tempr', 'recall', '--help']\n"
        "try:\n"
        "    m.{fn}() if '{fn}' == 'cli' else m.main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "import importlib.metadata as md\n"
        "print(getattr(md.entry_points, 'scanned_once', False), 'opentelemetry.sdk.metrics' in sys.modules)\n"
    )
    for fn, expected in (("cli", "True True"), ("main", "False False")):
        done = subprocess.run(
            [sys.executable, "-c", code.format(fn=fn)], capture_output=True, text=True, timeout=60, check=True
        )
        assert done.stdout.strip().splitlines()[-1] == expected, (fn, done.stdout, done.stderr)
