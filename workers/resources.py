"""Per-process resources: built lazily once, disposed after fork.

A Celery prefork child inherits its parent's memory; database pools and
sockets must not be shared across processes, so ``reset_after_fork`` drops
them and the child builds its own on first use. Models load lazily, so a
worker's start-up is never blocked by them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from config.settings import Settings, get_settings
from tempr.services.manager import Endpoints, resolve_endpoints


@dataclass
class Resources:
    settings: Settings
    endpoints: Endpoints
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _cache: dict[str, Any] = field(default_factory=dict)

    def _get(self, name: str, build: Any) -> Any:
        if name not in self._cache:
            with self._lock:
                if name not in self._cache:
                    self._cache[name] = build()
        return self._cache[name]

    @property
    def engine(self) -> Any:
        from tempr.store.engine import make_engine

        def build() -> Any:
            if not self.endpoints.database_url:
                from config.errors import ServiceError

                raise ServiceError("no database: set TEMPR_DATABASE_URL or run `tempr services up`")
            return make_engine(self.endpoints.database_url)

        return self._get("engine", build)

    @property
    def embedder(self) -> Any:
        from tempr.providers.embedder import make_embedder

        return self._get(
            "embedder", lambda: make_embedder(self.settings.embedder, batch_size=self.settings.embed_batch_size)
        )

    @property
    def extractor(self) -> Any:
        from tempr.providers.entities import make_entity_extractor

        return self._get("extractor", lambda: make_entity_extractor(self.settings.entity_extraction))

    @property
    def reranker(self) -> Any:
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

    def reset_after_fork(self) -> None:
        engine = self._cache.pop("engine", None)
        if engine is not None:
            engine.dispose(close=False)


_resources: Resources | None = None


def get_resources() -> Resources:
    global _resources
    if _resources is None:
        settings = get_settings()
        _resources = Resources(settings, resolve_endpoints(settings))
    return _resources


def recall_context() -> Any:
    """A RecallContext over this process's resources."""
    from tempr.recall.context import RecallContext

    res = get_resources()
    return RecallContext(engine=res.engine, embedder=res.embedder, settings=res.settings, reranker=res.reranker)
