"""A bulk import's semantic links, computed from its staged vectors before the publish opens.

Why: the link pass of a bulk publish (``links_repo.bulk_semantic_links``) walks an HNSW graph once
per memory inside the publish's one transaction, so one PostgreSQL backend does it while the other
cores idle: 2,620 of the 3,383 s that published a 1,000,000-line file (BENCHMARKS.md). The staged
vectors are committed rows, so the same walk can run before that transaction, from several
sessions at once, each taking a range of ids; the publish then copies the finished links.

Three UNLOGGED tables per import, named by a digest of its id (``names``): the vectors with their
HNSW index, the links found so far, and the same links renamed once every range is walked, so an
import has finished links exactly when that last table exists (``ready``). They are dropped by the
publish's transaction, by ``imports.fail``, and when an abandoned import is cleaned up (``drop``).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, text

from tempr.store import links_repo
from tempr.store.binary_rows import link_copy_chunks


@dataclass(frozen=True)
class Names:
    vectors: str
    partial: str
    links: str

    @property
    def lock_key(self) -> str:
        """An advisory-lock key: one session prepares and walks an import's links at a time."""
        return "prelink:" + self.links


def names(import_id: str) -> Names:
    digest = hashlib.sha256(import_id.encode()).hexdigest()[:24]
    return Names(f"prelink_vectors_{digest}", f"prelink_partial_{digest}", f"prelink_links_{digest}")


def ready(conn: Connection, import_id: str) -> bool:
    """Whether the import's links are all computed (the finished table exists)."""
    return conn.execute(text("SELECT to_regclass(:t) IS NOT NULL"), {"t": names(import_id).links}).scalar() is True


def drop(conn: Connection, import_id: str) -> None:
    n = names(import_id)
    conn.execute(text(f"DROP TABLE IF EXISTS {n.vectors}, {n.partial}, {n.links}"))


def prepare(conn: Connection, import_id: str) -> int:
    """The import's staged vectors with an HNSW index, and an empty table for their links; returns
    the vectors (in the caller's transaction: commit it before walking from other sessions)."""
    n = names(import_id)
    drop(conn, import_id)  # a publish that died half-way leaves its tables: start again
    size = links_repo.index_vectors(
        conn, n.vectors, "SELECT id, embedding FROM staged_units WHERE import_id = :i", {"i": import_id}
    )
    conn.execute(text(f"CREATE UNLOGGED TABLE {n.partial} (from_id uuid, to_id uuid, weight float8)"))
    return size


FIRST, LAST = "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"
"""Bounds no memory id reaches (ids are version-5 UUIDs: ``ingest_repo.unit_uuid``)."""


def ranges(conn: Connection, import_id: str, parts: int, size: int) -> list[tuple[str, str]]:
    """``parts`` ranges of ids (after, up to and including] of about equal size, read off the
    vectors' primary key; together they hold every id once. ``size``: the vectors' count
    (``prepare``'s answer)."""
    table = names(import_id).vectors
    cuts = [FIRST]
    for k in range(1, parts):
        cut = conn.execute(
            text(f"SELECT id::text FROM {table} ORDER BY id OFFSET :o LIMIT 1"), {"o": size * k // parts}
        ).scalar()
        if cut is not None and cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(LAST)
    return list(itertools.pairwise(cuts))


def page(conn: Connection, import_id: str, after: str, upto: str, size: int) -> list[str]:
    """The next ``size`` ids after ``after``, up to and including ``upto``, in id order."""
    sql = text(
        f"SELECT id::text FROM {names(import_id).vectors} "
        "WHERE id > CAST(:after AS uuid) AND id <= CAST(:upto AS uuid) ORDER BY id LIMIT :n"
    )
    with links_repo.sorting_off(conn):  # the primary key's order: never a sort of the whole table
        return [r[0] for r in conn.execute(sql, {"after": after, "upto": upto, "n": size})]


def link_page(conn: Connection, import_id: str, ids: Sequence[str], *, threshold: float, top_k: int) -> int:
    """Find ``ids``' links (``links_repo.nearest_in``) and add them to the import's partial table."""
    n = names(import_id)
    found = links_repo.nearest_in(conn, n.vectors, ids, threshold=threshold, top_k=top_k)
    if found:
        cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        with cur.copy(f"COPY {n.partial} (from_id, to_id, weight) FROM STDIN (FORMAT BINARY)") as copy:
            for piece in link_copy_chunks(found):
                copy.write(piece)
    return len(found)


def finish(conn: Connection, import_id: str) -> None:
    """Every range is walked: the links are ready, the vectors no longer needed."""
    n = names(import_id)
    conn.execute(text(f"DROP TABLE {n.vectors}"))
    conn.execute(text(f"ALTER TABLE {n.partial} RENAME TO {n.links}"))


def copy_links(conn: Connection, import_id: str) -> int:
    """Write the import's ready links into ``memory_links`` (in the publish's transaction), in
    from-id order so the link indexes are filled left to right; returns how many."""
    table = names(import_id).links
    result = conn.execute(
        text(f"""
        INSERT INTO memory_links (from_unit_id, to_unit_id, link_type, weight)
        SELECT from_id, to_id, 'semantic', weight FROM {table} ORDER BY from_id, to_id""")
    )
    return result.rowcount or 0
