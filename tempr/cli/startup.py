"""Start-up costs of a short-lived CLI process that only talks to the fleet.

`tempr recall` on a warm fleet should take ≤ 0.5 s wall (issue 12), and most of that is
interpreter start and imports (Celery, kombu, redis-py, pydantic). ``python -X importtime``
showed two costs that buy such a process nothing:

* **Entry-point scans.** kombu (serializers, matchers), Celery (extensions) and pydantic
  (plugins) each call ``importlib.metadata.entry_points`` while they are imported, and every
  call reads the metadata of every installed distribution (about 170 in tempr's venv: 33 ms a
  scan under cProfile, about 65 ms timed directly on a slow 2-core machine). The installed set cannot change while one command runs, so the first scan is
  kept and each later call selects from it: the same entry points, one scan instead of four.
* **redis-py's OpenTelemetry metrics.** When the OpenTelemetry SDK is installed, importing
  ``redis`` imports ``opentelemetry.sdk.metrics`` (~100 ms, psutil included) for metrics that
  only a process which sets a ``MeterProvider`` and calls redis-py's observability ``init``
  ever records. tempr exports traces only, from its workers and gateway (``workers.telemetry``),
  never from the CLI; so the client commands mark that module absent, and redis-py takes its
  "SDK not installed" path.

Both apply to this process only (nothing is written to disk or to the environment) and only
for the commands in ``FLEET_CLIENTS``; workers, the gateway and the benchmarks start as before.
``python -m bench.cli_wall`` measures the effect.
"""

from __future__ import annotations

import importlib.metadata
import sys
from typing import Any

FLEET_CLIENTS = frozenset({"recall", "ingest", "demo"})
"""Sub-commands that talk to the fleet and exit: the ones whose wall time a user waits for."""
OTEL_METRICS = "opentelemetry.sdk.metrics"


def trim_imports(command: str | None) -> bool:
    """Apply both trims when ``command`` is a fleet client; True when it did."""
    if command not in FLEET_CLIENTS:
        return False
    scan_entry_points_once()
    sys.modules.setdefault(OTEL_METRICS, None)  # type: ignore[arg-type]  # None = "not installed"
    return True


def scan_entry_points_once() -> None:
    """Replace ``importlib.metadata.entry_points`` with one that scans once and selects after.

    Called with no arguments it returns what the first scan returned (on Python 3.11, the
    ``SelectableGroups`` of every entry point); with ``group=``/``name=`` it returns that
    scan's ``select(...)``, exactly what the original computes from a fresh scan.
    """
    original = importlib.metadata.entry_points
    if getattr(original, "scanned_once", False):
        return
    cache: list[Any] = []

    def entry_points(**params: Any) -> Any:
        if not cache:
            cache.append(original())
        return cache[0].select(**params) if params else cache[0]

    entry_points.scanned_once = True  # type: ignore[attr-defined]
    importlib.metadata.entry_points = entry_points
