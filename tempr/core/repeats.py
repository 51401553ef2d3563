"""Memories that repeat a source chunk already ranked above them are pushed down.

Ingest often extracts several memories from one source chunk (a conversation turn, a paragraph),
and they resemble each other: when the ranker likes the chunk, its memories crowd the top k and
leave no room for the other places the answer is written. So each candidate loses ``penalty``
(in the ranker's raw score units) for every better-scored candidate of its own chunk: the
chunk's best memory keeps its score, its second loses one step, its third two. A repeat that the
ranker likes far more than the alternatives still leads; a near-tie goes to a new chunk.

Measured on the LoCoMo dev conversations (leave one conversation out, 3 model seeds, on the
candidates ``tempr ranker train`` collects): penalty 3 raises evidence recall@5/10/25/50 from
64.14 / 68.72 / 73.11 / 75.82 to 64.63 / 69.05 / 73.31 / 75.96, and lowers none of the five folds
or four categories at any k (BENCHMARKS.md). The raw scores of one question span about 6 units
(5th to 95th percentile), so 3 is a real but bounded demotion; 5 or more scored the same.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

REPEAT_PENALTY = 3.0


def repeat_levels(scores: Sequence[float], keys: Sequence[Hashable | None]) -> list[int]:
    """For each candidate, how many candidates of its key score higher (ties: the earlier first).

    A candidate without a key (no source chunk) is never a repeat: level 0.
    """
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    seen: dict[Hashable, int] = {}
    levels = [0] * len(scores)
    for i in order:
        key = keys[i]
        if key is None:
            continue
        levels[i] = seen.get(key, 0)
        seen[key] = levels[i] + 1
    return levels


def penalise_repeats(
    scores: Sequence[float], keys: Sequence[Hashable | None], penalty: float = REPEAT_PENALTY
) -> list[float]:
    """``scores`` minus ``penalty`` per better-scored candidate of the same key (unchanged at 0)."""
    if len(scores) != len(keys):
        raise ValueError("one key per score")
    if penalty <= 0:
        return list(scores)
    return step_down(scores, repeat_levels(scores, keys), penalty)


def step_down(scores: Sequence[float], levels: Sequence[int], penalty: float = REPEAT_PENALTY) -> list[float]:
    """``scores`` minus ``penalty`` per level: for callers that keep ``repeat_levels`` (the trace)."""
    return [s - penalty * level for s, level in zip(scores, levels, strict=True)]
