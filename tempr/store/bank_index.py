"""A large bank's own HNSW index: a partial index ``WHERE bank_id = '<id>'`` on ``memory_units``.

Why: every bank of more than ``ANN_INDEX_MIN_UNITS`` memories shares one HNSW index
(``ann_indexed``, migration 0008), and a search filtered to one bank walks through every other
bank's nodes. Measured on 2 cores (BENCHMARKS.md, "A bank's own HNSW index"): a 10,000-fact bank
beside a 100,000-fact one, top 300, took 34 ms through the shared index and 12 ms by the exact scan
that banks of up to 20,000 get, against 5.5 ms through an index of its own; beside a 1M-fact bank
the shared index cost 143-188 ms where the bank's own would cost what it costs alone.

How, without blocking other banks: the index is built with ``CREATE INDEX CONCURRENTLY`` (no lock
that stops other banks' writes) on an autocommit connection, after the write that took the bank
past the threshold has committed (``build``: the ``tempr.ingest.index_bank`` task, ``tempr db
index-banks``), or, for an import that will take it there, while its facts are staged, before
the publish (``build(..., adding=)``; the publish's first write adopts it: ``adopt``). Only once
PostgreSQL reports it valid does ``banks.own_index`` turn true (migration 0012). From then on:

- recall and ingest's link k-NN search the bank with its id written into the statement
  (``bank_clause``), so the planner can prove the index's predicate;
- the bank's new memories no longer enter the shared index (``ingest_repo.enter_ann_index``):
  the bank's own index holds every row of the bank, whatever ``ann_indexed`` says.

The flag only ever chooses a faster plan for the same statement: with the index missing (dropped
by hand, say) the same SQL is answered by an exact scan, so a stale flag costs time, never a
memory.

Since migration 0014 no bank enters the shared index any more: until its own index is ready, a bank
is searched exactly, whatever its size. Only banks already in the shared index then
(``banks.shared_index``) keep entering and using it until they get their own.

Cost: PostgreSQL weighs every partial index when it plans a statement on ``memory_units``, about
5 us each (measured: 0.08 ms with one, 0.60 ms with a hundred more). Past a few hundred large
banks, partition by bank instead (docs/deploy.md, section 7).
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import OperationalError

from tempr.bank_ids import check_bank_id
from tempr.store.schema import ANN_INDEX_MIN_UNITS

log = logging.getLogger(__name__)

OWN_INDEX_MIN_UNITS = ANN_INDEX_MIN_UNITS
"""A bank gets its own index once it holds more than this many memories: the size past which
recall and link search stop scanning a bank exactly (``links_repo.LINK_EXACT_MAX_UNITS``)."""


def build_memory(vectors: int) -> str:
    """``maintenance_work_mem`` for an HNSW build over ``vectors`` 384-d vectors: the graph takes
    about 2.5 KB a vector (250 MB at 100,000, 2.5 GB at 1.1M), and a build that outgrows it falls
    back to inserting one vector at a time (pgvector's notice; much slower). 3 KB a vector, at
    least 1 GB, at most 8 GB."""
    return f"{min(8192, max(1024, -(-vectors * 3 // 1024)))}MB"


_PREFIX = "memory_units_hnsw_"


@dataclass(frozen=True)
class BankSearch:
    """What a vector search of a bank needs to know to pick its plan, read in one statement."""

    size: int
    own_index: bool
    shared_index: bool = False
    """The bank's memories are in the shared HNSW index (written before migration 0014)."""

    @property
    def exact(self) -> bool:
        """Whether no HNSW index holds the bank's memories, so a search must score every one."""
        return not self.own_index and not self.shared_index


def bank_search(conn: Connection, bank_id: str) -> BankSearch:
    """The bank's memory count (0 for an unknown bank) and which HNSW index holds its memories."""
    row = conn.execute(
        text("SELECT unit_count, own_index, shared_index FROM banks WHERE id = :b"), {"b": bank_id}
    ).first()
    return BankSearch(int(row[0]), bool(row[1]), bool(row[2])) if row else BankSearch(0, False)


def index_name(bank_id: str) -> str:
    """The bank's index name: a digest, since a bank id may be 128 characters (names stop at 63)."""
    return _PREFIX + hashlib.sha256(check_bank_id(bank_id).encode()).hexdigest()[:32]


def bank_clause(bank_id: str, alias: str = "m") -> str:
    """``<alias>.bank_id = '<id>'``: the index predicate, as a literal the planner can match.

    A bound parameter would do for a one-off statement, but not for a prepared one that PostgreSQL
    plans once for every value (a generic plan cannot use a partial index). Safe to inline: a bank
    id is letters, digits and ``_ . : -`` only (``check_bank_id``), never a quote."""
    return f"{alias}.bank_id = '{check_bank_id(bank_id)}'"


def wants_index(conn: Connection, bank_id: str, adding: int = 0) -> bool:
    """Whether the bank is (or, with ``adding`` more memories, will be) past the threshold without
    a ready index of its own."""
    return _past_threshold(bank_search(conn, bank_id), adding)


def _past_threshold(state: BankSearch, adding: int) -> bool:
    return state.size + adding > OWN_INDEX_MIN_UNITS and not state.own_index


def publishes_in_bulk(state: BankSearch, adding: int) -> bool:
    """Whether an import of ``adding`` facts into this bank is published in bulk: the bank holds no
    memory yet and the import takes it past the threshold. Its memories are then written without
    any HNSW index, linked through a temporary one (``links_repo.bulk_semantic_links``), and the
    bank's own index is built once they are published: an index built in one go costs a fraction of
    inserting its vectors one by one (100,000 facts: the memories written in 22.5 against 203.1 s,
    their index built after in 29.9 s; BENCHMARKS.md, "A large import into a new bank, in bulk")."""
    return state.size == 0 and not state.own_index and adding > OWN_INDEX_MIN_UNITS


def wants_index_ahead(conn: Connection, bank_id: str, adding: int) -> bool:
    """Whether to build the bank's index before an import of ``adding`` facts publishes: it takes a
    bank that holds memories past the threshold (an import into an empty bank goes in bulk)."""
    state = bank_search(conn, bank_id)  # one read for both questions
    return _past_threshold(state, adding) and not publishes_in_bulk(state, adding)


def adopt(conn: Connection, bank_id: str) -> None:
    """Mark the bank as searched through its own index if one is ready (call under the bank's lock).

    An import that will take a bank past the threshold has its index built before it publishes
    (``build(..., adding=)``, while the facts are staged), when the bank may not exist yet; the
    publish's first write adopts it, so its memories go straight into the bank's own graph, its
    link search walks that graph, and the shared index never holds them."""
    if not bank_search(conn, bank_id).own_index and _index_valid(conn, index_name(bank_id)):
        conn.execute(text("UPDATE banks SET own_index = true WHERE id = :b"), {"b": bank_id})


def build(engine: Engine, bank_id: str, *, adding: int = 0) -> float | None:
    """Build the bank's index if it needs one, then mark the bank; the seconds taken, or None if
    nothing was to do (small bank, already built, deleted, or another process is building it).

    ``adding``: an import of that many facts is about to be published, so build ahead of it if it
    will take a bank that holds memories past the threshold (``wants_index_ahead``: into an empty
    bank it is published in bulk, and the index follows it); the publish adopts the index
    (``adopt``). Idempotent and safe to run twice at once: a session advisory lock keeps a
    second builder out, an index a crashed build left INVALID is dropped and built again, and the
    flag is set only after PostgreSQL reports the index valid."""
    name = index_name(bank_id)
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    with engine.connect() as raw:
        conn = raw.execution_options(isolation_level="AUTOCOMMIT")
        if not conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar():
            return None
        try:
            if not (wants_index_ahead(conn, bank_id, adding) if adding else wants_index(conn, bank_id)):
                return None
            started = time.perf_counter()
            if _index_valid(conn, name) is False:  # a build that died half-way
                conn.execute(text(f"DROP INDEX CONCURRENTLY IF EXISTS {name}"))
            conn.execute(text(f"SET maintenance_work_mem = '{build_memory(bank_search(conn, bank_id).size + adding)}'"))
            conn.execute(
                text(
                    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON memory_units "
                    f"USING hnsw (embedding vector_cosine_ops) WHERE {bank_clause(bank_id, 'memory_units')}"
                )
            )
            if not _index_valid(conn, name):
                raise RuntimeError(f"index {name} for bank {bank_id!r} is not valid after its build")
            marked = conn.execute(text("UPDATE banks SET own_index = true WHERE id = :b"), {"b": bank_id}).rowcount
            if not marked and not adding:  # the bank was deleted while its index was built
                conn.execute(text(f"DROP INDEX CONCURRENTLY IF EXISTS {name}"))
                return None
            seconds = time.perf_counter() - started  # the build's own time, as before the ANALYZE below
            log.info("bank %s: own HNSW index %s built in %.1f s", bank_id, name, seconds)
            try:
                refresh_statistics(conn, bank_id, lock_timeout_s=ANALYZE_LOCK_TIMEOUT_S)
            except OperationalError:  # the index is built and flagged: the write and the build stand
                log.warning(
                    "bank %s: memory_units was not analysed (its lock was held elsewhere for %.0f s); "
                    "autovacuum will, and until then the bank's searches may read all of it",
                    bank_id,
                    ANALYZE_LOCK_TIMEOUT_S,
                    exc_info=True,
                )
            return seconds
        finally:
            conn.execute(text("RESET maintenance_work_mem"))  # the pool hands this session out again
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})


