"""The strategy tasks of the chord's header (queue ``retrieve``).

``tempr.retrieve.strategy(strategy_name, plan, deadline, sent_at)`` runs one of semantic /
keyword / graph / temporal and NEVER raises: a failure, a soft time limit or a passed deadline
comes back as a degraded ``StrategyResult`` dict (``error`` set), so the chord always reaches its
callback and the recall answers with the strategies that worked. Results are dicts identified by
their ``strategy`` field, never by position.

Test-only fault injection: ``TEMPR_FAULT_STRATEGIES="semantic,graph:slow,*@allfail-"`` makes this
worker's semantic strategy raise, its graph strategy sleep past ``TEMPR_STRATEGY_TIMEOUT_S``, and
every strategy raise for banks whose id starts with ``allfail-``.
"""

from __future__ import annotations

import time
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded

from config.settings import Settings
from tasks.common import context, ms
from tempr.core.types import ALL_STRATEGIES
from tempr.recall.plan import QueryPlan
from tempr.recall.strategies import degraded, run_strategy
from workers import metrics
from workers.app import app
from workers.resources import get_resources

_NAMES = {s.value for s in ALL_STRATEGIES}


def _inject_fault(name: str, bank_id: str, settings: Settings) -> None:
    """Spec: ``<strategy|*>[:slow][@<bank id prefix>]``, comma-separated."""
    for spec in filter(None, (x.strip() for x in settings.fault_strategies.split(","))):
        spec, _, bank_prefix = spec.partition("@")
        target, _, mode = spec.partition(":")
        if target in (name, "*") and bank_id.startswith(bank_prefix):
            if mode == "slow":
                time.sleep(settings.strategy_timeout_s + 30)
            raise RuntimeError(f"injected fault (TEMPR_FAULT_STRATEGIES={settings.fault_strategies!r})")


@app.task(name="tempr.retrieve.strategy", acks_late=True)
def strategy(strategy_name: str, plan: dict[str, Any], deadline: float, sent_at: float | None = None) -> dict[str, Any]:
    began = time.time()
    if strategy_name not in _NAMES:
        return {"strategy": strategy_name, "hits": [], "error": "unknown strategy", "elapsed_ms": 0.0, "detail": {}}
    started = time.perf_counter()
    try:
        if began > deadline:
            result = degraded(strategy_name, "the recall's deadline passed before this strategy ran")
        else:
            settings = get_resources().settings
            _inject_fault(strategy_name, str(plan.get("bank_id", "")), settings)
            result = run_strategy(strategy_name, QueryPlan.from_dict(plan), context())
    except SoftTimeLimitExceeded:
        result = degraded(
            strategy_name,
            "timed out (TEMPR_STRATEGY_TIMEOUT_S or the recall's deadline)",
            (time.perf_counter() - started) * 1000,
        )
    except Exception as exc:  # noqa: BLE001 - any strategy failure degrades the recall, never fails it
        result = degraded(strategy_name, exc, (time.perf_counter() - started) * 1000)
    if result.error:
        metrics.STRATEGY_DEGRADED.labels(strategy_name).inc()
    out = result.to_dict()
    out["queue_ms"] = ms(began - sent_at) if sent_at else 0.0
    out["finished_at"] = time.time()
    return out
