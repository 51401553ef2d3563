"""Retrieval quality on LoCoMo: evidence recall@k of the default pipeline, the seed profile and baselines.

Every figure of the default pipeline is **cross-validated**: the learned ranker that ranks a
conversation's questions was trained on the other dev conversations only (leave one
conversation out), in-process and through the workers alike.

For every question (categories 1-4) the stages run once in-process (``analyse`` then
the four strategies); the fold models are trained on those candidates
(``bench.ranker_data`` / ``bench.ranker_train``); then every variant is completed from the
same strategy results, back to back, in an order that rotates from question to question, so
machine noise hits them alike:

* *default*: the learned ranker (this conversation's fold model), its score as the final
  score, token packing (``fuse_rerank_finish`` with the ``default`` profile);
* *seed profile*: the seed design exactly (``TEMPR_RECALL_PROFILE=seed``): RRF-derived
  fallback scores, the three boosts, packing;
* *semantic only* / *BM25 only*: the semantic (cosine) / keyword (BM25) strategy's own
  ranking; *RRF only*: the four strategies fused with RRF, nothing after;
* *learned ranker alone*: the fold model's order over the fused candidates, no packing.

The default pipeline is also asked through the workers (the Celery chord, via
``tempr.client``), the path users use, with a fleet per fold whose rerank worker loads that
fold's model. Evidence recall@k = for a question, the fraction of its evidence dia_ids found
among the dia_ids (``metadata.dia_id``) of the top-k results; averaged over questions. A
question whose packed list is shorter than 50 while more candidates exist is re-asked with
max_tokens 1,000,000 for its ranking (counted in the report).
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import locomo, report
from bench.metrics import KS, mean, recall_at_k
from bench.progress import bar, log

DEFAULT = "default"
SEED = "seed profile"
SEMANTIC = "semantic only"
BM25 = "BM25 only"
RRF = "RRF only"
STAGE = "learned ranker alone"
WORKERS = "default, through the workers"
VARIANTS: tuple[str, ...] = (DEFAULT, SEED, SEMANTIC, BM25, RRF, STAGE)
DRAGON = ("DRAGON (LoCoMo paper, 10 conversations)", {5: 49.6, 10: 57.1, 25: 66.0, 50: 71.1})
BIG_TOKENS = 1_000_000
MAX_TOKENS = 4096
DEFAULT_LOCOMO = Path(__file__).resolve().parents[1] / ".." / "shared" / "bench" / "locomo-dev"
FOLD_DIR = Path(__file__).resolve().parent / ".cache" / "folds"
RESULT_CACHE = Path(__file__).resolve().parent / ".cache" / "quality-result.pkl"


@dataclass
class QualityConfig:
    locomo_dir: Path = DEFAULT_LOCOMO
    conversations: Sequence[str] | None = None
    max_questions: int | None = None
    """Per conversation (the first N of categories 1-4), for smoke runs."""
    via_workers: bool = True
    in_flight: int = 4
    write: bool = True
    plots: bool = True
    section: str = "quality"


@dataclass
class Asked:
    question: locomo.Question
    rankings: dict[str, list[list[str]]] = field(default_factory=dict)
    windows: int = 0
    temporal_hits: int = 0
    big: set[str] = field(default_factory=set)
    ms: dict[str, float] = field(default_factory=dict)


@dataclass
class QualityResult:
    asked: list[Asked]
    conversations: list[locomo.Conversation]
    machine: dict[str, Any]
    elapsed_s: float
    ingest: dict[str, Any]
    fleet: list[str] = field(default_factory=list)
    workers_note: str = ""
    agreement: dict[str, Any] = field(default_factory=dict)
    folds: dict[str, int] = field(default_factory=dict)
    """Held-out conversation -> questions its fold model was trained on."""

    def variants(self) -> list[str]:
        names = list(VARIANTS)
        if any(WORKERS in a.rankings for a in self.asked):
            names.insert(0, WORKERS)
        return names

    def recall(self, variant: str, k: int, where: Callable[[Asked], bool] | None = None) -> tuple[float, int]:
        picked = [a for a in self.asked if variant in a.rankings and (where is None or where(a))]
        values = [recall_at_k(a.rankings[variant], a.question.evidence, k) for a in picked]
        return mean(values) * 100, len(values)

    def stage_ms(self, variant: str) -> float:
        values = [a.ms[f"rerank:{variant}"] for a in self.asked if f"rerank:{variant}" in a.ms]
        return statistics.median(values) if values else 0.0


# --- running ------------------------------------------------------------------------------------------


def ingest(conversations: list[locomo.Conversation], res: Any) -> dict[str, Any]:
    """Ingest each conversation's observations into its bank (idempotent: a complete bank is kept).

    A bank written by another embedder than the configured one is dropped and rebuilt: the
    benchmark measures the configured embedder (a bank otherwise keeps its own space)."""
    from bench.banks import delete_bank
    from tempr.ingest.facts import parse_array
    from tempr.ingest.pipeline import IngestDeps, ingest_facts
    from tempr.providers.embedder.spaces import space_of
    from tempr.store import ingest_repo
    from tempr.store.banks_repo import bank_space

    total, inserted, started = 0, 0, time.perf_counter()
    for conv in conversations:
        with res.engine.connect() as conn:
            held = bank_space(conn, conv.bank_id)
        if held is not None and held != space_of(res.settings.embedder):
            log(f"LoCoMo {conv.name}: bank holds {held} vectors; rebuilt with {res.settings.embedder}")
            delete_bank(res.engine, conv.bank_id)
        with res.engine.connect() as conn:
            present = ingest_repo.existing_fact_ids(conn, conv.bank_id, [f["id"] for f in conv.facts])
        new = [f for f in conv.facts if f["id"] not in present]
        total += len(conv.facts)
        if not new:
            continue
        locomo.add_entities(new, res.extractor.extract)
        deps = IngestDeps(res.engine, res.embedder, res.extractor, res.settings)
        rep = ingest_facts(conv.bank_id, parse_array(new), deps)
        inserted += rep.inserted
        log(f"ingested LoCoMo {conv.name}: {rep.inserted} observations in {rep.elapsed_s:.1f}s")
    _embed_chunks(conversations, res)
    return {"facts": total, "inserted": inserted, "seconds": round(time.perf_counter() - started, 1)}


def _embed_chunks(conversations: list[locomo.Conversation], res: Any) -> None:
    """Banks built before chunks kept vectors get them (chunk vectors are on unless configured off)."""
    from tempr.ingest.backfill import embed_missing_chunks
    from tempr.ingest.pipeline import IngestDeps
    from tempr.providers.entities import NoEntities

    if not res.settings.chunk_vectors:
        return
    deps = IngestDeps(res.engine, res.embedder, NoEntities(), res.settings)
    for conv in conversations:
        n = embed_missing_chunks(deps, conv.bank_id).get(conv.bank_id, 0)
        if n:
            log(f"LoCoMo {conv.name}: embedded {n} chunks stored without a vector")


def _request(conv: locomo.Conversation, q: locomo.Question, max_tokens: int = MAX_TOKENS) -> Any:
    from tempr.recall.models import RecallRequest

    return RecallRequest(query=q.question, budget="mid", max_tokens=max_tokens, query_timestamp=conv.query_timestamp)


def _ranking(response: Any) -> list[list[str]]:
    return [locomo.result_dia_ids(r.metadata) for r in response.results]


def _short(response: Any, bank_size: int) -> bool:
    """Packing cut the list below 50 while the bank had more to give."""
    return len(response.results) < 50 and len(response.results) < bank_size


@dataclass
class Prepared:
    """One question after analysis and the strategies: what every variant starts from."""

    conv: locomo.Conversation
    asked: Asked
    plan: Any
    results: list[Any]
    sample: Any


def prepare(conv: locomo.Conversation, q: locomo.Question, ctx: Any) -> Prepared:
    from bench.ranker_data import in_bank_space, sample_for
    from tempr.recall.pipeline import run_strategies
    from tempr.recall.plan import analyse

    asked = Asked(q)
    ctx = in_bank_space(ctx, conv.bank_id)
    t0 = time.perf_counter()
    plan = analyse(conv.bank_id, _request(conv, q), ctx)
    t1 = time.perf_counter()
    results = run_strategies(plan, ctx)
    asked.ms["analyse"] = (t1 - t0) * 1000
    asked.ms["strategies"] = (time.perf_counter() - t1) * 1000
    asked.windows = len(plan.windows)
    asked.temporal_hits = len(next(r for r in results if r.strategy.value == "temporal").hits)
    return Prepared(conv, asked, plan, results, sample_for(conv, q, plan, results, ctx))


def cached_samples(conversations: Sequence[locomo.Conversation], settings: Any) -> list[Any] | None:
    """Every question of these (whole) conversations from ``tempr ranker train``'s cache, if it is there.

    A run limited to N questions per conversation (``--questions``) still trains each fold model on
    every question of the other conversations, as the shipped model is trained.
    """
    from bench.ranker_data import cache_path

    path = cache_path(conversations, None, settings)
    if not path.exists():
        return None
    with path.open("rb") as fh:
        samples: list[Any] = pickle.load(fh)
    log(f"fold models train on the {len(samples)} cached questions of {path.name}")
    return samples


def fold_models(samples: Sequence[Any], names: Sequence[str]) -> tuple[dict[str, Path], dict[str, int]]:
    """Per conversation, a model trained on the other conversations (or the shipped one if there are none)."""
    from bench.ranker_train import USED_FEATURES, fit, save
    from tempr.providers.reranker.learned import DEFAULT_MODEL

    paths: dict[str, Path] = {}
    trained: dict[str, int] = {}
    for held in names:
        train = [s for s in samples if s.conversation != held]
        if not train:
            log(f"fold {held}: no other conversation to train on; the shipped model ranks it (not cross-validated)")
            paths[held], trained[held] = DEFAULT_MODEL, 0
            continue
        path = FOLD_DIR / f"ranker-without-{held}.txt"
        save(fit(train, USED_FEATURES), path)
        paths[held], trained[held] = path, len(train)
    return paths, trained


def _dia_rankings(prep: Prepared, ctx: Any) -> dict[str, list[list[str]]]:
    """The baselines that are a list the pipeline already has: one strategy's, or RRF's."""
    from tempr.core import rrf_fuse
    from tempr.store import recall_repo

    by_name = {r.strategy.value: r for r in prep.results}
    lists = {
        SEMANTIC: [h.id for h in by_name["semantic"].hits],
        BM25: [h.id for h in by_name["keyword"].hits],
        RRF: [c.id for c in rrf_fuse(prep.results)],
    }
    with ctx.engine.connect() as conn:
        units = recall_repo.fetch_units(conn, sorted({i for ids in lists.values() for i in ids}), with_entities=False)
    return {
        name: [locomo.result_dia_ids(units[i]["metadata"]) for i in ids if i in units] for name, ids in lists.items()
    }


def _complete(prep: Prepared, name: str, ctx: Any) -> None:
    """One pipeline variant (default or seed) through ``fuse_rerank_finish``, re-asked with a big budget if cut."""
    from tempr.recall.pipeline import fuse_rerank_finish

    timings: dict[str, float] = {}
    t = time.perf_counter()
    response = fuse_rerank_finish(prep.plan, prep.results, ctx, timings)
    if _short(response, len(prep.conv.facts)):
        big = prep.plan.model_copy(update={"request": prep.plan.request.model_copy(update={"max_tokens": BIG_TOKENS})})
        longer = fuse_rerank_finish(big, prep.results, ctx, {})
        if len(longer.results) > len(response.results):
            response = longer
            prep.asked.big.add(name)
    prep.asked.rankings[name] = _ranking(response)
    prep.asked.ms[f"complete:{name}"] = (time.perf_counter() - t) * 1000
    prep.asked.ms[f"rerank:{name}"] = timings.get("rerank", 0.0)


def run_variants(prep: Prepared, ctx: Any, fold_ctx: Any, rotation: int) -> None:
    from bench.ranker_train import USED_FEATURES, ranking

    seed_ctx = dataclasses.replace(
        ctx, ranker=None, settings=ctx.settings.model_copy(update={"recall_profile": "seed"})
    )
    steps: list[tuple[str, Callable[[], None]]] = [
        (DEFAULT, lambda: _complete(prep, DEFAULT, fold_ctx)),
        (SEED, lambda: _complete(prep, SEED, seed_ctx)),
        ("baselines", lambda: prep.asked.rankings.update(_dia_rankings(prep, ctx))),
        (
            STAGE,
            lambda: prep.asked.rankings.update(
                {STAGE: ranking(prep.sample, fold_ctx.ranker.score_rows, USED_FEATURES)}
            ),
        ),
    ]
    shift = rotation % len(steps)
    for _name, step in steps[shift:] + steps[:shift]:
        step()


def run(cfg: QualityConfig, fleet: Any = None) -> QualityResult:
    from bench import stack
    from tempr.providers.reranker.learned import LearnedRanker
    from workers.resources import get_resources, recall_context

    started = time.perf_counter()
    conversations = locomo.load(cfg.locomo_dir.resolve(), cfg.conversations)
    stack.services_up()
    res = get_resources()
    ctx = dataclasses.replace(
        recall_context(reranker=res.reranker),
        settings=res.settings.model_copy(update={"recall_profile": "default"}),
    )
    cached = cached_samples(conversations, ctx.settings)
    if cfg.max_questions is not None:
        for c in conversations:
            c.questions = c.questions[: cfg.max_questions]
    log(f"LoCoMo: {len(conversations)} conversations, {sum(len(c.questions) for c in conversations)} questions")
    ingested = ingest(conversations, res)
    pairs = [(c, q) for c in conversations for q in c.questions]
    prepared: list[Prepared] = []
    with bar(len(pairs), "quality: strategies", "q") as progress:
        for conv, q in pairs:
            prepared.append(prepare(conv, q, ctx))
            progress.update(1)
    paths, trained = fold_models(cached or [p.sample for p in prepared], [c.name for c in conversations])
    rankers = {name: LearnedRanker(path) for name, path in paths.items()}
    with bar(len(prepared), "quality: variants", "q") as progress:
        for i, prep in enumerate(prepared):
            run_variants(prep, ctx, dataclasses.replace(ctx, ranker=rankers[prep.conv.name]), i)
            progress.update(1)
    result = QualityResult([p.asked for p in prepared], conversations, report.machine(), 0.0, ingested)
    result.folds = trained
    if cfg.via_workers:
        _through_workers(cfg, pairs, result, paths, fleet)
    result.elapsed_s = time.perf_counter() - started
    return result


WORKER_TIMEOUT_S = 300.0
"""A generous per-request deadline: a fresh fleet loads its models on the first requests, on a busy machine."""


def _worker_request(conv: locomo.Conversation, q: locomo.Question, max_tokens: int = MAX_TOKENS) -> Any:
    return _request(conv, q, max_tokens).model_copy(update={"timeout_s": WORKER_TIMEOUT_S})


def ask_workers(
    conv: locomo.Conversation, q: locomo.Question, timeout: float = WORKER_TIMEOUT_S + 30
) -> tuple[list[list[str]], bool, float]:
    from tempr.client import recall_async
    from tempr.recall.models import RecallResponse

    t = time.perf_counter()
    response = RecallResponse.model_validate(recall_async(conv.bank_id, _worker_request(conv, q)).get(timeout=timeout))
    big = False
    if _short(response, len(conv.facts)):
        longer = RecallResponse.model_validate(
            recall_async(conv.bank_id, _worker_request(conv, q, BIG_TOKENS)).get(timeout=timeout)
        )
        if len(longer.results) > len(response.results):
            big, response = True, longer
    return _ranking(response), big, (time.perf_counter() - t) * 1000


def _fold_fleet(paths: dict[str, Path], name: str, fleet: Any) -> Any:
    """A running fleet for one fold: the given one (tests), or one started with the fold's model."""
    from contextlib import nullcontext

    from bench import stack

    if fleet is not None:
        return nullcontext(fleet)
    os.environ["TEMPR_RANKER_MODEL_PATH"] = str(paths[name])
    os.environ["TEMPR_RECALL_PROFILE"] = "default"
    return stack.bench_workers(stack.default_fleet(), exclusive=True)  # `services up`'s pools pause


