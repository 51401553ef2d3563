"""What ``tempr ranker train`` runs: collect, cross-validate, fit on everything, write the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench import locomo
from bench.metrics import KS
from bench.progress import log
from bench.quality import DEFAULT_LOCOMO
from bench.ranker_data import Sample, load_samples
from bench.ranker_train import USED_FEATURES, fit, loco, recall_table, save
from tempr.providers.reranker.learned import DEFAULT_MODEL


@dataclass
class Options:
    locomo: Path = DEFAULT_LOCOMO
    output: Path = field(default_factory=lambda: DEFAULT_MODEL)
    refresh: bool = False
    cv: bool = True
    cv_seeds: int = 0
    """Also report the cross-validated recall@k over this many model seeds (mean and spread): two
    configurations whose difference is within that spread are not told apart by one run."""


def samples(options: Options) -> list[Sample]:
    """Every dev question's candidates: services up, banks ingested, collected (or read from the cache)."""
    from bench import stack
    from bench.quality import ingest
    from workers.resources import get_resources, recall_context

    conversations = locomo.load(options.locomo.resolve())
    stack.services_up()
    ingest(conversations, get_resources())
    return load_samples(
        conversations, lambda: recall_context(reranker=get_resources().reranker), refresh=options.refresh
    )


def report(all_samples: list[Sample]) -> None:
    """Leave-one-conversation-out recall@k per held-out conversation, beside semantic-only."""
    folds = loco(all_samples, USED_FEATURES)
    print(f"{'fold':<8}{'questions':>10}  " + "  ".join(f"{'R@' + str(k):>14}" for k in KS))
    for held, rankings in folds.items():
        group = [s for s in all_samples if s.conversation == held]
        learned = recall_table(group, rankings)
        semantic = recall_table(group, [s.semantic for s in group])
        cells = "  ".join(f"{learned[k]:6.1f} ({semantic[k]:5.1f})" for k in KS)
        print(f"{held:<8}{len(group):>10}  {cells}")
    ordered = [s for held in folds for s in all_samples if s.conversation == held]
    learned = recall_table(ordered, [r for held in folds for r in folds[held]])
    semantic = recall_table(ordered, [s.semantic for s in ordered])
    cells = "  ".join(f"{learned[k]:6.1f} ({semantic[k]:5.1f})" for k in KS)
    print(f"{'all':<8}{len(ordered):>10}  {cells}")
    print("learned ranker, leave-one-conversation-out (semantic-only in brackets)")


def seed_spread(all_samples: list[Sample], seeds: int) -> None:
    """Leave-one-conversation-out recall@k, all questions, for seeds 1..N: each seed, then mean ± std."""
    import statistics

    per_k: dict[int, list[float]] = {k: [] for k in KS}
    for seed in range(1, seeds + 1):
        folds = loco(all_samples, USED_FEATURES, seed=seed)
        ordered = [s for held in folds for s in all_samples if s.conversation == held]
        table = recall_table(ordered, [r for held in folds for r in folds[held]])
        for k in KS:
            per_k[k].append(table[k])
        print(f"seed {seed:<3}" + "".join(f"{table[k]:>10.1f}" for k in KS))
    cells = "".join(f"{statistics.mean(v):>6.2f}±{statistics.pstdev(v):.2f}" for v in per_k.values())
    print(f"{'mean':<8}{cells}   (R@" + "/".join(map(str, KS)) + f", {seeds} seeds)")


def train(options: Options) -> None:
    all_samples = samples(options)
    if options.cv:
        report(all_samples)
    if options.cv_seeds:
        seed_spread(all_samples, options.cv_seeds)
    model = fit(all_samples, USED_FEATURES)
    save(model, options.output)
    member = f", a linear member of weight {model.weight:g}" if model.linear is not None else ""
    log(
        f"wrote {options.output} ({len(all_samples)} questions, {len(USED_FEATURES)} features, {len(model.members)} LightGBM members{member})"
    )
