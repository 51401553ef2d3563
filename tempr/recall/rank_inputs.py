"""What the learned ranker reads: the fused candidates joined with their stored fields.

One place turns a query plan and its fused candidates into the pure core's
``RankQuery`` and ``RankCandidate`` values, so the serving path
(``tempr.recall.scoring.rerank``) and training (``tempr ranker train``) compute
exactly the same features from exactly the same data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tempr.core import token_match
from tempr.core.rank_features import RankCandidate, RankQuery
from tempr.core.types import FusedCandidate
from tempr.recall.context import RecallContext
from tempr.recall.plan import QueryPlan
from tempr.store import recall_repo


def gather(
    plan: QueryPlan,
    candidates: Sequence[FusedCandidate],
    ctx: RecallContext,
    ce: Mapping[str, float] | None = None,
) -> tuple[RankQuery, list[RankCandidate], dict[str, dict[str, Any]]]:
    """The ranker's inputs for the candidates still in the bank, and their unit rows."""
    ids = [c.id for c in candidates]
    if ctx.unit_cache is not None and plan.bank_version is not None:
        units = ctx.unit_cache.units(ctx.engine, plan.bank_id, plan.bank_version, ids, plan.embedding, plan.focus)
    else:
        with ctx.engine.connect() as conn:  # one round trip: fields, entities, the cosines and chunk text
            units = recall_repo.fetch_units(
                conn,
                ids,
                with_entities=True,
                embedding=plan.embedding,
                with_chunks=True,
                focus=plan.focus,
                tokens=plan.tokens is not None,
            )
    query = RankQuery(
        text=plan.request.query,
        now=plan.now,
        windows=tuple(plan.windows),
        tokens=token_match.unpack(plan.tokens),
        focus_tokens=token_match.unpack(plan.focus_tokens),
    )
    out = []
    for c in candidates:
        unit = units.get(c.id)
        if unit is None:  # deleted between retrieval and now
            continue
        out.append(
            RankCandidate(
                id=c.id,
                text=unit["text"],
                cos_fact=unit["cosine"],
                cos_chunk=unit.get("chunk_cosine"),
                ranks=c.ranks,
                scores=c.scores,
                rrf=c.rrf_score,
                chunk_text=unit["chunk_text"],
                entities=tuple(unit.get("entities") or ()),
                occurred=unit.get("event_date"),
                proof_count=int(unit.get("proof_count") or 1),
                fact_type=unit["type"],
                document=unit.get("document_id"),
                ce=None if ce is None else ce.get(c.id),
                cos_focus=unit.get("focus_cosine"),
                cos_focus_chunk=unit.get("focus_chunk_cosine"),
                tokens=unit.get("tokens"),
            )
        )
    return query, out, units
