"""Stage 1 of recall: analyse the request once into a small, typed ``QueryPlan``.

The plan carries everything the strategy tasks need (the query embedding,
the recall budget, graph depth, time windows, filters) so no worker has to
embed or parse the query again.
"""

from __future__ import annotations

import base64
import struct
import time
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from config.errors import ServiceError, ValidationError
from config.settings import Settings
from tempr.bank_ids import check_bank_id
from tempr.core import multi_hop_depth, parse_strategy_boosts, recall_budget
from tempr.core.query_focus import focus_text, has_topic
from tempr.core.timeutil import ms_since
from tempr.core.types import TimeWindow
from tempr.inputs import RANGE_TEXT
from tempr.recall.context import RecallContext
from tempr.recall.models import TRUSTED, RecallRequest
from tempr.store import recall_repo


def _pack_vector(values: list[float]) -> str:
    """Little-endian float64, base64: lossless, a third of the JSON float list's size, and about
    20x cheaper to encode (the plan crosses every hop of a recall, the chord body four times)."""
    return base64.b64encode(struct.pack(f"<{len(values)}d", *values)).decode("ascii")


def _unpack_vector(value: Any) -> Any:
    if isinstance(value, str):
        raw = base64.b64decode(value, validate=True)
        if len(raw) % 8:
            raise ValueError("a packed vector is a whole number of float64 values")
        return list(struct.unpack(f"<{len(raw) // 8}d", raw))
    return value


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _unb64(value: Any) -> Any:
    return base64.b64decode(value, validate=True) if isinstance(value, str) else value


PackedBytes = Annotated[bytes, BeforeValidator(_unb64), PlainSerializer(_b64, return_type=str, when_used="json")]
"""Bytes in Python, base64 in JSON (pydantic's own JSON form of bytes is UTF-8, which these are not)."""

PackedVector = Annotated[
    list[float], BeforeValidator(_unpack_vector), PlainSerializer(_pack_vector, return_type=str, when_used="json")
]
"""A float list in Python; packed (``_pack_vector``) in JSON; either form is read back."""


class QueryPlan(BaseModel):
    """The analysed request every later step reads: typed, validated once where it is made.

    It crosses Celery hops as JSON; a worker reads it back with ``QueryPlan.receive`` (trusted:
    the request's own validators, e.g. its token count, ran once, in ``analyse``)."""

    model_config = ConfigDict(extra="forbid")

    bank_id: str
    bank_version: int | None = None
    """The bank's version when the query was analysed (``banks.version``): keys the reranking
    process's row cache (``tempr.store.unit_cache``). None: that cache is not used."""
    request: RecallRequest
    embedding: PackedVector
    focus: PackedVector | None = None
    """The query with its names masked (``tempr.core.query_focus``), embedded for the learned
    ranker's focus features; None when the query names nobody (it is its own focus)."""
    tokens: PackedBytes | None = None
    """The query's content-token vectors (``tempr.core.token_match.pack``) for the learned ranker's
    token features; None with ``TEMPR_TOKEN_VECTORS=false``, or for a query with no topic word
    besides its names (``tempr.core.query_focus.has_topic``)."""
    focus_tokens: PackedBytes | None = None
    """The same for the focus query; None when the query is its own focus."""
    budget: int
    depth: int
    now: datetime
    windows: list[TimeWindow] = Field(default_factory=list)
    boosts: dict[str, str] = Field(default_factory=dict)
    temporal_trace: dict[str, Any] = Field(default_factory=dict)
    timings_ms: dict[str, float] = Field(default_factory=dict)

    @classmethod
    def receive(cls, data: Any) -> QueryPlan:
        """A plan from a message this fleet wrote: typed, without re-running the request's checks."""
        return cls.model_validate(data, context=TRUSTED)

    def filters(self) -> recall_repo.Filters:
        req = self.request
        return recall_repo.Filters(
            bank_id=self.bank_id,
            types=tuple(sorted(set(req.types or ()))),
            tags=tuple(sorted(set(req.tags or ()))),
            tags_match=req.tags_match,
        )


