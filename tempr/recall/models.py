"""Recall request and response, with the reference implementation's field names.

Validation happens here, so HTTP (422/400), the CLI and Celery payloads all
refuse the same bad input with the same message naming the field.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError

from config.errors import ValidationError
from tempr.inputs import CleanStr, to_utc
from tempr.providers.tokens import count_tokens

MAX_QUERY_TOKENS = 500
MAX_TOKENS_LIMIT = 2**31 - 1
"""The largest ``max_tokens`` a request may ask for: a bound, where none was, so that every integer of a
recall stays a 64-bit one on its way through the fleet (``config.codec`` decodes JSON with orjson,
which reads a larger integer as a float: before this bound, ``max_tokens: 10**20`` passed the
gateway and failed in the strategy tasks with a 502)."""
TRUSTED = {"trusted": True}
"""Validation context for messages this fleet wrote itself: the request's costly checks ran once."""
FactType = Literal["world", "experience", "observation"]
TagsMatch = Literal["any", "all", "any_strict", "all_strict", "exact"]
_WORD = re.compile(r"\w")


def _max_query_chars() -> int:
    from config.settings import get_settings

    return get_settings().max_query_chars


class TemporalWindowIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: datetime
    end: datetime

    @model_validator(mode="after")
    def _order(self) -> TemporalWindowIn:
        self.start, self.end = to_utc(self.start), to_utc(self.end)
        if self.end < self.start:
            raise ValueError("temporal_window.end is before temporal_window.start")
        return self


class ChunksInclude(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_tokens: int = Field(default=8192, ge=0, le=MAX_TOKENS_LIMIT)


class EntitiesInclude(BaseModel):
    model_config = ConfigDict(extra="ignore")
    max_tokens: int = Field(default=500, ge=0, le=MAX_TOKENS_LIMIT)


class IncludeOptions(BaseModel):
    """``entities`` is on unless set to false/null; ``chunks`` is off unless given (``{}`` enables it)."""

    model_config = ConfigDict(extra="forbid")
    entities: bool | EntitiesInclude | None = True
    chunks: ChunksInclude | None = None

    @property
    def wants_entities(self) -> bool:
        return self.entities is not None and self.entities is not False

    @property
    def entity_tokens(self) -> int:
        """The token budget of the ``entities`` map (``include.entities.max_tokens``, default 500)."""
        return self.entities.max_tokens if isinstance(self.entities, EntitiesInclude) else EntitiesInclude().max_tokens


class RecallRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: CleanStr
    max_tokens: int = Field(default=4096, ge=0, le=MAX_TOKENS_LIMIT)
    budget: Literal["low", "mid", "high"] = "mid"
    types: list[FactType] | None = None
    tags: list[CleanStr] | None = None
    tags_match: TagsMatch = "any"
    query_timestamp: datetime | None = None
    temporal_window: TemporalWindowIn | None = None
    include: IncludeOptions = Field(default_factory=IncludeOptions)
    trace: bool = False
    # Execution envelope (used by the queue/HTTP layer; the recall maths ignores them).
    callback_url: CleanStr | None = Field(default=None, max_length=2048)
    idempotency_key: CleanStr | None = Field(default=None, max_length=256)
    timeout_s: float | None = Field(default=None, gt=0, le=600)

    @field_validator("query")
    @classmethod
    def _query(cls, value: str, info: ValidationInfo) -> str:
        if info.context and info.context.get("trusted"):
            return value  # checked when the request came in; counting tokens again costs ~ms per hop
        limit = _max_query_chars()
        if len(value) > limit:
            raise ValueError(f"query is {len(value)} characters; the limit is {limit} (TEMPR_MAX_QUERY_CHARS)")
        if not _WORD.search(value or ""):
            raise ValueError("query must contain at least one word character")
        # every cl100k token is at least one byte: a short query is within the limit uncounted
        tokens = count_tokens(value) if len(value.encode()) > MAX_QUERY_TOKENS else 0
        if tokens > MAX_QUERY_TOKENS:
            raise ValueError(f"query is {tokens} tokens; the limit is {MAX_QUERY_TOKENS}")
        return value

    @field_validator("query_timestamp")
    @classmethod
    def _ts(cls, value: datetime | None) -> datetime | None:
        return to_utc(value) if value else None

    def cache_fields(self) -> dict[str, Any]:
        """The fields that determine the answer, normalised (order-free lists)."""
        data = self.model_dump(mode="json", exclude={"callback_url", "idempotency_key", "timeout_s"})
        for key in ("types", "tags"):
            if data.get(key):
                data[key] = sorted(set(data[key]))
        return data


def parse_request(request: Any) -> RecallRequest:
    """Validate a raw payload; errors name the field, as over HTTP, in the CLI and in the start task."""
    if isinstance(request, RecallRequest):
        return request
    try:
        return RecallRequest.model_validate(request)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise ValidationError(err["msg"].removeprefix("Value error, "), field=field) from None


_JSON_LIKE_STDLIB = ConfigDict(ser_json_inf_nan="constants")
"""Answers are serialised by pydantic (``model_dump_json``, once per job); NaN and infinity come
out as ``json.dumps`` writes them, as they did when answers went through the standard library."""


class RecallScores(BaseModel):
    model_config = _JSON_LIKE_STDLIB

    final: float
    reranker: float | None = None
    semantic: float | None = None
    keyword: float | None = None
    graph: float | None = None
    temporal: float | None = None


class RecallResult(BaseModel):
    model_config = _JSON_LIKE_STDLIB

    id: str
    fact_id: str
    text: str
    type: str
    entities: list[str] | None = None
    context: str | None = None
    occurred_start: str | None = None
    occurred_end: str | None = None
    mentioned_at: str | None = None
    document_id: str | None = None
    metadata: dict[str, str] | None = None
    chunk_id: str | None = None
    tags: list[str] = Field(default_factory=list)
    scores: RecallScores


class ChunkData(BaseModel):
    id: str
    text: str
    document_id: str | None = None
    truncated: bool = False


class EntityState(BaseModel):
    entity_id: str
    canonical_name: str
    observations: list[str] = Field(default_factory=list)


class RecallResponse(BaseModel):
    model_config = _JSON_LIKE_STDLIB

    results: list[RecallResult]
    entities: dict[str, EntityState] | None = None
    chunks: dict[str, ChunkData] | None = None
    trace: dict[str, Any] | None = None
    # tempr additions
    bank_id: str
    budget: int
    reranker: str
    degraded: list[str] = Field(default_factory=list)
    cache: Literal["hit", "miss"] | None = None
    timings_ms: dict[str, float] = Field(default_factory=dict)
