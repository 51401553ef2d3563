"""Training and evaluation data for the learned ranker: LoCoMo questions as ranked candidate lists.

For each question the recall pipeline runs up to fusion exactly as it does when serving
(``analyse``, the four strategies, RRF, the candidate cap), then ``rank_inputs.gather``
reads the ranker's inputs. A candidate is relevant when its ``metadata.dia_id`` cites an
evidence turn. Samples are cached on disk (``bench/.cache``), keyed by the conversations, a
version and every setting that changes an answer (a strategy setting changes the candidates),
so model selection and cross-validation rerun in seconds.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import locomo
from bench.progress import bar, log
from tempr.core import query_focus
from tempr.core.rank_features import RankCandidate, RankQuery
from tempr.providers.embedder.spaces import space_of

SAMPLES_VERSION = 4
"""2: chunks carry vectors (``cos_chunk`` is the chunk's own cosine); 3: the focus query's cosines;
4: token vectors (``tempr.core.token_match``) of the query, its focus and each candidate."""
CACHE_DIR = Path(__file__).resolve().parent / ".cache"


@dataclass
class Sample:
    """One question: its candidates (fusion order), their dia_ids and the evidence."""

    conversation: str
    category: int
    evidence: tuple[str, ...]
    query: RankQuery
    candidates: list[RankCandidate]
    dia_ids: list[list[str]]
    semantic: list[list[str]]
    """dia_ids of the semantic strategy's own ranking (the semantic-only baseline)."""

    def labels(self) -> list[int]:
        wanted = set(self.evidence)
        return [1 if wanted & set(ids) else 0 for ids in self.dia_ids]


def cache_path(conversations: Sequence[locomo.Conversation], reranker: str | None, settings: Any) -> Path:
    """Keyed by the conversations, the cross-encoder, the embedder's vector space, the answer
    settings, the ingest settings that shape a bank (entity extraction, chunk vectors) and the
    focus rule's source (``tempr.core.query_focus``: which queries get a focus vector, and which).

    Without the settings, samples collected before a change of, say, the graph walk would train
    a model for candidates the strategies no longer produce."""
    answer = {name: getattr(settings, name) for name in type(settings).answer_settings()}
    answer |= {name: getattr(settings, name) for name in ("entity_extraction", "chunk_vectors")}
    parts = [str(SAMPLES_VERSION), reranker or "-", *(f"{c.name}:{len(c.questions)}" for c in conversations)]
    parts.append(hashlib.sha1(Path(query_focus.__file__).read_bytes()).hexdigest())  # the focus rule shapes a plan
    parts += [space_of(settings.embedder), json.dumps(answer, sort_keys=True, default=str)]
    return CACHE_DIR / f"ranker-samples-{hashlib.sha1('|'.join(parts).encode()).hexdigest()[:12]}.pkl"


def sample_for(conv: locomo.Conversation, q: locomo.Question, plan: Any, results: Sequence[Any], ctx: Any) -> Sample:
    """The question's fused candidates and their ranker inputs, as the rerank stage would see them."""
    from tempr.recall.rank_inputs import gather
    from tempr.recall.scoring import cross_encoder_raw, fuse
    from tempr.store import recall_repo

    candidates = fuse(plan, results, ctx.settings)
    ce = cross_encoder_raw(plan, candidates, ctx) if ctx.reranker is not None else None
    query, cands, units = gather(plan, candidates, ctx, ce)
    semantic = next(r for r in results if r.strategy.value == "semantic")
    with ctx.engine.connect() as conn:
        sem_units = recall_repo.fetch_units(conn, [h.id for h in semantic.hits], with_entities=False)
    return Sample(
        conversation=conv.name,
        category=q.category,
        evidence=q.evidence,
        query=query,
        candidates=cands,
        dia_ids=[locomo.result_dia_ids(units[c.id]["metadata"]) for c in cands],
        semantic=[locomo.result_dia_ids(sem_units[h.id]["metadata"]) for h in semantic.hits if h.id in sem_units],
    )


def in_bank_space(ctx: Any, bank_id: str) -> Any:
    """``ctx`` with the embedder of the bank's vector space, as ``recall`` resolves it: a plan made
    by ``analyse`` directly must embed its query as the bank's facts were embedded."""
    from tempr.store.banks_repo import bank_space

    with ctx.engine.connect() as conn:
        space = bank_space(conn, bank_id)
    return ctx if space is None else ctx.for_space(space)


def collect(conversations: Sequence[locomo.Conversation], ctx: Any) -> list[Sample]:
    """Run every question to the ranker's input (services must be up and the banks ingested)."""
    from bench.quality import _request
    from tempr.recall.pipeline import run_strategies
    from tempr.recall.plan import analyse

    out: list[Sample] = []
    pairs = [(c, q) for c in conversations for q in c.questions]
    with bar(len(pairs), "ranker samples", "q") as progress:
        for conv, q in pairs:
            plan = analyse(conv.bank_id, _request(conv, q), in_bank_space(ctx, conv.bank_id))
            out.append(sample_for(conv, q, plan, run_strategies(plan, ctx), ctx))
            progress.update(1)
    return out


def load_samples(
    conversations: Sequence[locomo.Conversation], ctx_factory: Any, *, refresh: bool = False
) -> list[Sample]:
    """Samples from the cache, or collected (ingesting the banks first) and cached."""
    ctx = ctx_factory()
    path = cache_path(conversations, ctx.reranker.name if ctx.reranker is not None else None, ctx.settings)
    if path.exists() and not refresh:
        with path.open("rb") as fh:
            samples: list[Sample] = pickle.load(fh)
        log(f"ranker samples: {len(samples)} questions from {path.name}")
        return samples
    samples = collect(conversations, ctx)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        pickle.dump(samples, fh)
    return samples