def budget_for(request: RecallRequest, settings: Settings) -> int:
    s = settings
    return recall_budget(
        request.budget,
        request.max_tokens,
        function=s.recall_budget_function,
        fixed=(s.recall_budget_fixed_low, s.recall_budget_fixed_mid, s.recall_budget_fixed_high),
        adaptive=(s.recall_budget_adaptive_low, s.recall_budget_adaptive_mid, s.recall_budget_adaptive_high),
        minimum=s.recall_budget_min,
        maximum=s.recall_budget_max,
    )


def analyse(bank_id: str, request: RecallRequest, ctx: RecallContext, *, version: int | None = None) -> QueryPlan:
    started = time.perf_counter()
    check_bank_id(bank_id)
    now = request.query_timestamp or datetime.now(UTC)
    boosts = parse_strategy_boosts(ctx.settings.recall_strategy_boosts)  # checked when the settings loaded
    temporal = _temporal_analysis(request, now, ctx)
    focus = focus_text(request.query)
    anchors = [a.event for a in temporal.anchors]
    texts = [request.query, *anchors] + ([focus] if focus is not None else [])
    t_embed = time.perf_counter()
    if ctx.embedder is None:
        raise ServiceError("query analysis needs an embedder; this recall context has none")
    # Only the learned ranker reads the token vectors (the seed profile has none).
    want_tokens = ctx.settings.token_vectors and ctx.settings.recall_profile != "seed" and has_topic(request.query)
    vectors, tokens = ctx.embedder.embed_tokens(texts, tokens=want_tokens)
    embed_ms = (time.perf_counter() - t_embed) * 1000
    windows, trace = _resolve_windows(bank_id, request, temporal, vectors[1 : 1 + len(anchors)], now, ctx)
    plan = QueryPlan(
        bank_id=bank_id,
        bank_version=version,
        request=request,
        embedding=[float(x) for x in vectors[0]],
        focus=[float(x) for x in vectors[-1]] if focus is not None else None,
        tokens=tokens[0],
        focus_tokens=tokens[-1] if focus is not None else None,
        budget=budget_for(request, ctx.settings),
        depth=multi_hop_depth(request.budget),
        now=now,
        windows=windows,
        boosts=boosts,
        temporal_trace=trace,
    )
    plan.timings_ms = {"embed": round(embed_ms, 2), "analyse": ms_since(started)}
    return plan


def _temporal_analysis(request: RecallRequest, now: datetime, ctx: RecallContext) -> Any:
    from tempr.core.types import TemporalAnalysis
    from tempr.temporal import analyse as analyse_time

    if request.temporal_window is not None:
        return TemporalAnalysis()
    try:
        return analyse_time(
            request.query, now, hemisphere=ctx.settings.hemisphere, languages=ctx.settings.temporal_languages
        )
    except (ValueError, OverflowError):  # "200 years ago" in year 100: a window before year 1
        raise ValidationError(
            f"the query refers to a time outside the supported date range {RANGE_TEXT}", field="query"
        ) from None


def _resolve_windows(
    bank_id: str, request: RecallRequest, temporal: Any, anchor_vectors: Any, now: datetime, ctx: RecallContext
) -> tuple[list[TimeWindow], dict[str, Any]]:
    """Explicit window first; else parsed windows plus event anchors looked up in the bank."""
    from tempr.temporal import window_from_anchor

    if request.temporal_window is not None:
        tw = request.temporal_window
        window = TimeWindow(tw.start, tw.end, granularity="explicit", source="temporal_window")
        return [window], {"source": "temporal_window", "windows": [window.to_dict()]}
    windows = list(temporal.windows)
    anchors = []
    filters = recall_repo.Filters(bank_id=bank_id)
    for anchor, vector in zip(temporal.anchors, anchor_vectors, strict=True):
        with ctx.engine.connect() as conn:
            found = recall_repo.find_event_date(conn, [float(x) for x in vector], filters)
        if found is None:
            anchors.append(
                {
                    "side": anchor.side,
                    "event": anchor.event,
                    "found": False,
                    "note": "event not found in the bank; no window",
                }
            )
            continue
        unit_id, when = found
        windows.append(window_from_anchor(anchor.side, when, now))
        anchors.append(
            {"side": anchor.side, "event": anchor.event, "found": True, "unit_id": unit_id, "date": when.isoformat()}
        )
    trace = {"source": "query", "windows": [w.to_dict() for w in windows], "anchors": anchors}
    return windows, trace
