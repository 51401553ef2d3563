"""Real services for integration tests: embedded PostgreSQL+pgvector, Redis and a Celery worker.

One stack per test session (started here, stopped at the end). Tests isolate
themselves by using a fresh bank id each.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from config.settings import Settings, get_settings
from tempr.services import manager
from tempr.services.workers import DEFAULT_QUEUES, DetachedWorkers
from workers.resources import Resources


@pytest.fixture(scope="session")
def settings() -> Settings:
    return get_settings()


@pytest.fixture(scope="session")
def stack(settings: Settings) -> Iterator[manager.Endpoints]:
    endpoints = manager.up(settings)
    yield endpoints
    DetachedWorkers(settings.state_dir.resolve() / "workers").stop_all()
    manager.down(settings)


@pytest.fixture(scope="session")
def resources(settings: Settings, stack: manager.Endpoints) -> Resources:
    from workers import resources as module

    res = Resources(settings, manager.resolve_endpoints(settings))
    module._resources = res  # the process-wide resources, now pointing at the test stack
    return res


@pytest.fixture(scope="session")
def worker(settings: Settings, stack: manager.Endpoints) -> Iterator[Path]:
    """A real Celery worker process consuming every queue, started once per session."""
    from workers.app import app

    workers = DetachedWorkers(settings.state_dir.resolve() / "workers")
    workers.start("test", DEFAULT_QUEUES, concurrency=2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if app.control.ping(timeout=0.5):
            break
    else:
        log = (workers.root / "test.log").read_text()[-3000:]
        pytest.fail(f"Celery worker did not answer ping within 60 s:\n{log}")
    yield workers.root / "test.log"


@pytest.fixture()
def bank_id() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def sample_facts() -> Path:
    return Path(__file__).resolve().parents[2] / "tempr" / "data" / "sample_bank.jsonl"


@pytest.fixture(scope="session")
def sample_bank(resources, sample_facts: Path) -> str:
    """The sample bank, ingested once per session (tests must not write to it)."""
    from tempr.ingest.facts import parse_jsonl
    from tempr.ingest.pipeline import IngestDeps, ingest_facts

    bank = "sample"
    facts = list(parse_jsonl(sample_facts.read_text().splitlines()))
    ingest_facts(bank, facts, IngestDeps(resources.engine, resources.embedder, resources.extractor, resources.settings))
    return bank


@pytest.fixture(scope="session")
def recall_ctx(resources):
    """An in-process RecallContext over the test stack (RRF fallback reranker)."""
    from tempr.recall.context import RecallContext

    return RecallContext(engine=resources.engine, embedder=resources.embedder, settings=resources.settings)