STALE_ESTIMATE_RATIO = 10
"""The planner's row estimate for a bank this many times below its size means statistics from
before the bank was written (``refresh_statistics``)."""


def planned_rows(conn: Connection, bank_id: str) -> float:
    """How many memories the planner believes ``bank_id`` holds (from the table's statistics)."""
    plan = conn.execute(
        text("EXPLAIN (FORMAT JSON) SELECT 1 FROM memory_units WHERE bank_id = :b"), {"b": bank_id}
    ).scalar_one()
    return float(plan[0]["Plan"]["Plan Rows"])


ANALYZE_LOCK_TIMEOUT_S = 10.0
"""How long the ANALYZE after a build waits for the table's lock (a manual VACUUM or another ANALYZE
holds it; autovacuum gives way): past it the build still succeeds and autovacuum analyses later."""


def refresh_statistics(conn: Connection, bank_id: str, *, lock_timeout_s: float | None = None) -> bool:
    """ANALYZE ``memory_units`` when the planner still sees the bank as (nearly) empty; True if it did.

    A bank imported in bulk is written in one transaction, and its index follows at once, well
    before autovacuum analyses the table (a VACUUM of 1M new rows comes first, minutes). Until
    then the planner, estimating one row for the bank, reads all of it through the bank's B-tree
    and sorts every distance instead of walking its HNSW index: 2.4-3.7 s per semantic search of a
    1,000,000-memory bank, measured, against tens of ms. ANALYZE samples a fixed number of rows
    (seconds at any size) and cancels an autovacuum of the table that is in its way."""
    size = bank_search(conn, bank_id).size
    if planned_rows(conn, bank_id) * STALE_ESTIMATE_RATIO >= size:
        return False
    if lock_timeout_s is None:
        conn.execute(text("ANALYZE memory_units"))
    else:  # an autocommit session: the setting is the session's until reset
        conn.execute(text("SELECT set_config('lock_timeout', :t, false)"), {"t": f"{int(lock_timeout_s * 1000)}ms"})
        try:
            conn.execute(text("ANALYZE memory_units"))
        finally:
            conn.execute(text("RESET lock_timeout"))
    log.info("bank %s: memory_units analysed (the planner's estimate was from before the bank)", bank_id)
    return True


