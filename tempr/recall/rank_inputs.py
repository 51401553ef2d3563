"""What the learned ranker reads: the fused candidates joined with their stored fields.

One place turns a query plan and its fused candidates into the pure core's
``RankQuery`` and ``RankCandidate`` values, so the serving path
(``tempr.recall.scoring.rerank``) and training (``tempr ranker train``) compute
exactly the same features from exactly the same data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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
    with ctx.engine.connect() as conn:
        units = recall_repo.fetch_units(conn, ids, with_entities=True)
        cosines = recall_repo.unit_similarities(conn, ids, plan.embedding)
        chunks = recall_repo.fetch_chunks(conn, plan.bank_id, [u["chunk_id"] for u in units.values() if u["chunk_id"]])
    query = RankQuery(text=plan.request.query, now=plan.now, windows=tuple(plan.windows))
    out = []
    for c in candidates:
        unit = units.get(c.id)
        if unit is None:  # deleted between retrieval and now
            continue
        chunk = chunks.get(unit["chunk_id"]) if unit["chunk_id"] else None
        out.append(
            RankCandidate(
                id=c.id,
                text=unit["text"],
                cos_fact=cosines.get(c.id, 0.0),
                ranks=c.ranks,
                scores=c.scores,
                rrf=c.rrf_score,
                chunk_text=chunk["text"] if chunk else None,
                entities=tuple(unit.get("entities") or ()),
                occurred=unit.get("event_date"),
                proof_count=int(unit.get("proof_count") or 1),
                fact_type=unit["type"],
                document=unit.get("document_id"),
                ce=None if ce is None else ce.get(c.id),
            )
        )
    return query, out, units
