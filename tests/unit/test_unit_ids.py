"""A memory's id: deterministic per (bank, fact id), and led by its bank (``ingest_repo.unit_uuid``)."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from tempr.store.ingest_repo import unit_uuid

names = st.text(min_size=1, max_size=40)


@given(names, names, names)
def test_ids_are_deterministic_version_5_and_share_their_banks_prefix(bank: str, a: str, b: str) -> None:
    first, again, other = uuid.UUID(unit_uuid(bank, a)), uuid.UUID(unit_uuid(bank, a)), uuid.UUID(unit_uuid(bank, b))
    assert first == again
    assert first.version == 5 and first.variant == uuid.RFC_4122
    assert first.bytes[:4] == other.bytes[:4]  # one bank's memories sort together in every id index
    assert (first == other) == (a == b)


def test_the_rest_is_the_version_5_uuid_of_bank_and_fact() -> None:
    ns = uuid.UUID("6f1e3b1c-5d0a-4c53-9a53-7e6d1f0b2a10")
    plain = uuid.uuid5(ns, "demo\x00a27")
    led = uuid.UUID(unit_uuid("demo", "a27"))
    assert led.bytes[4:] == plain.bytes[4:] and led.bytes[:4] != plain.bytes[:4]


def test_banks_get_different_prefixes() -> None:
    prefixes = {uuid.UUID(unit_uuid(f"bank-{i}", "x")).bytes[:4] for i in range(1000)}
    assert len(prefixes) == 1000
