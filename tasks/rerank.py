"""Cross-encoder scoring (queue ``rerank``): run it on its own pool, on the GPU where there is one.

``tempr.rerank.score(state)`` (a ``RerankState``) scores the fused candidates with this process's cross-encoder
through the process-wide batcher (``workers.rerank_batcher``): run the rerank pool with
``--pool threads`` so concurrent requests share one model and one batch. The model loads once
per process, lazily (a background warm-up starts with the worker). The learned ranker (recall
profile ``default``) runs here too, on the CPU, on the candidates' features. With neither (profile
``seed``, no model) the seed's RRF-derived fallback is applied without any model call.
"""

from __future__ import annotations

import time
from typing import Any

from tasks.common import RecallStep, enter_step
from tasks.messages import FinishState, RerankState
from tempr.recall.scoring import rerank
from workers.app import app
from workers.rerank_batcher import process_reranker
from workers.resources import recall_context


@app.task(name="tempr.rerank.score", bind=True, base=RecallStep)
def score(self: RecallStep, state: dict[str, Any]) -> dict[str, Any]:
    """``RerankState`` in, ``FinishState`` out: the candidates with their rerank scores."""
    msg = enter_step(state, RerankState, "rerank")
    outcome = rerank(msg.plan, msg.candidates, recall_context(embedder=False, reranker=process_reranker()))
    msg.timings["rerank"] = outcome.elapsed_ms
    return FinishState(**{**dict(msg), "sent_at": time.time()}, outcome=outcome).send()
