"""The graph walk takes its seeds from the semantic and keyword strategies of the same recall
(``tempr.recall.seeds``), in one process (threads) and across processes (Redis), and reaches the
same memories as with seed queries of its own."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest

from tempr.jobs.redis_client import cache_redis
from tempr.jobs.seed_board import RedisSeedBoard, board_key
from tempr.recall import strategies
from tempr.recall.context import RecallContext
from tempr.recall.models import parse_request
from tempr.recall.pipeline import run_strategies
from tempr.recall.plan import analyse
from tempr.recall.seeds import LocalSeedBoard

QUERIES = ("Where does Alice work?", "Why did Alice leave Google?", "What does Bob do in San Francisco?")


def _plan(ctx: RecallContext, bank: str, query: str) -> Any:
    return analyse(bank, parse_request({"query": query, "budget": "mid"}), ctx)


def _redis_board(resources: Any, bank: str, query: str) -> RedisSeedBoard:
    client, _ = cache_redis(resources.endpoints.cache_url)
    assert client is not None
    return RedisSeedBoard(client, board_key(bank, query, time.time()))


@pytest.mark.parametrize("kind", ["local", "redis"])
@pytest.mark.parametrize("query", QUERIES)
def test_shared_seeds_reach_the_same_memories(
    default_ctx: RecallContext, resources: Any, sample_bank: str, kind: str, query: str
) -> None:
    plan = _plan(default_ctx, sample_bank, query)
    own_hits, own = strategies.graph(plan, default_ctx)
    assert own["seeds_from"] == {"semantic": "own query", "keyword": "own query"}
    board = LocalSeedBoard() if kind == "local" else _redis_board(resources, sample_bank, query)
    ctx = replace(default_ctx, seeds=board)
    strategies.semantic(plan, ctx)
    strategies.keyword(plan, ctx)
    shared_hits, shared = strategies.graph(plan, ctx)
    assert shared["seeds_from"] == {"semantic": "shared", "keyword": "shared"}
    assert shared_hits == own_hits
    assert {k: v for k, v in shared.items() if k != "seeds_from"} == {k: v for k, v in own.items() if k != "seeds_from"}


def test_a_failed_or_unstarted_strategy_sends_the_graph_to_its_own_query(
    default_ctx: RecallContext, resources: Any, sample_bank: str
) -> None:
    query = QUERIES[0]
    plan = _plan(default_ctx, sample_bank, query)
    own_hits, _ = strategies.graph(plan, default_ctx)
    board = _redis_board(resources, sample_bank, query)
    board.started("semantic")
    board.post("semantic", None)  # started, then failed; keyword never started
    started = time.perf_counter()
    hits, detail = strategies.graph(plan, replace(default_ctx, seeds=board))
    assert detail["seeds_from"] == {"semantic": "own query", "keyword": "own query"}
    assert hits == own_hits
    assert time.perf_counter() - started < strategies.SEED_WAIT_S + 5  # no wait for keyword


def test_a_semantic_search_that_raises_posts_none(default_ctx: RecallContext, sample_bank: str) -> None:
    plan = _plan(default_ctx, sample_bank, QUERIES[0])
    board = LocalSeedBoard()

    class Broken:
        def begin(self) -> Any:
            raise RuntimeError("database gone")

    with pytest.raises(RuntimeError):
        strategies.semantic(plan, replace(default_ctx, engine=Broken(), seeds=board))  # type: ignore[arg-type]
    assert board.running(["semantic"]) == {"semantic"} and board.take("semantic", 0.01) is None


def test_the_in_process_pipeline_shares_seeds_and_answers_the_same(
    default_ctx: RecallContext, sample_bank: str
) -> None:
    for query in QUERIES:
        plan = _plan(default_ctx, sample_bank, query)
        results = {r.strategy.value: r for r in run_strategies(plan, default_ctx)}
        assert not any(r.error for r in results.values())
        own_hits, _ = strategies.graph(plan, default_ctx)
        assert list(results["graph"].hits) == own_hits
        assert set(results["graph"].detail["seeds_from"].values()) <= {"shared", "own query"}
