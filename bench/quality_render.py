"""The BENCHMARKS.md section of ``tempr bench quality``: overall, per fold and per category tables."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from bench import locomo, report
from bench.metrics import KS, median
from bench.quality import (
    BIG_TOKENS,
    BM25,
    DEFAULT,
    DRAGON,
    RRF,
    SEED,
    SEMANTIC,
    STAGE,
    WORKERS,
    Asked,
    QualityResult,
)

Where = Callable[[Asked], bool]


def _pct(value: float) -> str:
    return report.fmt(value, 1)


def _cells(result: QualityResult, variant: str, where: Where | None = None) -> list[str]:
    return [_pct(result.recall(variant, k, where)[0]) for k in KS]


def _intro(result: QualityResult) -> list[str]:
    asked = result.asked
    by_cat = Counter(a.question.category for a in asked)
    skipped: Counter[str] = Counter()
    for c in result.conversations:
        skipped.update(c.skipped_questions)
    convs = ", ".join(c.name for c in result.conversations)
    folds = ", ".join(f"{k}: {v}" for k, v in result.folds.items())
    return [
        "## Retrieval quality: LoCoMo evidence recall@k",
        "",
        f"Conversations {convs} ({sum(len(c.facts) for c in result.conversations):,} observations, one bank each); "
        f"{len(asked)} questions of categories 1–4 "
        f"({', '.join(f'{locomo.CATEGORIES[k]} {by_cat[k]}' for k in sorted(by_cat))}); "
        f"left out: {', '.join(f'{v} {k}' for k, v in skipped.items() if v) or 'none'}. "
        "Each question asked with budget `mid`, max_tokens 4096, query_timestamp = one day after the "
        "conversation's last session.",
        "",
        "**Evidence recall@k** = for each question, the fraction of its evidence `dia_id`s found among the "
        "`metadata.dia_id`s of the top-k results (in the response's rank order), averaged over questions. "
        "Figures are percentages.",
        "",
        "**Cross-validated.** The default pipeline's learned ranker is trained on LoCoMo dev questions, so "
        "every *default* figure below ranks a conversation with a model trained on the *other* conversations "
        f"only (leave one conversation out; questions each fold model was trained on: {folds}), in-process and "
        "through the workers alike (each fold's worker fleet loads that fold's model). The shipped model "
        "(`tempr/data/ranker.txt`, trained on all five) is never scored here.",
        "",
        report.machine_line(result.machine) + " No cross-encoder model ships with tempr; none was measured.",
        "",
    ]


def _overall(result: QualityResult) -> list[str]:
    rows = [[f"**{v}**" if v in (WORKERS, DEFAULT) else v, *_cells(result, v)] for v in result.variants()]
    rows.append([f"*{DRAGON[0]}*", *[f"*{DRAGON[1][k]}*" for k in KS]])
    lines = ["### Overall", "", report.table(["variant", *[f"R@{k}" for k in KS]], rows), ""]
    lines += [
        f"*{DEFAULT}*: the learned ranker (LightGBM LambdaRank over per-candidate features, "
        "`tempr.core.rank_features`) is the rerank stage and its score the final score, then token packing "
        f"(`TEMPR_RECALL_PROFILE=default`). *{SEED}*: the seed design exactly (`TEMPR_RECALL_PROFILE=seed`: the "
        "RRF-derived fallback scores, recency/temporal/proof boosts). "
        f"*{SEMANTIC}*: the semantic strategy's own ranking (MiniLM cosine alone); *{BM25}*: the keyword "
        f"strategy's own ranking; *{RRF}*: the four strategies fused by RRF (k = 60), nothing after; *{STAGE}*: "
        "the fold model's order over the fused candidates, before packing. Every variant starts from the same "
        "strategy results of the same question. DRAGON is the LoCoMo paper's retriever over observations on all "
        "ten conversations (Table 3), a reference, not a like-for-like run.",
        "",
    ]
    if result.agreement:
        ag = result.agreement
        lines += [
            f"Workers vs in-process, default: identical top-50 ranking (by dia_id) for {ag['identical_top50']} "
            f"of {ag['questions']} questions, the same recall@5/10/25/50 for {ag.get('same_recall', '–')}. "
            f"Fleet (per fold): {'; '.join(result.fleet)}.",
            "",
        ]
    if result.workers_note:
        lines += [f"Note: {result.workers_note}", ""]
    return lines


def _per_fold(result: QualityResult) -> list[str]:
    rows = []
    for conv in result.conversations:
        where: Where = lambda a, n=conv.name: a.question.conversation == n  # noqa: E731
        for v in result.variants():
            count = result.recall(v, 5, where)[1]
            rows.append([conv.name, count, f"**{v}**" if v in (WORKERS, DEFAULT) else v, *_cells(result, v, where)])
    header = ["held-out conversation", "questions", "variant", *[f"R@{k}" for k in KS]]
    return ["### Per fold", "", report.table(header, rows), ""]


def _per_category(result: QualityResult) -> list[str]:
    cats = sorted({a.question.category for a in result.asked})
    rows = []
    for cat in cats:
        where: Where = lambda a, c=cat: a.question.category == c  # noqa: E731
        n = result.recall(DEFAULT, 5, where)[1]
        for v in result.variants():
            rows.append([f"{cat} {locomo.CATEGORIES[cat]}", n, v, *_cells(result, v, where)])
    header = ["category", "questions", "variant", *[f"R@{k}" for k in KS]]
    lines = ["### Per category", "", report.table(header, rows), ""]
    main = WORKERS if WORKERS in result.variants() else DEFAULT
    gaps = []
    for cat in [None, *cats]:
        where = None if cat is None else (lambda a, c=cat: a.question.category == c)
        for k in KS:
            gap = result.recall(main, k, where)[0] - result.recall(SEMANTIC, k, where)[0]
            gaps.append((gap, k, "all" if cat is None else locomo.CATEGORIES[cat]))
    worst = min(gaps)
    lines += [
        f"Smallest margin of *{main}* over *{SEMANTIC}* across k and categories: {worst[0]:+.1f} points "
        f"(R@{worst[1]}, {worst[2]}).",
        "",
    ]
    return lines


def _timing(result: QualityResult) -> list[str]:
    ms: dict[str, list[float]] = {}
    for a in result.asked:
        for k, v in a.ms.items():
            ms.setdefault(k, []).append(v)
    stage, seed = result.stage_ms(DEFAULT), result.stage_ms(SEED)
    parts = [
        f"analyse {median(ms.get('analyse', [0.0])):.0f} ms",
        f"strategies {median(ms.get('strategies', [0.0])):.0f} ms",
        f"complete (default) {median(ms.get(f'complete:{DEFAULT}', [0.0])):.0f} ms",
    ]
    if ms.get("workers"):
        parts.append(f"through the workers {median(ms['workers']):.0f} ms")
    big = Counter(v for a in result.asked for v in a.big)
    counts = [len(a.rankings.get(DEFAULT, [])) for a in result.asked]
    return [
        "### Cost of the rerank stage",
        "",
        f"Median rerank stage per question, in-process: learned ranker {stage:.1f} ms (read the candidates' "
        f"fields and cosines, compute the features, the model's predict) vs the seed's fallback {seed:.2f} ms, "
        f"i.e. **+{stage - seed:.1f} ms** at up to 300 candidates (the stage sees at most "
        "`TEMPR_RERANKER_MAX_CANDIDATES` candidates whatever the bank size; see the latency section for 10k facts).",
        "",
        f"Median per question: {', '.join(parts)}. Results per response (default): median "
        f"{median([float(c) for c in counts]) if counts else 0:.0f}; rankings re-read with max_tokens "
        f"{BIG_TOKENS:,} because packing left fewer than 50: {sum(big.values())}. LoCoMo ingest: "
        f"{result.ingest['facts']} observations ({result.ingest['inserted']} new this run, "
        f"{result.ingest['seconds']} s). Benchmark wall time {result.elapsed_s:.0f} s.",
        "",
        "![LoCoMo evidence recall@k](bench/plots/quality_recall.png)",
    ]


def render(result: QualityResult) -> str:
    lines = _intro(result) + _overall(result) + _per_fold(result) + _per_category(result) + _timing(result)
    return "\n".join(lines)
