"""The strategy tasks of the chord's header (queue ``retrieve``).

``tempr.retrieve.strategy(call)`` (a ``StrategyCall``) runs one of semantic / keyword / graph /
temporal and never raises for a strategy's sake: a failure, a soft time limit or a passed deadline
comes back as a degraded ``StrategyReport`` (``error`` set), so the chord always reaches its
callback and the recall answers with the strategies that worked. Reports are identified by their
``strategy`` field, never by position.

Test-only fault injection: ``TEMPR_FAULT_STRATEGIES="semantic,graph:slow,*@allfail-"`` makes this
worker's semantic strategy raise, its graph strategy sleep past ``TEMPR_STRATEGY_TIMEOUT_S``, and
every strategy raise for banks whose id starts with ``allfail-``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded

from config.settings import Settings
from tasks.messages import StrategyCall, StrategyReport
from tempr.core.timeutil import ms, ms_since
from tempr.jobs.redis_client import cache_redis
from tempr.jobs.seed_board import RedisSeedBoard, board_key
from tempr.recall.context import RecallContext
from tempr.recall.strategies import degraded, run_strategy
from workers import metrics
from workers.app import app
from workers.resources import get_resources, recall_context


def _inject_fault(name: str, bank_id: str, settings: Settings) -> None:
    """Spec: ``<strategy|*>[:slow][@<bank id prefix>]``, comma-separated."""
    for spec in filter(None, (x.strip() for x in settings.fault_strategies.split(","))):
        spec, _, bank_prefix = spec.partition("@")
        target, _, mode = spec.partition(":")
        if target in (name, "*") and bank_id.startswith(bank_prefix):
            if mode == "slow":
                time.sleep(settings.strategy_timeout_s + 30)
            raise RuntimeError(f"injected fault (TEMPR_FAULT_STRATEGIES={settings.fault_strategies!r})")


def _context(msg: StrategyCall) -> RecallContext:
    """The recall context with this chord's seed board (``tempr.jobs.seed_board``), when the job
    Redis is configured: semantic and keyword post their first hits, the graph takes them."""
    ctx = recall_context(embedder=False)
    client, breaker = cache_redis(get_resources().endpoints.cache_url)
    if client is None or not breaker.allows():
        return ctx
    key = board_key(msg.plan.bank_id, msg.plan.request.query, msg.sent_at)
    return replace(ctx, seeds=RedisSeedBoard(client, key))


@app.task(name="tempr.retrieve.strategy", acks_late=True)
def strategy(call: dict[str, Any]) -> dict[str, Any]:
    """``StrategyCall`` in, ``StrategyReport`` out (docs/execution.md)."""
    began = time.time()
    msg = StrategyCall.receive(call)
    name = msg.strategy
    started = time.perf_counter()
    try:
        if began > msg.deadline:
            metrics.STALE_MESSAGES.labels("strategy").inc()
            result = degraded(name, "the recall's deadline passed before this strategy ran")
        else:
            _inject_fault(name, msg.plan.bank_id, get_resources().settings)
            result = run_strategy(name, msg.plan, _context(msg))
    except SoftTimeLimitExceeded:
        result = degraded(name, "timed out (TEMPR_STRATEGY_TIMEOUT_S or the recall's deadline)", ms_since(started))
    except Exception as exc:  # noqa: BLE001 - any strategy failure degrades the recall, never fails it
        result = degraded(name, exc, ms_since(started))
    if result.error:
        metrics.STRATEGY_DEGRADED.labels(name).inc()
    return StrategyReport.of(result, queue_ms=ms(began - msg.sent_at), finished_at=time.time()).send()
