"""The Grafana dashboard in deploy/ only queries metrics that workers/metrics.py defines."""

from __future__ import annotations

import json
import re
from pathlib import Path

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "tempr-dashboard.json"
METRICS = Path(__file__).resolve().parents[2] / "workers" / "metrics.py"


def test_dashboard_queries_only_defined_metrics() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    source = METRICS.read_text()
    defined = set(re.findall(r'"(tempr_[a-z_]+)"', source))
    assert {"tempr_queue_depth", "tempr_task_wait_seconds", "tempr_task_seconds", "tempr_task_events_total"} <= defined
    used: set[str] = set()
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            used |= set(re.findall(r"\b(tempr_[a-z_]+)", target["expr"]))
    assert used
    suffixes = ("_bucket", "_count", "_sum")
    unknown = {
        m for m in used if m not in defined and not any(m.endswith(s) and m[: -len(s)] in defined for s in suffixes)
    }
    assert not unknown, f"dashboard queries undefined metrics: {sorted(unknown)}"
    queried = {m.removesuffix("_bucket").removesuffix("_count") for m in used}
    assert {"tempr_queue_depth", "tempr_task_wait_seconds", "tempr_task_seconds", "tempr_task_events_total"} <= queried
