"""Real services for integration tests: embedded PostgreSQL+pgvector, Redis and a Celery worker.

One stack per test session (started here, stopped at the end). Tests isolate
themselves by using a fresh bank id each.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from config.settings import Settings, get_settings
from tempr.endpoints import Endpoints, resolve_endpoints
from tempr.recall.context import RecallContext
from tempr.services import manager
from tempr.services.workers import DEFAULT_QUEUES, DetachedWorkers
from workers.resources import Resources, configure


@pytest.fixture(scope="session")
def settings() -> Settings:
    return get_settings()


@pytest.fixture(scope="session")
def stack(settings: Settings) -> Iterator[Endpoints]:
    endpoints = manager.up(settings)
    yield endpoints
    DetachedWorkers(settings.state_dir.resolve() / "workers").stop_all()
    manager.purge(settings)  # stops them and deletes the cluster (as root it lives in /var/lib/tempr)


@pytest.fixture(scope="session")
def resources(settings: Settings, stack: Endpoints) -> Resources:
    """The process-wide resources, pointing at the test stack."""
    res = configure(settings, resolve_endpoints(settings))
    _local_key(settings, res)
    return res


def _local_key(settings: Settings, res: Resources) -> None:
    """Authentication is on in tests, as by default: the session's own client calls (recall_async,
    the CLI) use a local admin key over every bank, saved where `make demo` saves one."""
    from tempr.auth import create_key, save_local_key

    save_local_key(settings, create_key(res.engine, "local", ["*"], ["admin"], "test session").key)


@pytest.fixture(scope="session")
def make_key(resources: Resources) -> Any:
    """``make_key(tenant, banks, roles)`` -> tempr.auth.NewKey, stored in the session's database."""
    from tempr.auth import create_key

    def make(tenant: str, banks: list[str] | None = None, roles: list[str] | None = None) -> Any:
        return create_key(resources.engine, tenant, banks or ["*"], roles or ["admin"])

    return make


@pytest.fixture(scope="session")
def worker(settings: Settings, stack: Endpoints) -> Iterator[Path]:
    """A real Celery worker process consuming every queue, started once per session."""
    from workers.app import app

    workers = DetachedWorkers(settings.state_dir.resolve() / "workers")
    workers.start("test", DEFAULT_QUEUES, concurrency=2)
    deadline = time.monotonic() + 180  # the parent loads the embedder before its pool forks
    while time.monotonic() < deadline:
        if app.control.ping(timeout=0.5):
            break
    else:
        log = (workers.root / "test.log").read_text()[-3000:]
        pytest.fail(f"Celery worker did not answer ping within 180 s:\n{log}")
    yield workers.root / "test.log"


@pytest.fixture()
def bank_id() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def sample_facts() -> Path:
    return Path(__file__).resolve().parents[2] / "tempr" / "data" / "sample_bank.jsonl"


@pytest.fixture(scope="session")
def sample_bank(resources: Resources, sample_facts: Path) -> str:
    """The sample bank, ingested once per session (tests must not write to it)."""
    from helpers import sample_bank as shared_sample_bank

    return shared_sample_bank(resources, sample_facts)


@pytest.fixture(scope="session")
def recall_ctx(resources: Resources) -> RecallContext:
    """An in-process RecallContext over the test stack in the seed profile (RRF fallback reranker, boosts)."""
    seed = resources.settings.model_copy(update={"recall_profile": "seed"})
    return RecallContext(engine=resources.engine, embedder=resources.embedder, settings=seed)


@pytest.fixture(scope="module")
def ctx(recall_ctx: RecallContext) -> RecallContext:
    return recall_ctx


@pytest.fixture(scope="session")
def default_ctx(resources: Resources) -> RecallContext:
    """An in-process RecallContext in the default profile: the learned ranker is the rerank stage."""
    settings = resources.settings.model_copy(update={"recall_profile": "default"})
    return RecallContext(
        engine=resources.engine, embedder=resources.embedder, settings=settings, ranker=resources.ranker
    )