def _index_valid(conn: Connection, name: str) -> bool | None:
    """True/False for an existing index (valid or not), None when there is none."""
    row = conn.execute(
        text("SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = :n"),
        {"n": name},
    ).first()
    return None if row is None else bool(row[0])


def drop_orphans(engine: Engine) -> list[str]:
    """Drop the own indexes of banks that no longer exist (a deleted bank's index would otherwise
    stay, empty, and cost every plan its few microseconds), except those built ahead of an import
    still staging or publishing into a new bank; the names dropped."""
    with engine.connect() as raw:
        conn = raw.execution_options(isolation_level="AUTOCOMMIT")
        present = {
            r[0]
            for r in conn.execute(
                text("SELECT relname FROM pg_class WHERE relkind = 'i' AND left(relname, length(:p)) = :p"),
                {"p": _PREFIX},
            )
        }
        live = "SELECT id FROM banks UNION SELECT bank_id FROM import_jobs WHERE status IN ('staging', 'publishing')"
        wanted = {index_name(r[0]) for r in conn.execute(text(live))}
        orphans = sorted(present - wanted)
        for name in orphans:
            conn.execute(text(f"DROP INDEX CONCURRENTLY IF EXISTS {name}"))
    return orphans


def banks_wanting_index(engine: Engine) -> list[str]:
    """Banks past the threshold without a ready index of their own, largest first."""
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT id FROM banks WHERE unit_count > :n AND NOT own_index ORDER BY unit_count DESC, id"),
            {"n": OWN_INDEX_MIN_UNITS},
        )
        return [r[0] for r in rows]
