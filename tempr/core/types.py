"""Value types shared by the pure recall core and the layers around it.

They are plain frozen dataclasses so they cross process boundaries (Celery
JSON payloads) through ``to_dict``/``from_dict`` without surprises, and
carry ids and scores, never database rows.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class Strategy(StrEnum):
    SEMANTIC = "semantic"
    KEYWORD = "keyword"
    GRAPH = "graph"
    TEMPORAL = "temporal"


ALL_STRATEGIES: tuple[Strategy, ...] = tuple(Strategy)


@dataclass(frozen=True)
class Hit:
    """One candidate from one strategy: a memory id and that strategy's own score."""

    id: str
    score: float


@dataclass(frozen=True)
class StrategyResult:
    """A strategy's ranked list (best first). ``error`` set means the strategy degraded."""

    strategy: Strategy
    hits: tuple[Hit, ...] = ()
    error: str | None = None
    elapsed_ms: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy.value,
            "hits": [[h.id, h.score] for h in self.hits],
            "error": self.error,
            "elapsed_ms": self.elapsed_ms,
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StrategyResult:
        return cls(
            strategy=Strategy(data["strategy"]),
            hits=tuple(Hit(str(i), float(s)) for i, s in data["hits"]),
            error=data.get("error"),
            elapsed_ms=float(data.get("elapsed_ms", 0.0)),
            detail=dict(data.get("detail") or {}),
        )


@dataclass(frozen=True)
class FusedCandidate:
    """A memory after RRF: its fused score, 1-indexed rank per strategy and raw scores."""

    id: str
    rrf_score: float
    ranks: dict[str, int]
    scores: dict[str, float]


@dataclass(frozen=True)
class TimeWindow:
    """A closed time interval [start, end] the query refers to.

    ``granularity`` is the calendar unit the phrase named (day, week, month,
    quarter, season, year, decade, span...). ``open_side`` is "before" or
    "after" for open-ended windows built from an anchor ("before Alice
    joined Google"); ``anchor`` is then the anchor instant, and proximity is
    measured from it rather than from the centre.
    """

    start: datetime
    end: datetime
    granularity: str = "span"
    open_side: str | None = None
    anchor: datetime | None = None
    source: str = ""

    @property
    def centre(self) -> datetime:
        if self.anchor is not None:
            return self.anchor
        return self.start + (self.end - self.start) / 2

    @property
    def days(self) -> float:
        return max((self.end - self.start).total_seconds() / 86400.0, 1.0)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("start", "end", "anchor"):
            if data[key] is not None:
                data[key] = data[key].isoformat()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TimeWindow:
        def _dt(v: str | None) -> datetime | None:
            return datetime.fromisoformat(v) if v else None

        return cls(
            start=datetime.fromisoformat(data["start"]),
            end=datetime.fromisoformat(data["end"]),
            granularity=data.get("granularity", "span"),
            open_side=data.get("open_side"),
            anchor=_dt(data.get("anchor")),
            source=data.get("source", ""),
        )


@dataclass(frozen=True)
class EventAnchor:
    """ "before/after/since/until <event>": the event text to look up in the bank."""

    side: str  # "before" | "after"
    event: str
    source: str = ""


@dataclass(frozen=True)
class TemporalAnalysis:
    """What the query analyser found: windows it could build and anchors it could not."""

    windows: tuple[TimeWindow, ...] = ()
    anchors: tuple[EventAnchor, ...] = ()

    @property
    def has_time_reference(self) -> bool:
        return bool(self.windows or self.anchors)
