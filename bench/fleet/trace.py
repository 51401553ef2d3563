"""Read the spans the hosts wrote (TEMPR_OTEL_SPANS_FILE, JSON lines) and check one recall's trace.

A recall's trace must hold, all under one trace id and each linked to a parent in the trace:
the gateway's server span, ``run/tempr.recall.start``, four ``run/tempr.retrieve.strategy``,
``run/tempr.fuse.collect`` (which finishes the recall unless a cross-encoder is configured: then
``run/tempr.rerank.score`` and ``run/tempr.fuse.finish`` follow) and, with a callback,
``run/tempr.webhooks.deliver``.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REQUIRED = (
    ("run/tempr.recall.start", 1),
    ("run/tempr.retrieve.strategy", 3),  # 4 with a time window: without one the temporal strategy is settled at start
    ("run/tempr.fuse.collect", 1),
)
WITH_CROSS_ENCODER = (("run/tempr.rerank.score", 1), ("run/tempr.fuse.finish", 1))
WEBHOOK = "run/tempr.webhooks.deliver"


def load_spans(folder: Path) -> list[dict[str, Any]]:
    """Every span in ``folder/*.jsonl``, with ``host`` = the file's name."""
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            if line.strip():
                span = json.loads(line)
                span["host"] = path.stem
                out.append(span)
    return out


def trace_of(spans: Iterable[dict[str, Any]], job_id: str) -> list[dict[str, Any]]:
    """All spans of the trace that any span tagged with ``tempr.job_id = job_id`` belongs to."""
    spans = list(spans)
    ids = {s["context"]["trace_id"] for s in spans if (s.get("attributes") or {}).get("tempr.job_id") == job_id}
    return sorted((s for s in spans if s["context"]["trace_id"] in ids), key=lambda s: s.get("start_time") or "")


def problems(trace: list[dict[str, Any]], *, webhook: bool, cross_encoder: bool = False) -> list[str]:
    """What is missing or unlinked in one recall's trace (empty: every hop is there)."""
    found: list[str] = []
    if len({s["context"]["trace_id"] for s in trace}) != 1:
        found.append(f"{len({s['context']['trace_id'] for s in trace})} trace ids, not 1")
    names = Counter(s["name"] for s in trace)
    if not any(s.get("kind") == "SpanKind.SERVER" for s in trace):
        found.append("no gateway server span")
    wanted = (*REQUIRED, *(WITH_CROSS_ENCODER if cross_encoder else ()), *(((WEBHOOK, 1),) if webhook else ()))
    for name, count in wanted:
        if names[name] < count:
            found.append(f"{name}: {names[name]} of {count}")
    span_ids = {s["context"]["span_id"] for s in trace}
    roots = [s for s in trace if not s.get("parent_id")]
    orphans = [s["name"] for s in trace if s.get("parent_id") and s["parent_id"] not in span_ids]
    if len(roots) != 1:
        found.append(f"{len(roots)} root spans")
    if orphans:
        found.append(f"spans whose parent is not in the trace: {orphans}")
    return found


def hop_table(trace: list[dict[str, Any]]) -> str:
    rows = ["| host | span | parent |", "|:---|:---|:---|"]
    by_id = {s["context"]["span_id"]: s for s in trace}
    for s in trace:
        if s["name"].startswith("http ") or s["name"].endswith((" http send", " http receive")):
            continue  # ASGI send/receive internals
        parent = by_id.get(s.get("parent_id") or "")
        shown = f"`{parent['name']}`" if parent else "(root)"
        rows.append(f"| {s['host']} | `{s['name']}` | {shown} |")
    return "\n".join(rows)


def trace_summary(folder: Path, jobs: list[dict[str, Any]]) -> str:
    """The complete trace (webhook included) that crossed the most hosts, as a table; else why not."""
    spans = load_spans(folder)
    last: list[str] = ["no async job"]
    best: list[dict[str, Any]] = []
    for job in jobs:
        trace = trace_of(spans, job["job_id"])
        last = problems(trace, webhook=True)
        if not last and len({s["host"] for s in trace}) > len({s["host"] for s in best}):
            best = trace
    if not best:
        return f"No complete trace found among {len(jobs)} async jobs ({len(spans)} spans); last: {'; '.join(last)}"
    job_id = next(s["attributes"]["tempr.job_id"] for s in best if "tempr.job_id" in (s.get("attributes") or {}))
    hosts = sorted({s["host"] for s in best})
    return (
        f"Job `{job_id}`: {len(best)} spans, one trace id, every span linked to its parent, on hosts "
        f"{', '.join(hosts)} (from each host's TEMPR_OTEL_SPANS_FILE; of the complete traces, the one that "
        "crossed the most hosts).\n\n" + hop_table(best)
    )


def _seconds(stamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def queue_ms_per_recall(spans: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Median task run time one recall spends on each queue (sum of its ``run/`` spans there; the
    median, because a freshly started worker's first task pays for loading its model)."""
    per_job: dict[tuple[str, str], float] = {}
    for s in spans:
        attrs = s.get("attributes") or {}
        job, queue = attrs.get("tempr.job_id"), attrs.get("tempr.queue")
        if not s["name"].startswith("run/") or not job or not queue or not s.get("end_time"):
            continue
        key = (str(job), str(queue))
        per_job[key] = per_job.get(key, 0.0) + (_seconds(s["end_time"]) - _seconds(s["start_time"])) * 1000
    totals: dict[str, list[float]] = {}
    for (_job, queue), ms in per_job.items():
        totals.setdefault(queue, []).append(ms)
    return {queue: statistics.median(v) for queue, v in sorted(totals.items())}
