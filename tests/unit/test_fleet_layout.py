"""The worker pools `tempr services up` starts: one per kind of work, the rerank pool only with a model."""

from __future__ import annotations

from config.celery import QUEUES
from tempr.services.workers import fleet_layout


def _queues(layout: list) -> list[str]:
    return sorted(q for spec in layout for q in spec.queues.split(","))


def test_every_queue_is_consumed_exactly_once() -> None:
    for cross_encoder in (False, True):
        assert _queues(fleet_layout(cross_encoder=cross_encoder)) == sorted(QUEUES)


def test_strategies_get_a_prefork_pool_of_their_own_wide_enough_for_a_recall() -> None:
    retrieve = next(s for s in fleet_layout() if "retrieve" in s.queues.split(","))
    assert retrieve.queues == "retrieve" and retrieve.pool == "prefork"  # soft time limits need prefork
    assert retrieve.concurrency >= 4  # one recall's four strategies never wait for each other


def test_a_cross_encoder_gets_a_threads_pool_and_sizes_are_honoured() -> None:
    layout = {s.name: s for s in fleet_layout(retrieve=6, analyse=3, ingest=1, cross_encoder=True)}
    assert layout["rerank"].pool == "threads" and layout["rerank"].queues == "rerank"
    assert layout["analyse"].queues == "fuse" and layout["analyse"].concurrency == 3
    assert layout["retrieve"].concurrency == 6 and layout["ingest"].concurrency == 1
    assert "rerank" not in {s.name for s in fleet_layout()}  # no model: fuse workers rank


def test_embedding_pools_share_the_cores_between_their_threads(monkeypatch) -> None:
    import os

    from tempr.services.workers import pool_env

    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert pool_env("ingest", 2, environ={}) == {"TEMPR_EMBEDDER_THREADS": "4"}
    assert pool_env("ingest", 16, environ={}) == {"TEMPR_EMBEDDER_THREADS": "1"}
    assert pool_env("retrieve,fuse,rerank,ingest", 4, environ={}) == {"TEMPR_EMBEDDER_THREADS": "2"}
    assert pool_env("fuse,rerank", 2, environ={}) == {"TEMPR_EMBEDDER_THREADS": "4"}  # the query embedder
    assert pool_env("retrieve", 4, environ={}) == pool_env("webhooks", 8, environ={}) == {}  # no model
    assert pool_env("ingest", 2, environ={"TEMPR_EMBEDDER_THREADS": "3"}) == {}  # the user's choice stands
