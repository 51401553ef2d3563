"""Queue a bank's own HNSW index: after a write that took the bank past the threshold, or ahead of
a file import that will.

The index is built by the ``tempr.ingest.index_bank`` task on an ingest worker
(``tempr.store.bank_index.build``: ``CREATE INDEX CONCURRENTLY``, after the write committed), so
the write that crosses the threshold is not held up by the build, and other banks' writes are not
blocked by it. A deleted bank's index is dropped by ``tempr.ingest.drop_orphan_indexes``.
"""

from __future__ import annotations

import logging

from celery import Celery
from sqlalchemy import Engine

from tempr.store import bank_index

log = logging.getLogger(__name__)

INDEX_TASK = "tempr.ingest.index_bank"
ORPHANS_TASK = "tempr.ingest.drop_orphan_indexes"


def index_follows(engine: Engine, app: Celery, bank_id: str) -> bool:
    """Queue the build if the bank wants an index of its own; whether one was queued.

    Called once the write has committed: a broker or database error here is logged, never raised,
    so it cannot fail a write that succeeded (the next write, or ``tempr db index-banks``, queues
    it again). A build queued twice does the work once (``bank_index.build`` is idempotent)."""
    try:
        with engine.connect() as conn:
            if not bank_index.wants_index(conn, bank_id):
                return False
        app.send_task(INDEX_TASK, args=(bank_id,))
    except Exception:
        log.warning("could not queue the own index of bank %s; run `tempr db index-banks`", bank_id, exc_info=True)
        return False
    return True


def index_ahead(engine: Engine, app: Celery, bank_id: str, adding: int) -> bool:
    """Before a large import is staged: queue the build of the bank's index if the import will take
    a bank that holds memories past the threshold, so that its publish (minutes later) writes into
    the bank's own graph (``bank_index.adopt``); an import into an empty bank is published in bulk
    instead (``bank_index.publishes_in_bulk``). Best effort, as ``index_follows``: if it is not ready
    in time, the publish searches the bank exactly and the build after it finishes the job."""
    try:
        with engine.connect() as conn:
            if not bank_index.wants_index_ahead(conn, bank_id, adding):
                return False
        app.send_task(INDEX_TASK, args=(bank_id,), kwargs={"adding": adding})
    except Exception:
        log.warning("could not queue the own index of bank %s ahead of its import", bank_id, exc_info=True)
        return False
    return True


def orphans_follow(app: Celery, bank_id: str) -> None:
    """After a bank is deleted: queue the drop of its index (best effort, as above)."""
    try:
        app.send_task(ORPHANS_TASK)
    except Exception:
        log.warning("could not queue the drop of bank %s's index; run `tempr db index-banks`", bank_id, exc_info=True)
