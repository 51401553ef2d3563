"""SELECTs read in PostgreSQL's binary format, for the statements whose rows carry many bytes.

Through SQLAlchemy a row arrives in PostgreSQL's text format: a vector or a memory's token vectors
as hex text twice its size, dates and arrays as text to parse. The rank stage reads 300 such rows
per recall when its row cache is cold; read through the connection's psycopg cursor in binary
format they took 14.5 against 20.9 ms for LoCoMo rows with token vectors, 11.6 against 14.2 ms
without (BENCHMARKS.md, "The rank stage's rows read by index"), with the same values.
"""

from __future__ import annotations

import itertools
import re
import struct
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

if TYPE_CHECKING:
    import numpy as np

_NAMED = re.compile(r"(?<!:):(\w+)")


def binary_rows(conn: Connection, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """``sql``'s rows (tuples), in the transaction ``conn`` holds. ``sql`` names its parameters as
    SQLAlchemy's ``text`` does (``:ids``; a ``::`` cast is left alone); a vector parameter is a
    ``float32_vector`` (pgvector's dumper, registered on every connection)."""
    cur = conn.connection.driver_connection.cursor(binary=True)  # type: ignore[union-attr]
    try:
        cur.execute(_NAMED.sub(r"%(\1)s", sql.replace("%", "%%")), params)
        rows: list[tuple[Any, ...]] = cur.fetchall()
        return rows
    finally:
        cur.close()


def float32_vector(values: Sequence[float]) -> np.ndarray:
    """A query vector as a parameter of ``binary_rows``: pgvector sends a float32 array as a vector."""
    import numpy as np  # here: the CLI's fleet path imports the store and no numpy

    return np.asarray(values, dtype=np.float32)


_COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # then flags and header-extension length, both 0
_COPY_TRAILER = b"\xff\xff"


def link_copy_chunks(
    links: Iterable[tuple[str, str, float]], link_type: str | None = None, *, rows_per_piece: int = 8192
) -> Iterator[bytes]:
    """The ``COPY ... FROM STDIN (FORMAT BINARY)`` stream of (from uuid, to uuid, [link_type,] weight
    float8) rows, in pieces of at most ``rows_per_piece`` rows, for ``Copy.write``.

    psycopg's ``write_row`` builds a ``uuid.UUID`` for every id of every row and dumps each field
    through its adapters: 37 ms of Python for one LoCoMo import's 16,500 links, against 8 ms here,
    where each distinct id is converted once and each row is one ``struct`` pack. The pieces keep a
    large batch's stream from being held whole in memory.
    """
    raw: dict[str, bytes] = {}

    def bytes_of(u: str) -> bytes:
        b = raw.get(u)
        if b is None:
            b = raw[u] = uuid.UUID(str(u)).bytes
        return b

    if link_type is None:
        row = struct.Struct(">hi16si16sid")
        packed = (row.pack(3, 16, bytes_of(a), 16, bytes_of(b), 8, w) for a, b, w in links)
    else:
        kind = link_type.encode()
        row = struct.Struct(f">hi16si16si{len(kind)}sid")
        packed = (row.pack(4, 16, bytes_of(a), 16, bytes_of(b), len(kind), kind, 8, w) for a, b, w in links)
    yield _COPY_SIGNATURE
    while piece := b"".join(itertools.islice(packed, rows_per_piece)):
        yield piece
    yield _COPY_TRAILER
