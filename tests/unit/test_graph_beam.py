"""The graph walk's beam: which memories the next hop spreads from (tempr.store.recall_graph)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tempr.store.recall_graph import _next_frontier

SCORES = st.dictionaries(st.uuids().map(str), st.floats(0, 3, allow_nan=False), max_size=40)


@given(SCORES, st.integers(0, 50))
def test_the_beam_keeps_the_best_first_reached_memories(best: dict[str, float], beam: int) -> None:
    reached = list(best)
    frontier = _next_frontier(reached, best, beam)
    if beam == 0 or len(reached) <= beam:
        assert frontier == reached  # no cap: every memory first reached, as before the beam
        return
    assert len(frontier) == beam
    ranked = sorted(reached, key=lambda u: (-best[u], u))
    assert frontier == ranked[:beam]  # best score first, ties by id
    assert min(best[u] for u in frontier) >= max(best[u] for u in reached if u not in frontier)
