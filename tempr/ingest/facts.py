"""Validation of pre-extracted facts (a JSONL line, or an item of the HTTP array).

Everything that can be checked without the database is checked here, and
every problem is reported with its 1-based line and the field at fault, so
a batch is rejected before anything is written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationInfo, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError

from config.errors import IngestValidationError, ValidationError
from tempr.inputs import StrictCleanStr, to_utc
from tempr.providers.entities.base import MAX_NAME_CHARS

MAX_TEXT_BYTES = 64 * 1024
MAX_TAG_CHARS = 512
"""The longest tag: a memory's tags are indexed (GIN, at most 2,712 bytes an entry), and 512
characters of UTF-8 fit. A longer tag used to fail the publish, after the file was staged."""
PG_INT_MAX = 2**31 - 1
"""``proof_count``'s ceiling: its column is a PostgreSQL ``integer``. A larger count used to pass
validation, stage, and fail the publish with the database's error (the SQL statement and the row)."""


class ChunkIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: StrictCleanStr = Field(min_length=1, max_length=512)
    text: StrictCleanStr = Field(min_length=1)


class FactIn(BaseModel):
    """One fact, exactly the documented JSONL shape. Unknown fields are refused (typo guard)."""

    model_config = ConfigDict(extra="forbid")

    id: StrictCleanStr | None = Field(default=None, min_length=1, max_length=512)
    text: StrictCleanStr
    fact_type: Literal["world", "experience", "observation"] = "world"
    occurred_start: datetime | None = None
    occurred_end: datetime | None = None
    mentioned_at: datetime | None = None
    context: StrictCleanStr | None = None
    entities: list[StrictCleanStr] | None = None
    tags: list[StrictCleanStr] | None = None
    metadata: dict[StrictCleanStr, StrictCleanStr] | None = None
    document_id: StrictCleanStr | None = Field(default=None, min_length=1, max_length=512)
    chunk: ChunkIn | None = None
    proof_count: StrictInt | None = Field(default=None, ge=1, le=PG_INT_MAX)
    caused_by: list[StrictCleanStr] | None = None

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        if len(value.encode("utf-8")) > MAX_TEXT_BYTES:
            raise ValueError(f"is longer than {MAX_TEXT_BYTES // 1024} KiB")
        return value

    @field_validator("context")
    @classmethod
    def _context(cls, value: str | None) -> str | None:
        # indexed with the text (one tsvector, at most 1 MB): a 2 MB context failed the publish
        if value is not None and len(value.encode("utf-8")) > MAX_TEXT_BYTES:
            raise ValueError(f"is longer than {MAX_TEXT_BYTES // 1024} KiB")
        return value

    @field_validator("entities", "tags")
    @classmethod
    def _short_names(cls, value: list[str] | None, info: ValidationInfo) -> list[str] | None:
        limit = MAX_NAME_CHARS if info.field_name == "entities" else MAX_TAG_CHARS
        for item in value or ():
            if len(item) > limit:
                raise ValueError(f"{item[:20]!r}... is {len(item)} characters; the limit is {limit}")
        return value

    @field_validator("occurred_start", "occurred_end", "mentioned_at", mode="before")
    @classmethod
    def _iso_date(cls, value: Any) -> Any:
        return parse_iso(value)

    @model_validator(mode="after")
    def _order(self) -> FactIn:
        if self.occurred_start and self.occurred_end and self.occurred_end < self.occurred_start:
            raise ValueError("occurred_end is before occurred_start")
        return self

    @property
    def key(self) -> str:
        """The fact id: given, or a hash of the content so re-ingesting a file adds nothing."""
        if self.id:
            return self.id
        payload = self.model_dump(mode="json", exclude={"id"})
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
        return f"sha256:{digest[:32]}"


def parse_iso(value: Any) -> datetime | None:
    """ISO-8601 date or date-time; naive values are taken as UTC."""
    if value is None or isinstance(value, datetime):
        return to_utc(value) if isinstance(value, datetime) else None
    if not isinstance(value, str):
        raise ValueError("must be an ISO-8601 string")
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(text), datetime.min.time())
        except ValueError:
            raise ValueError(f"is not an ISO-8601 date: {value!r}") from None
    return to_utc(parsed)


def validate_fact(obj: Any, line: int) -> FactIn:
    if not isinstance(obj, dict):
        raise IngestValidationError(f"expected a JSON object, got {type(obj).__name__}", line=line)
    try:
        return FactIn.model_validate(obj)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        elif err["type"] == "missing":
            message = "is required"
        raise IngestValidationError(message, line=line, field=field) from None


BOM = "\ufeff"
"""A UTF-8 byte order mark: Windows editors and PowerShell write one before the first line. It is
not part of the JSON, so a file that starts with one reads as if it did not."""


def unreadable(path: object, exc: OSError) -> ValidationError:
    """The error for a facts file that cannot be opened, naming the field ``file`` (never a traceback)."""
    if isinstance(exc, FileNotFoundError):
        return ValidationError(f"no such file: {path}", field="file")
    if isinstance(exc, IsADirectoryError):
        return ValidationError(f"{path} is a directory, not a file of facts", field="file")
    if isinstance(exc, PermissionError):
        return ValidationError(f"cannot read {path}: permission denied", field="file")
    return ValidationError(f"cannot read {path}: {exc.strerror or exc}", field="file")


def parse_jsonl(lines: Iterable[str]) -> Iterator[tuple[int, FactIn]]:
    """Yield (line number, fact) for each non-blank line; raise on the first bad one."""
    for number, raw in enumerate(lines, start=1):
        if number == 1:
            raw = raw.removeprefix(BOM)
        if not raw.strip():
            continue
        yield number, validate_fact(load_line(raw, number), number)


def load_line(raw: str, number: int) -> Any:
    """One line's JSON value; a line that is not JSON is an error naming the line."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise IngestValidationError(f"malformed JSON: {exc.msg} (column {exc.colno})", line=number) from None
    except RecursionError:  # the decoder recurses once per level: 50,000 nested objects was a traceback
        raise IngestValidationError("malformed JSON: nested too deeply", line=number) from None


def parse_array(items: Any, *, limit: int | None = None) -> list[tuple[int, FactIn]]:
    """Validate a JSON array of facts; more than ``limit`` (TEMPR_MAX_FACTS_PER_REQUEST) is refused."""
    if not isinstance(items, list):
        raise IngestValidationError("expected a JSON array of facts", line=0)
    if limit is not None and len(items) > limit:
        raise IngestValidationError(
            f"{len(items)} facts in one request; the limit is {limit} (TEMPR_MAX_FACTS_PER_REQUEST)", line=0
        )
    return [(i, validate_fact(obj, i)) for i, obj in enumerate(items, start=1)]


def check_batch(facts: list[tuple[int, FactIn]]) -> None:
    """Rules across facts: one id means one fact within a batch."""
    first_seen: dict[str, tuple[int, FactIn]] = {}
    for line, fact in facts:
        prior = first_seen.get(fact.key)
        if prior and prior[1] != fact:
            raise IngestValidationError(
                f"duplicate id {fact.key!r} (first on line {prior[0]}) with different content", line=line, field="id"
            )
        first_seen.setdefault(fact.key, (line, fact))
