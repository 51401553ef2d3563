"""What the learned ranker's token features cost per recall (issue 9 allows the new stage 5 ms at p50).

    .venv/bin/python -m bench.token_cost [--queries 60] [--repeats 5] [--write]

On the LoCoMo dev banks (``tempr bench quality`` or ``tempr ranker train`` ingests them; their
memories carry token vectors), each question runs the work the token features add, with and
without it, alternating in one process so that load moves both sides alike:

* *embedding*: the analysis's one embedder call with its token vectors against without them;
* *rank stage*: ``tempr.recall.scoring.rerank`` (rows, cosines, features, the model's predict) for
  the same fused candidates, the plan with its token vectors against the same plan without
  (which reads no token bytes and leaves the features missing); once with the reranking
  process's row cache warm, once reading every row from PostgreSQL;
* *message*: the plan's JSON, which the fusion callback's message carries (the strategy
  messages go without the token vectors).

Each step is repeated (``--repeats``) and its median kept per question; the table gives the
median and the 95th percentile over questions. (The synthetic banks of ``tempr bench latency``
are built from cached vectors without token vectors, so they cannot show this cost.)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import locomo
from bench.focus_cost import _bank_version, _pair, locomo_main, paired_section


def measure(folder: Path, queries: int, repeats: int) -> dict[str, list[tuple[float, float]]]:
    from dataclasses import replace

    from bench.quality import _request
    from tempr.recall.pipeline import run_strategies
    from tempr.recall.plan import analyse
    from tempr.recall.scoring import fuse, rerank
    from workers.resources import get_resources, recall_context

    ctx = recall_context()
    cold = replace(ctx, unit_cache=None)
    if ctx.embedder is None:
        raise SystemExit("this process has no embedder")
    steps = ("embedding", "rank, row cache warm", "rank, from PostgreSQL", "plan JSON, KB")
    out: dict[str, list[tuple[float, float]]] = {step: [] for step in steps}
    pairs = [(c, q) for c in locomo.load(folder) for q in c.questions]
    for j, (conv, q) in enumerate(pairs[:: max(1, len(pairs) // queries)][:queries]):
        version = _bank_version(get_resources().engine, conv.bank_id)
        plan = analyse(conv.bank_id, _request(conv, q), ctx, version=version)
        if plan.tokens is None:
            raise SystemExit("the plan carries no token vectors: is TEMPR_TOKEN_VECTORS false?")
        candidates = fuse(plan, run_strategies(plan, ctx), ctx.settings)
        rerank(plan, candidates, ctx)  # the row cache warm, as in a fleet that has seen the bank
        for step, pair in _one_question(q.question, plan, candidates, (ctx, cold), repeats, bool(j % 2)).items():
            out[step].append(pair)
    return out


def _one_question(
    text: str, plan: Any, candidates: Any, contexts: tuple[Any, Any], repeats: int, flip: bool
) -> dict[str, tuple[float, float]]:
    """(with, without) per step for one question."""
    from tempr.recall.scoring import rerank

    warm, cold = contexts
    bare = plan.model_copy(update={"tokens": None, "focus_tokens": None})
    embedder = warm.embedder
    return {
        "embedding": _pair(
            lambda: embedder.embed_tokens([text]), lambda: embedder.embed_tokens([text], tokens=False), repeats, flip
        ),
        "rank, row cache warm": _pair(
            lambda: rerank(plan, candidates, warm), lambda: rerank(bare, candidates, warm), repeats, flip
        ),
        "rank, from PostgreSQL": _pair(
            lambda: rerank(plan, candidates, cold), lambda: rerank(bare, candidates, cold), repeats, flip
        ),
        "plan JSON, KB": (len(plan.model_dump_json()) / 1024, len(bare.model_dump_json()) / 1024),
    }


def render(results: dict[str, list[tuple[float, float]]], load: tuple[float, ...]) -> str:
    return paired_section(
        "Cost of the token features (`python -m bench.token_cost`)",
        f"{len(results['embedding'])} LoCoMo dev questions on their banks, budget mid; per question the median "
        "of repeated calls, with and without the token vectors, alternating in one process",
        results,
        load,
        "tokens",
    )


def main(argv: Sequence[str] | None = None) -> None:
    locomo_main(argv, __doc__ or "", "token_cost", measure, render)


if __name__ == "__main__":
    main()
