"""Caller text and dates: NUL and lone surrogates refused by field, dates kept inside the range
where UTC conversion and window arithmetic cannot overflow."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.errors import IngestValidationError, ValidationError
from tempr.ingest.facts import validate_fact
from tempr.inputs import MAX_DATE, MIN_DATE, bad_text, check_text, to_utc
from tempr.recall.models import parse_request


@given(st.text())
def test_text_is_refused_exactly_when_it_holds_nul_or_cannot_be_utf8(value: str) -> None:
    try:
        value.encode("utf-8")
        encodable = True
    except UnicodeEncodeError:
        encodable = False
    assert (bad_text(value) is None) == (encodable and "\x00" not in value)


def test_messages_name_the_problem() -> None:
    with pytest.raises(ValueError, match="NUL"):
        check_text("a\x00")
    with pytest.raises(ValueError, match="surrogate"):
        check_text("a\ud800")


OFFSETS = st.builds(
    timezone, st.timedeltas(min_value=timedelta(hours=-23, minutes=-59), max_value=timedelta(hours=23, minutes=59))
)


@given(st.datetimes(timezones=st.one_of(st.none(), OFFSETS)))
def test_to_utc_never_overflows_and_stays_in_range(value: datetime) -> None:
    try:
        out = to_utc(value)
    except ValueError:
        return
    assert out.tzinfo == UTC and MIN_DATE <= out <= MAX_DATE


@pytest.mark.parametrize(
    "value",
    [
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5))),
        datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))),
        datetime(1, 1, 1),
        datetime(9999, 12, 31),
    ],
)
def test_the_reported_dates_are_refused(value: datetime) -> None:
    with pytest.raises(ValueError, match="supported date range"):
        to_utc(value)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "a\x00b"}, "query"),
        ({"query": "a\udc00"}, "query"),
        ({"query": "ok", "tags": ["x", "\x00"]}, "tags.1"),
        ({"query": "ok", "idempotency_key": "k\x00"}, "idempotency_key"),
        ({"query": "ok", "query_timestamp": "0001-01-01T00:00:00+05:00"}, "query_timestamp"),
        ({"query": "x" * 8001}, "query"),
    ],
)
def test_recall_requests(body: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse_request(body)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("fact", "field"),
    [
        ({"text": "a\x00"}, "text"),
        ({"text": "ok", "context": "\ud800"}, "context"),
        ({"text": "ok", "metadata": {"k\x00": "v"}}, "metadata.k\x00.[key]"),
        ({"text": "ok", "chunk": {"id": "c", "text": "\x00"}}, "chunk.text"),
        ({"text": "ok", "occurred_end": "9999-12-31T23:59:59-00:30"}, "occurred_end"),
    ],
)
def test_facts(fact: dict[str, object], field: str) -> None:
    with pytest.raises(IngestValidationError) as info:
        validate_fact(fact, 4)
    assert info.value.field == field and info.value.line == 4
