"""tempr.store.recall_filters.valid_uuids: the canonical-form shortcut changes no answer."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from tempr.store.recall_filters import valid_uuids


def _by_parsing(ids: list[str]) -> list[str]:
    """The rule before the shortcut: whatever ``uuid.UUID`` accepts, in its canonical form."""
    out: dict[str, None] = {}
    for raw in ids:
        try:
            out[str(uuid.UUID(str(raw)))] = None
        except ValueError:
            continue
    return list(out)


ids = st.lists(
    st.uuids().map(str)
    | st.uuids().map(lambda u: str(u).upper())
    | st.uuids().map(lambda u: u.hex)
    | st.uuids().map(lambda u: "{" + str(u) + "}")
    | st.uuids().map(lambda u: "urn:uuid:" + str(u))
    | st.uuids().map(lambda u: str(u) + "\n")
    | st.text(alphabet="0123456789abcdef-", min_size=30, max_size=40)
    | st.text(max_size=12),
    max_size=20,
)


@given(ids)
def test_the_shortcut_gives_what_parsing_gives(values: list[str]) -> None:
    assert valid_uuids(values) == _by_parsing(values)


def test_canonical_ids_keep_their_order_and_lose_duplicates() -> None:
    a, b = str(uuid.UUID(int=1)), str(uuid.UUID(int=2))
    assert valid_uuids([b, a, b.upper(), "not-an-id", a]) == [b, a]
