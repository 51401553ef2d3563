"""The typed messages between the recall steps: one model per hop, validated once on arrival.

    client / HTTP ──(RecallRequest JSON + deadline)──▶ tempr.recall.start
    tempr.recall.start ──StrategyCall ×3–4──▶ tempr.retrieve.strategy    (chord header)
    tempr.retrieve.strategy ──StrategyReport──▶ tempr.fuse.collect       (chord results)
    tempr.recall.start ──FuseState──▶ tempr.fuse.collect                 (chord body)
    tempr.fuse.collect ──RerankState──▶ tempr.rerank.score
    tempr.rerank.score ──FinishState──▶ tempr.fuse.finish

A message crosses the broker as JSON (``send``) and is read back with ``receive``: the models
are checked field by field, but the request's own costly checks (its token count) ran once, at
the edge, and are not repeated per hop (``TRUSTED``). docs/execution.md draws the path.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from tempr.core.types import FusedCandidate, Hit, Strategy, StrategyResult
from tempr.jobs.envelope import JobEnvelope
from tempr.recall.models import TRUSTED
from tempr.recall.plan import QueryPlan
from tempr.recall.scoring import RerankOutcome


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @classmethod
    def receive(cls, data: Any) -> Self:
        """This message from its JSON form (as Celery hands it to a task)."""
        return cls.model_validate(data, context=TRUSTED)

    def send(self) -> dict[str, Any]:
        """This message as JSON-able data, for a Celery signature's args."""
        return self.model_dump(mode="json")


class StrategyCall(Message):
    """start → ``tempr.retrieve.strategy``: run one strategy for this plan before the deadline."""

    strategy: Strategy
    plan: QueryPlan
    deadline: float
    sent_at: float


class StrategyReport(Message):
    """``tempr.retrieve.strategy`` → ``tempr.fuse.collect``: one strategy's ranked hits (or its error)."""

    strategy: Strategy
    hits: list[tuple[str, float]] = Field(default_factory=list)
    error: str | None = None
    elapsed_ms: float = 0.0
    detail: dict[str, Any] = Field(default_factory=dict)
    queue_ms: float = 0.0
    finished_at: float = 0.0

    @classmethod
    def of(cls, result: StrategyResult, *, queue_ms: float = 0.0, finished_at: float = 0.0) -> StrategyReport:
        return cls(
            strategy=result.strategy,
            hits=[(h.id, h.score) for h in result.hits],
            error=result.error,
            elapsed_ms=result.elapsed_ms,
            detail=result.detail,
            queue_ms=queue_ms,
            finished_at=finished_at,
        )

    def result(self) -> StrategyResult:
        return StrategyResult(
            strategy=self.strategy,
            hits=tuple(Hit(i, s) for i, s in self.hits),
            error=self.error,
            elapsed_ms=self.elapsed_ms,
            detail=self.detail,
        )


class Step(Message):
    """What every chained step after the strategies carries: the job, the plan, the timings so far."""

    env: JobEnvelope
    plan: QueryPlan
    timings: dict[str, float] = Field(default_factory=dict)
    sent_at: float
    """When this message was sent (unix seconds): the next step's queue wait starts here."""


class FuseState(Step):
    """start → ``tempr.fuse.collect`` (the chord's body): the plan without its embedding.

    ``sent_at`` is when the chord was sent: the strategies' span is measured from it. ``settled``:
    the reports of the strategies the plan alone decided (``tempr.recall.strategies.settled``:
    the temporal strategy of a query without a time window), which the header does not run."""

    settled: list[StrategyReport] = Field(default_factory=list)


class RerankState(Step):
    """``tempr.fuse.collect`` → ``tempr.rerank.score``: the fused candidates to score.

    ``strategies`` carry their hits only when the request asked for a trace: after fusion the
    answer needs a strategy's hits for nothing else (``degraded`` reads only ``error``)."""

    candidates: list[FusedCandidate]
    strategies: list[StrategyReport]


class FinishState(RerankState):
    """``tempr.rerank.score`` → ``tempr.fuse.finish``: the candidates with their rerank scores.

    The outcome crosses as ``RerankOutcome.to_dict()``: without the stored rows the learned ranker
    read (``units``: the finish fetches its own), whose token vectors are bytes that JSON cannot
    carry (a learned ranking on the rerank queue failed the recall with a UnicodeDecodeError)."""

    outcome: RerankOutcome

    @field_validator("outcome", mode="before")
    @classmethod
    def _outcome_in(cls, value: Any) -> Any:
        return RerankOutcome.from_dict(value) if isinstance(value, dict) else value

    @field_serializer("outcome")
    def _outcome_out(self, outcome: RerankOutcome) -> dict[str, Any]:
        return outcome.to_dict()
