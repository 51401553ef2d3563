"""A bulk import's semantic links, walked from several database sessions before its publish.

Why: a bulk publish linked each memory to its nearest inside the publish's one transaction, one
HNSW query per memory on one PostgreSQL backend: 77 % of a 1,000,000-line publish while the other
core idled. The staged vectors are committed rows, so the walk can run first, split into id ranges
over ``TEMPR_INGEST_LINK_SESSIONS`` sessions (``tempr.store.prelink_repo``); the publish then only
copies the links, and nothing is visible before its commit, as before.

Each page of links is its own short transaction that also touches the import, so a long walk is
never taken for an abandoned import. A second publisher of the same import (a redelivered task)
waits on an advisory lock and then finds the links ready.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import Engine, text

from config.settings import Settings
from tempr.store import import_repo, links_repo, prelink_repo

log = logging.getLogger(__name__)

OPEN = ("staging", "publishing")
"""The states of an import whose publish has not committed (nor failed)."""


def prelink(engine: Engine, import_id: str, settings: Settings) -> float:
    """Compute the import's links unless they are ready; returns the seconds it took."""
    started = time.perf_counter()
    key = prelink_repo.names(import_id).lock_key
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as guard:
        guard.execute(text("SELECT pg_advisory_lock(hashtext(:k))"), {"k": key})
        try:
            with engine.begin() as conn:
                job = import_repo.get_import(conn, import_id, lock=True)
                if job is None or job["status"] not in OPEN or prelink_repo.ready(conn, import_id):
                    return time.perf_counter() - started  # published meanwhile, failed, or walked already
                import_repo.touch(conn, import_id, "publishing")
                size = prelink_repo.prepare(conn, import_id)
            built = time.perf_counter()
            with engine.connect() as conn:
                ranges = prelink_repo.ranges(conn, import_id, max(1, settings.ingest_link_sessions), size)
            with ThreadPoolExecutor(len(ranges), thread_name_prefix="prelink") as pool:
                found = sum(pool.map(lambda r: _walk(engine, import_id, r, settings), ranges))
            with engine.begin() as conn:
                prelink_repo.finish(conn, import_id)
        finally:
            guard.execute(text("SELECT pg_advisory_unlock(hashtext(:k))"), {"k": key})
    seconds = time.perf_counter() - started
    log.info(
        "import %s: %d memories indexed in %.1f s, %d links walked by %d sessions in %.1f s",
        import_id,
        size,
        built - started,
        found,
        len(ranges),
        seconds - (built - started),
    )
    return seconds


def _walk(engine: Engine, import_id: str, bounds: tuple[str, str], settings: Settings) -> int:
    """Link every memory in one id range, a page per transaction; returns the links found."""
    after, upto = bounds
    found = 0
    while True:
        with engine.begin() as conn:
            ids = prelink_repo.page(conn, import_id, after, upto, links_repo.BULK_PAGE)
            if not ids:
                return found
            found += prelink_repo.link_page(
                conn, import_id, ids, threshold=settings.semantic_link_threshold, top_k=settings.semantic_link_top_k
            )
            import_repo.touch(conn, import_id, "publishing")
        after = ids[-1]
