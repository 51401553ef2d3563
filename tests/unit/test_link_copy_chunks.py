"""The binary COPY stream of link rows (``binary_rows.link_copy_chunks``), decoded field by field."""

from __future__ import annotations

import struct
import uuid

from hypothesis import given
from hypothesis import strategies as st

from tempr.store.binary_rows import link_copy_chunks


def _stream(links: list[tuple[str, str, float]], link_type: str | None = None) -> bytes:
    return b"".join(link_copy_chunks(links, link_type))


_ids = st.uuids().map(str)
_links = st.lists(st.tuples(_ids, _ids, st.floats(-1e6, 1e6, allow_nan=False)), max_size=40)


def _decode(data: bytes) -> list[tuple[object, ...]]:
    """PostgreSQL's binary COPY format: signature, flags, extension length, rows, trailer -1."""
    assert data.startswith(b"PGCOPY\n\xff\r\n\x00") and data.endswith(b"\xff\xff")
    flags, ext = struct.unpack_from(">ii", data, 11)
    assert (flags, ext) == (0, 0)
    at, rows = 19, []
    while True:
        (n,) = struct.unpack_from(">h", data, at)
        at += 2
        if n == -1:
            break
        fields = []
        for _ in range(n):
            (size,) = struct.unpack_from(">i", data, at)
            fields.append(data[at + 4 : at + 4 + size])
            at += 4 + size
        rows.append(tuple(fields))
    assert at == len(data)
    return rows


@given(_links)
def test_rows_without_a_link_type(links: list[tuple[str, str, float]]) -> None:
    rows = _decode(_stream(links))
    assert [(str(uuid.UUID(bytes=a)), str(uuid.UUID(bytes=b)), struct.unpack(">d", w)[0]) for a, b, w in rows] == links


@given(_links, st.sampled_from(["semantic", "temporal", "causal", "entité"]))
def test_rows_with_a_link_type(links: list[tuple[str, str, float]], kind: str) -> None:
    rows = _decode(_stream(links, kind))
    assert [
        (str(uuid.UUID(bytes=a)), str(uuid.UUID(bytes=b)), t.decode(), struct.unpack(">d", w)[0]) for a, b, t, w in rows
    ] == [(a, b, kind, w) for a, b, w in links]


def test_numpy_weights_and_uuid_objects_are_accepted() -> None:
    import numpy as np

    a, b = uuid.uuid4(), uuid.uuid4()
    rows = _decode(_stream([(a, str(b), np.float32(0.5))]))  # type: ignore[list-item]
    assert rows == [(a.bytes, b.bytes, struct.pack(">d", 0.5))]


def test_a_large_batch_goes_in_pieces_of_bounded_rows() -> None:
    links = [(str(uuid.uuid4()), str(uuid.uuid4()), float(i)) for i in range(10)]
    pieces = list(link_copy_chunks(links, "semantic", rows_per_piece=3))
    assert len(pieces) == 1 + 4 + 1  # signature, 3 + 3 + 3 + 1 rows, trailer
    assert _decode(b"".join(pieces)) == _decode(_stream(links, "semantic"))
    assert list(link_copy_chunks([], "semantic")) == [pieces[0], pieces[-1]]  # no rows: an empty COPY
