"""Cross-encoder scoring (queue ``rerank``): run it on its own pool, on the GPU where there is one.

``tempr.rerank.score(state)`` scores the fused candidates with this process's cross-encoder
through the process-wide batcher (``workers.rerank_batcher``): run the rerank pool with
``--pool threads`` so concurrent requests share one model and one batch. The model loads once
per process, lazily (a background warm-up starts with the worker). With no model configured
here the seed's RRF-derived fallback is applied without any model call.
"""

from __future__ import annotations

import time
from typing import Any

from tasks.common import RecallStep, context, enter_step
from tempr.core.types import FusedCandidate
from tempr.recall.scoring import rerank
from workers.app import app
from workers.rerank_batcher import process_reranker


@app.task(name="tempr.rerank.score", bind=True, base=RecallStep)
def score(self: RecallStep, state: dict[str, Any]) -> dict[str, Any]:
    _env, timings, plan = enter_step(state, "rerank")
    candidates = [FusedCandidate(**c) for c in state["candidates"]]
    outcome = rerank(plan, candidates, context(reranker=process_reranker()))
    timings["rerank"] = outcome.elapsed_ms
    return {**state, "outcome": outcome.to_dict(), "timings": timings, "sent_at": time.time()}
