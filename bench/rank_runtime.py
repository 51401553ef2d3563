"""What the rank stage costs with the trees compiled and the texts' tokens memoised, against without.

    .venv/bin/python -m bench.rank_runtime [--queries 60] [--repeats 5] [--write]

On the LoCoMo dev banks (``tempr bench quality`` or ``tempr ranker train`` ingests them), each
question's fused candidates are ranked in one process, each step's two ways alternating so that
load moves both alike:

* *trees*: the shipped model's members on the question's feature rows, compiled
  (``TEMPR_RANKER_RUNTIME=compiled``, ``tempr.providers.reranker.compiled``) against LightGBM's own
  predict;
* *features*: ``feature_array`` with the texts' token sets memoised (``rank_text.token_set``, warm
  as in a worker that has seen the bank) against the memo emptied before each call (every text
  split again, as before the memo);
* *rank stage*: ``tempr.recall.scoring.rerank`` with the row cache warm, both changes on against
  both off.

Each step is repeated (``--repeats``) and its median kept per question; the table gives the median
and the 95th percentile over questions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import locomo
from bench.focus_cost import _bank_version, _pair, locomo_main, paired_section


def measure(folder: Path, queries: int, repeats: int) -> dict[str, list[tuple[float, float]]]:
    from bench.quality import _request
    from tempr.providers.reranker.learned import LearnedRanker
    from tempr.recall.pipeline import run_strategies
    from tempr.recall.plan import analyse
    from tempr.recall.scoring import fuse, rerank
    from workers.resources import get_resources, recall_context

    ctx = recall_context()
    res = get_resources()
    compiled = LearnedRanker(res.settings.ranker_model_path, compiled_dir=res.settings.models_dir)
    plain = LearnedRanker(res.settings.ranker_model_path)
    if not compiled.features or compiled._compiled is None:
        raise SystemExit("the ranker's trees could not be compiled here (see the warning above)")
    fast, slow = replace(ctx, ranker=compiled), replace(ctx, ranker=plain)

    out: dict[str, list[tuple[float, float]]] = {"trees": [], "features": [], "rank stage, row cache warm": []}
    pairs = [(c, q) for c in locomo.load(folder) for q in c.questions]
    for j, (conv, q) in enumerate(pairs[:: max(1, len(pairs) // queries)][:queries]):
        plan = analyse(conv.bank_id, _request(conv, q), ctx, version=_bank_version(res.engine, conv.bank_id))
        candidates = fuse(plan, run_strategies(plan, ctx), ctx.settings)
        rerank(plan, candidates, fast)  # rows cached and token sets memoised, as in a warm worker
        for step, (on, off) in _steps(plan, candidates, fast, slow).items():
            out[step].append(_pair(on, off, repeats, bool(j % 2)))
    return out


def _steps(plan: Any, candidates: Any, fast: Any, slow: Any) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """Per step of one question: (the new way, the old way)."""
    from tempr.core import rank_text
    from tempr.core.rank_features import feature_array
    from tempr.recall.rank_inputs import gather
    from tempr.recall.scoring import rerank

    query, cands, _ = gather(plan, candidates, fast)
    rows = feature_array(query, cands)

    def split_again() -> None:
        rank_text.token_set.cache_clear()

    return {
        "trees": (lambda: fast.ranker.score_rows(rows), lambda: slow.ranker.score_rows(rows)),
        "features": (lambda: feature_array(query, cands), lambda: (split_again(), feature_array(query, cands))),
        "rank stage, row cache warm": (
            lambda: rerank(plan, candidates, fast),
            lambda: (split_again(), rerank(plan, candidates, slow)),
        ),
    }


def render(results: dict[str, list[tuple[float, float]]], load: tuple[float, ...]) -> str:
    return paired_section(
        "The rank stage: compiled trees and memoised tokens (`python -m bench.rank_runtime`)",
        f"{len(results['trees'])} LoCoMo dev questions on their banks, budget mid; per question the median of "
        "repeated calls, the new way against the old, alternating in one process (*with* = compiled trees, "
        "token sets memoised; *without* = LightGBM's predict, every text split again)",
        results,
        load,
        "new",
    )


def main(argv: Sequence[str] | None = None) -> None:
    locomo_main(argv, __doc__ or "", "rank_runtime", measure, render)


if __name__ == "__main__":
    main()
