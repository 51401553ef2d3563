"""Which strategies the plan alone settles, and when a recall counts as "every strategy failed"."""

from __future__ import annotations

from datetime import UTC, datetime

from tempr.core.types import Hit, Strategy, StrategyResult, TimeWindow
from tempr.recall.models import RecallRequest
from tempr.recall.plan import QueryPlan
from tempr.recall.strategies import all_failed, degraded, settled

WHEN = datetime(2024, 6, 1, 12, tzinfo=UTC)
SPRING = TimeWindow(datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 5, 31, tzinfo=UTC), "season")


def _plan(windows: list[TimeWindow]) -> QueryPlan:
    req = RecallRequest(query="What did Alice do?", query_timestamp=WHEN)
    return QueryPlan(bank_id="b", request=req, embedding=[0.1], budget=10, depth=1, now=WHEN, windows=windows)


def test_only_the_temporal_strategy_without_a_window_is_settled() -> None:
    undated, dated = _plan([]), _plan([SPRING])
    result = settled(Strategy.TEMPORAL, undated)
    assert result is not None and result.hits == () and result.error is None and "skipped" in result.detail
    assert settled(Strategy.TEMPORAL, dated) is None
    assert all(settled(s, undated) is None for s in (Strategy.SEMANTIC, Strategy.KEYWORD, Strategy.GRAPH))


def test_all_failed_counts_only_the_strategies_that_had_something_to_search() -> None:
    ok = StrategyResult(Strategy.SEMANTIC, (Hit("a", 1.0),), None, 1.0, {})
    skipped = settled(Strategy.TEMPORAL, _plan([]))
    assert skipped is not None
    down = [degraded(s, "down") for s in (Strategy.SEMANTIC, Strategy.KEYWORD, Strategy.GRAPH)]
    message = all_failed([*down, skipped])
    assert message is not None and "graph: down" in message and "temporal: not run (no time reference" in message
    assert all_failed([*down, degraded(Strategy.TEMPORAL, "down")]) is not None
    assert all_failed([ok, *down[1:], skipped]) is None
    assert all_failed([ok, skipped]) is None  # nothing failed
    empty = StrategyResult(Strategy.TEMPORAL, (), None, 1.0, {"windows": 1, "in_window": 0})
    assert all_failed([*down, empty]) is None  # it searched and found nothing: an answer, not a failure
