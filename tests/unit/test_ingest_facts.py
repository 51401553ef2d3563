"""Fact validation: every bad-input case names its line and field."""

from __future__ import annotations

import json

import pytest

from config.errors import IngestValidationError
from tempr.ingest.facts import FactIn, check_batch, parse_array, parse_jsonl, unreadable


def _lines(*objs: object) -> list[str]:
    return [o if isinstance(o, str) else json.dumps(o) for o in objs]


def _error(lines: list[str]) -> IngestValidationError:
    with pytest.raises(IngestValidationError) as info:
        list(parse_jsonl(lines))
    return info.value


GOOD = {"text": "Alice works at Google."}


@pytest.mark.parametrize(
    ("bad", "field", "needle"),
    [
        ('{"text": "x",', None, "malformed JSON"),
        ({"fact_type": "world"}, "text", "required"),
        ({"text": "   "}, "text", "empty"),
        ({"text": 42}, "text", "string"),
        ({"text": "x", "fact_type": "opinion"}, "fact_type", "world"),
        ({"text": "x", "occurred_start": "last tuesday"}, "occurred_start", "ISO-8601"),
        ({"text": "x", "occurred_start": "2024-05-02", "occurred_end": "2024-05-01"}, None, "before"),
        ({"text": "x" * (64 * 1024 + 1)}, "text", "64 KiB"),
        ({"text": "x", "context": "c " * (32 * 1024 + 1)}, "context", "64 KiB"),
        ({"text": "x", "tags": "career"}, "tags", "list"),
        ({"text": "x", "metadata": {"k": 1}}, "metadata.k", "string"),
        ({"text": "x", "proof_count": 0}, "proof_count", "greater than or equal to 1"),
        ({"text": "x", "proof_count": 2**31}, "proof_count", "less than or equal to 2147483647"),
        ({"text": "x", "entities": ["Ann", "N" * 513]}, "entities", "513 characters; the limit is 512"),
        ({"text": "x", "tags": ["t" * 513]}, "tags", "513 characters; the limit is 512"),
        ({"text": "x", "colour": "red"}, "colour", "unknown field"),
        ([1, 2], None, "JSON object"),
    ],
)
def test_bad_line_names_line_and_field(bad: object, field: str | None, needle: str) -> None:
    err = _error(_lines(GOOD, "", bad))
    assert err.line == 3
    assert err.field == field
    assert needle in str(err)


def test_good_lines_parse_with_defaults_and_utc() -> None:
    ((line, fact),) = parse_jsonl(_lines({"text": "x", "occurred_start": "2024-05-01T10:00:00+02:00"}))
    assert line == 1 and fact.fact_type == "world"
    assert fact.occurred_start is not None and fact.occurred_start.utcoffset().total_seconds() == 0
    assert fact.occurred_start.hour == 8


def test_key_is_given_id_or_stable_content_hash() -> None:
    assert FactIn(id="f1", text="x").key == "f1"
    assert FactIn(text="x").key == FactIn(text="x").key
    assert FactIn(text="x").key != FactIn(text="y").key


def test_duplicate_id_with_different_content_is_refused() -> None:
    facts = parse_array([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}])
    with pytest.raises(IngestValidationError) as info:
        check_batch(facts)
    assert info.value.line == 2 and info.value.field == "id"


def test_array_payload_must_be_a_list() -> None:
    with pytest.raises(IngestValidationError):
        parse_array({"text": "x"})


def test_a_byte_order_mark_is_dropped_from_the_first_line_only() -> None:
    ((line, fact),) = parse_jsonl(["\ufeff" + json.dumps({"text": "x"})])
    assert line == 1 and fact.text == "x"
    with pytest.raises(IngestValidationError) as info:
        list(parse_jsonl([json.dumps({"text": "x"}), "\ufeff" + json.dumps({"text": "y"})]))
    assert info.value.line == 2


@pytest.mark.parametrize(
    ("error", "needle"),
    [
        (FileNotFoundError(2, "No such file or directory"), "no such file: f.jsonl"),
        (IsADirectoryError(21, "Is a directory"), "f.jsonl is a directory"),
        (PermissionError(13, "Permission denied"), "cannot read f.jsonl: permission denied"),
        (OSError(5, "Input/output error"), "cannot read f.jsonl: Input/output error"),
    ],
)
def test_an_unreadable_file_is_an_error_naming_the_file_field(error: OSError, needle: str) -> None:
    err = unreadable("f.jsonl", error)
    assert err.field == "file" and needle in str(err)


def test_a_line_nested_too_deeply_is_an_error_naming_the_line() -> None:
    deep = '{"text": "x", "metadata": ' + '{"a": ' * 50_000 + "1" + "}" * 50_000 + "}"
    err = _error([json.dumps({"text": "ok"}), deep])
    assert err.line == 2 and "nested too deeply" in str(err)
