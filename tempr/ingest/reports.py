"""An import's report, timed end to end: pure, so the CLI's quick path can build it without the
ingest machinery (SQLAlchemy, the models) imported."""

from __future__ import annotations

from typing import Any


def with_elapsed(report: dict[str, Any], elapsed_s: float) -> dict[str, Any]:
    """The report timed end to end (validation, staging and publish) rather than by publish alone."""
    rate = report.get("received", 0) / elapsed_s if elapsed_s > 0 else 0.0
    return {**report, "elapsed_s": round(elapsed_s, 3), "facts_per_s": round(rate, 1)}