def _through_workers(
    cfg: QualityConfig,
    pairs: list[tuple[locomo.Conversation, locomo.Question]],
    result: QualityResult,
    paths: dict[str, Path],
    fleet: Any = None,
) -> None:
    """Per fold, a fleet whose workers load that fold's model (``TEMPR_RANKER_MODEL_PATH``).

    A ``fleet`` passed in (the test session's worker) serves every fold with the model it
    loaded: only a single-conversation run (whose fold model is the shipped one) matches it.
    """
    from bench import stack
    from tempr.providers.reranker.learned import DEFAULT_MODEL

    if not stack.client_available():
        result.workers_note = "tempr.client is not available in this tree: the worker path was not measured."
        log(result.workers_note)
        return
    if fleet is not None and any(p != DEFAULT_MODEL for p in paths.values()):
        result.workers_note = "the workers loaded the shipped model, not the fold models: not cross-validated."
    stack.clear_cache([c.bank_id for c in result.conversations])
    by_key = {(a.question.conversation, a.question.index): a for a in result.asked}
    before = os.environ.get("TEMPR_RANKER_MODEL_PATH")
    try:
        with bar(len(pairs), "quality via workers", "q") as progress:
            for conv in result.conversations:
                with _fold_fleet(paths, conv.name, fleet) as running:
                    result.fleet = running.fleet()
                    ask_workers(conv, next(p[1] for p in pairs if p[0].name == conv.name))  # warm: models load
                    stack.clear_cache([conv.bank_id])

                    def one(pair: tuple[locomo.Conversation, locomo.Question]) -> None:
                        c, q = pair
                        ranking, big, ms = ask_workers(c, q)
                        a = by_key[(q.conversation, q.index)]
                        a.rankings[WORKERS] = ranking
                        a.ms["workers"] = ms
                        if big:
                            a.big.add(WORKERS)
                        progress.update(1)

                    with ThreadPoolExecutor(max_workers=cfg.in_flight) as pool:
                        list(pool.map(one, [p for p in pairs if p[0].name == conv.name]))
    finally:
        os.environ.pop("TEMPR_RECALL_PROFILE", None)
        if before is None:
            os.environ.pop("TEMPR_RANKER_MODEL_PATH", None)
        else:
            os.environ["TEMPR_RANKER_MODEL_PATH"] = before
    both = [a for a in result.asked if WORKERS in a.rankings]
    same = [a.rankings[WORKERS][:50] == a.rankings[DEFAULT][:50] for a in both]
    same_recall = [
        all(
            recall_at_k(a.rankings[WORKERS], a.question.evidence, k)
            == recall_at_k(a.rankings[DEFAULT], a.question.evidence, k)
            for k in KS
        )
        for a in both
    ]
    result.agreement = {"questions": len(both), "identical_top50": sum(same), "same_recall": sum(same_recall)}


def plot(result: QualityResult, path: Path) -> None:
    from bench import plots

    series = {v: [result.recall(v, k)[0] for k in KS] for v in result.variants()}
    series[DRAGON[0]] = [DRAGON[1][k] for k in KS]
    plots.recall_bars(series, KS, path, title=f"LoCoMo evidence recall@k ({len(result.asked)} questions)")


def main(cfg: QualityConfig) -> QualityResult:
    from bench.quality_render import render

    result = run(cfg)
    RESULT_CACHE.parent.mkdir(parents=True, exist_ok=True)
    with RESULT_CACHE.open("wb") as fh:  # re-render without rerunning: bench.quality_render.rerender()
        pickle.dump(result, fh)
    text = render(result)
    print(text)
    if cfg.plots:
        plot(result, report.REPO / "bench" / "plots" / "quality_recall.png")
    if cfg.write:
        report.write_section(cfg.section, text)
    return result
