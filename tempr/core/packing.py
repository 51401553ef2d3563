"""Token packing: fill the caller's ``max_tokens`` with the best-scored memories.

Agents budget context in tokens, not result counts, so the final list is cut by
tokens. The rules (seed, "Stage 4: Token Truncation"):

* Walk the items in final-score order and keep each one that still fits.
* An item too long for what is left is **skipped** and packing continues, so one
  long fact does not cost the shorter ones ranked behind it.
* If nothing fits at all, the top item is returned whole (the *floor*): a query
  that matched something is never answered with an empty list. This applies even
  to ``max_tokens=0`` -- the seed states the floor without exception, and a caller
  who wants nothing should not call recall. (The reference, post-snapshot, skips
  the floor at 0; this is a deliberate difference.)

Only what ``count_tokens`` counts is charged (the memory text; metadata is free).
Each item is counted exactly once. Because skipping never makes room, the used
tokens grow monotonically with the budget (the runs for two budgets are identical
until the larger one first keeps an item the smaller cannot, and from then on it has
used more than the smaller budget allows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

T = TypeVar("T")

Outcome = Literal["kept", "skipped", "floor"]


@dataclass(frozen=True)
class PackDecision:
    """What happened to the item at ``index`` (its position in the input), for the trace."""

    index: int
    tokens: int
    outcome: Outcome
    remaining_before: int
    """Budget left when the item was considered (never negative)."""


@dataclass(frozen=True)
class PackResult(Generic[T]):
    """Kept items in input order, skipped ones with their token counts, and the trace."""

    kept: list[T] = field(default_factory=list)
    skipped: list[tuple[T, int]] = field(default_factory=list)
    tokens_used: int = 0
    decisions: list[PackDecision] = field(default_factory=list)
    floor_used: bool = False
    """True when nothing fit and the top item was returned whole (over budget)."""

    @property
    def truncated(self) -> bool:
        """Whether anything was left out."""
        return bool(self.skipped)


def _count_all(items: Sequence[T], count_tokens: Callable[[T], int]) -> list[int]:
    counts = [int(count_tokens(item)) for item in items]
    for index, tokens in enumerate(counts):
        if tokens < 0:
            raise ValueError(f"count_tokens returned {tokens} for item {index}")
    return counts


def _greedy(counts: Sequence[int], max_tokens: int) -> list[PackDecision]:
    """Skip-and-continue first fit over the token counts."""
    remaining = max_tokens
    decisions = []
    for index, tokens in enumerate(counts):
        fits = tokens <= remaining
        decisions.append(PackDecision(index, tokens, "kept" if fits else "skipped", remaining))
        if fits:
            remaining -= tokens
    return decisions


def _apply_floor(decisions: list[PackDecision]) -> list[PackDecision]:
    """Nothing fitted: keep the top item whole, everything else stays skipped."""
    top = decisions[0]
    return [PackDecision(top.index, top.tokens, "floor", top.remaining_before), *decisions[1:]]


def pack(
    items: Sequence[T],
    *,
    max_tokens: int,
    count_tokens: Callable[[T], int],
) -> PackResult[T]:
    """Pack ``items`` (already sorted best first) into ``max_tokens``.

    ``tokens_used <= max_tokens`` unless ``floor_used``, in which case exactly the
    first item is kept and ``tokens_used`` is its size.
    """
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be >= 0, got {max_tokens}")
    decisions = _greedy(_count_all(items, count_tokens), max_tokens)
    floor_used = bool(decisions) and all(d.outcome == "skipped" for d in decisions)
    if floor_used:
        decisions = _apply_floor(decisions)
    kept = [items[d.index] for d in decisions if d.outcome != "skipped"]
    skipped = [(items[d.index], d.tokens) for d in decisions if d.outcome == "skipped"]
    used = sum(d.tokens for d in decisions if d.outcome != "skipped")
    return PackResult(kept, skipped, used, decisions, floor_used)
