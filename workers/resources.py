"""Per-process resources: built lazily once, disposed after fork.

A Celery prefork child inherits its parent's memory; database pools and
sockets must not be shared across processes, so ``reset_after_fork`` drops
them and the child builds its own on first use. Models load lazily, so a
worker's start-up is never blocked by them.

The endpoints are passed in (``configure``), or resolved once by ``tempr.endpoints``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

from config.errors import ServiceError
from config.settings import Settings, get_settings
from tempr.endpoints import Endpoints, resolve_endpoints

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from tempr.ingest.pipeline import IngestDeps
    from tempr.providers.embedder import Embedder
    from tempr.providers.entities import EntityExtractor
    from tempr.providers.reranker import CandidateRanker, Reranker
    from tempr.recall.context import RecallContext
    from tempr.store.unit_cache import UnitCache

T = TypeVar("T")


@dataclass
class Resources:
    settings: Settings
    endpoints: Endpoints
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _cache: dict[str, Any] = field(default_factory=dict)

    def _get(self, name: str, build: Callable[[], T]) -> T:
        if name not in self._cache:
            with self._lock:
                if name not in self._cache:
                    self._cache[name] = build()
        return cast(T, self._cache[name])

    @property
    def engine(self) -> Engine:
        from tempr.store.engine import make_engine

        def build() -> Engine:
            if not self.endpoints.database_url:
                raise ServiceError("no database: set TEMPR_DATABASE_URL or run `tempr services up`")
            return make_engine(self.endpoints.database_url)

        return self._get("engine", build)

    @property
    def embedder(self) -> Embedder:
        return self._get("embedder", lambda: self._make_embedder(self.settings.embedder))

    def _make_embedder(self, kind: str) -> Embedder:
        from tempr.providers.embedder import make_embedder

        s = self.settings
        return make_embedder(
            kind,
            batch_size=s.embed_batch_size,
            cache_dir=s.models_dir,
            threads=s.embedder_threads or None,
        )

    def embedder_for(self, space: str | None) -> Embedder:
        """The embedder of a bank's vector space (``embedder.spaces``): the configured one if it
        writes that space, else one made for it on first use (a bank keeps the space it was
        written in when ``TEMPR_EMBEDDER`` changes; None is a legacy bank's)."""
        from tempr.providers.embedder.spaces import LEGACY, kind_for

        default = self.embedder
        if (space or LEGACY) == default.space:
            return default
        return self._get(f"embedder:{space}", lambda: self._make_embedder(kind_for(space)))

    def ingest_deps(self) -> IngestDeps:
        """What ingest needs here; each bank is embedded in its own space (``embedder_for``)."""
        from tempr.ingest.pipeline import IngestDeps

        return IngestDeps(self.engine, self.embedder, self.extractor, self.settings, embedders=self.embedder_for)

    @property
    def extractor(self) -> EntityExtractor:
        from tempr.providers.entities import make_entity_extractor

        return self._get("extractor", lambda: make_entity_extractor(self.settings.entity_extraction))

    @property
    def reranker(self) -> Reranker | None:
        """The configured cross-encoder (loaded on first use), or None for the RRF fallback."""
        from tempr.providers.reranker import make_reranker

        s = self.settings
        return self._get(
            "reranker",
            lambda: make_reranker(
                s.reranker_model,
                calibrated=s.reranker_calibrated,
                batch_size=s.reranker_batch_size,
                device=s.reranker_device,
            ),
        )

    @property
    def ranker(self) -> CandidateRanker | None:
        """The learned ranker of the ``default`` recall profile (loaded on first use), None for ``seed``."""
        from tempr.providers.reranker import make_ranker

        s = self.settings
        compiled = s.models_dir if s.ranker_runtime == "compiled" else None
        return self._get("ranker", lambda: make_ranker(s.recall_profile, s.ranker_model_path, compiled_dir=compiled))

    @property
    def unit_cache(self) -> UnitCache | None:
        """This process's row cache for the learned ranker (None when ``recall_unit_cache`` is 0)."""
        from tempr.store.unit_cache import UnitCache
        from workers.metrics import observe_unit_cache

        size = self.settings.recall_unit_cache
        return self._get("unit_cache", lambda: UnitCache(size, observe_unit_cache) if size else None)

    def reset_after_fork(self) -> None:
        self._cache.pop("unit_cache", None)  # its lock may have been held at the fork
        engine = self._cache.pop("engine", None)
        if engine is not None:
            engine.dispose(close=False)


_resources: Resources | None = None


def configure(settings: Settings, endpoints: Endpoints) -> Resources:
    """Make these settings and endpoints this process's resources (tests, embedding apps)."""
    global _resources
    _resources = Resources(settings, endpoints)
    return _resources


def get_resources() -> Resources:
    if _resources is None:
        settings = get_settings()
        return configure(settings, resolve_endpoints(settings))
    return _resources


def recall_context(
    *,
    embedder: bool = True,
    reranker: Reranker | None = None,
    space: str | None = None,
    resources: Resources | None = None,
) -> RecallContext:
    """A RecallContext over this process's resources.

    ``embedder=False`` where no query is analysed (the steps after the strategies), so a worker
    that only fuses never loads the model; ``reranker`` is whatever scores candidates here (the
    configured cross-encoder, this process's batcher, or None for the RRF fallback). The learned
    ranker comes with the recall profile (``default``: the shipped model; ``seed``: None).
    ``space``: the bank's vector space, so its query is embedded by that space's embedder; None
    (a caller that does not know the bank) gives the configured embedder, never the legacy space's
    (``tempr.recall.pipeline.recall`` re-resolves the bank's own space either way).
    ``resources``: another process-wide set than ``get_resources()`` (the gateway's own)."""
    from tempr.recall.context import RecallContext

    res = resources or get_resources()
    return RecallContext(
        engine=res.engine,
        embedder=(res.embedder if space is None else res.embedder_for(space)) if embedder else None,
        settings=res.settings,
        reranker=reranker,
        ranker=res.ranker,
        unit_cache=res.unit_cache,
        embedders=res.embedder_for,
    )
