"""Recall budget: how deep each strategy digs for a ``low``/``mid``/``high`` request.

The budget level is a *search depth* knob, independent of ``max_tokens`` (how much
text comes back). It resolves to one integer, the recall budget, which then sizes
every stage: the SQL ``LIMIT`` of the semantic and keyword strategies, pgvector's
``hnsw.ef_search``, the graph node budget, the temporal spread, and the ``2 x
budget`` results considered for token packing.

Two resolution functions, as in the seed ("How Budget Maps to Pipeline Parameters"):

* ``fixed`` (default): a constant per level, 100 / 300 / 1000.
* ``adaptive``: a share of ``max_tokens`` (2.5 % / 7.5 % / 25 %), clamped to
  ``[minimum, maximum]`` (20 / 2000) so tiny or huge token budgets still search
  sensibly.

Everything is passed in; the caller reads the values from ``Settings``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

BudgetLevel = Literal["low", "mid", "high"]
BudgetFunction = Literal["fixed", "adaptive"]

LEVELS: tuple[str, ...] = ("low", "mid", "high")
"""The levels in increasing depth; the index selects from the per-level triples."""

HOP_DEPTHS: dict[str, int] = {"low": 1, "mid": 2, "high": 3}
"""Graph traversal depth per level (the reference always walks one hop)."""


def level_index(level: str) -> int:
    """Position of ``level`` in :data:`LEVELS`; a ValueError names the bad value."""
    try:
        return LEVELS.index(level)
    except ValueError:
        raise ValueError(f"unknown budget level {level!r}; expected one of {LEVELS}") from None


def clamp_int(value: int, minimum: int, maximum: int) -> int:
    """``value`` limited to ``[minimum, maximum]``."""
    return max(minimum, min(maximum, value))


def _pick(triple: Sequence[float], level: str, name: str) -> float:
    if len(triple) != len(LEVELS):
        raise ValueError(f"{name} needs one value per level {LEVELS}, got {len(triple)}")
    return triple[level_index(level)]


def recall_budget(
    level: str,
    max_tokens: int,
    *,
    function: str = "fixed",
    fixed: Sequence[int] = (100, 300, 1000),
    adaptive: Sequence[float] = (0.025, 0.075, 0.25),
    minimum: int = 20,
    maximum: int = 2000,
) -> int:
    """Resolve a budget level to the recall budget (a candidate count).

    ``fixed`` returns the configured constant unclamped: the operator chose it
    explicitly, and the seed only clamps the adaptive mode. ``adaptive`` rounds
    ``max_tokens * ratio`` with Python's ``round`` (half to even; the clamp makes
    the half cases irrelevant for realistic inputs) and clamps it.
    """
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be >= 0, got {max_tokens}")
    if minimum > maximum:
        raise ValueError(f"budget minimum {minimum} exceeds maximum {maximum}")
    if function == "fixed":
        return int(_pick(fixed, level, "fixed"))
    if function == "adaptive":
        ratio = _pick(adaptive, level, "adaptive")
        return clamp_int(round(max_tokens * ratio), minimum, maximum)
    raise ValueError(f"unknown budget function {function!r}; expected 'fixed' or 'adaptive'")


def multi_hop_depth(level: str) -> int:
    """Graph traversal depth for a budget level: low 1, mid 2, high 3 (see store/recall_graph)."""
    return HOP_DEPTHS[LEVELS[level_index(level)]]


def packing_pool_size(budget: int) -> int:
    """How many top-scored results token packing considers: ``2 x budget`` (seed)."""
    return max(0, 2 * budget)
