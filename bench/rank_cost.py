"""What the learned ranker's rerank stage costs per recall, before and after its speed-up (timing only).

    .venv/bin/python -m bench.rank_cost [--repeats 40] [--write]

Wired into nothing else. The inputs are synthetic but shaped like a LoCoMo recall: 50 / 100 /
200 fused candidates, fact texts of about 20 words, ten facts per source chunk of about 300
words, one to three entity names each, most of them dated; the query asks "when" about a
named person, once without and once with a time window.

* ``features``: ``feature_matrix`` as first written (``tests/unit/rank_features_oracle.py``,
  loaded from its file: the test oracle) against ``tempr.core.rank_features.feature_array``.
* ``stage``: the rerank stage beside its SQL, with the shipped model and a store stub that
  hands back the rows at once. Before: the first features, rows as lists, trace rows built
  on every recall (as ``learned_scores`` did). After: ``tempr.recall.scoring.rerank`` itself.

Before and after run interleaved in one process, so load moves both; the load average is
printed beside the numbers. ``--write`` puts the table in BENCHMARKS.md (section rank_cost).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from bench import synthetic
from bench.metrics import median

ORACLE = Path(__file__).resolve().parents[1] / "tests" / "unit" / "rank_features_oracle.py"
FACTS_PER_CHUNK = 10
CHUNK_WORDS = 300


def oracle() -> ModuleType:
    """The first version of the features, from the tests (the bench must not import tests as a package)."""
    spec = importlib.util.spec_from_file_location("rank_features_oracle", ORACLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def units(n: int, seed: int = 0) -> tuple[list[dict[str, Any]], str, datetime]:
    """``n`` stored rows (as ``fetch_units`` returns them for the ranker), a query, its ``now``."""
    rng = random.Random(seed)
    pool = list(synthetic.facts(n + (n // FACTS_PER_CHUNK + 1) * 30))
    chunks: list[str] = []
    cursor = n
    while len(chunks) * FACTS_PER_CHUNK < n:
        words: list[str] = []
        while len(words) < CHUNK_WORDS:
            words.extend(pool[cursor]["text"].split())
            cursor += 1
        chunks.append(" ".join(words[:CHUNK_WORDS]))
    rows = []
    for i, fact in enumerate(pool[:n]):
        tail = pool[(i + 1) % n]["text"].split()[:6]
        dated = rng.random() < 0.85
        rows.append(
            {
                "id": f"u{i}",
                "text": f"{fact['text']} {' '.join(tail)}",
                "type": fact["fact_type"],
                "entities": list(fact["entities"]),
                "event_date": datetime.fromisoformat(fact["occurred_start"]) if dated else None,
                "proof_count": rng.choice((1, 1, 1, 2, 5)),
                "document_id": fact["document_id"],
                "chunk_id": f"c{i // FACTS_PER_CHUNK}",
                "chunk_text": chunks[i // FACTS_PER_CHUNK],
                "cosine": 0.75 - 0.5 * i / n + rng.uniform(-0.05, 0.05),
            }
        )
    who = rows[3]["entities"][0]
    latest = max(r["event_date"] for r in rows if r["event_date"])
    return rows, f"When did {who} start at the studio?", latest + timedelta(days=30)


def fused(rows: Sequence[dict[str, Any]], seed: int = 1) -> list[Any]:
    from tempr.core.types import FusedCandidate

    rng = random.Random(seed)
    out = []
    for i, row in enumerate(rows):
        ranks = {"semantic": i + 1} if i < 0.8 * len(rows) else {}
        for strategy in ("keyword", "graph", "temporal"):
            if rng.random() < 0.4:
                ranks[strategy] = rng.randint(1, len(rows))
        scores = {s: rng.uniform(0, 12) if s == "keyword" else rng.random() for s in ranks}
        out.append(FusedCandidate(row["id"], sum(1 / (60 + r) for r in ranks.values()), ranks, scores))
    return out


def window_around(rows: Sequence[dict[str, Any]]) -> Any:
    from tempr.core.types import TimeWindow

    at = rows[3]["event_date"] or datetime(2015, 6, 1, tzinfo=UTC)
    return TimeWindow(datetime(at.year, 1, 1, tzinfo=UTC), datetime(at.year, 12, 31, 23, 59, tzinfo=UTC), "year")


@contextmanager
def store_stub(rows: Sequence[dict[str, Any]]) -> Iterator[None]:
    """``recall_repo.fetch_units`` answering from memory, so only the stage's Python is timed."""
    from tempr.store import recall_repo

    table = {r["id"]: r for r in rows}
    real = recall_repo.fetch_units

    def fetch(_conn: Any, ids: Sequence[str], **_kw: Any) -> dict[str, dict[str, Any]]:
        return {i: table[i] for i in ids if i in table}

    recall_repo.fetch_units = fetch  # type: ignore[assignment]
    try:
        yield
    finally:
        recall_repo.fetch_units = real  # type: ignore[assignment]


class _Engine:
    @contextmanager
    def connect(self) -> Iterator[None]:
        yield None


def same_rows(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]]) -> bool:
    """Equal float for float, NaN where NaN."""
    return len(a) == len(b) and all(
        len(x) == len(y) and all(u == v or (math.isnan(u) and math.isnan(v)) for u, v in zip(x, y, strict=True))
        for x, y in zip(a, b, strict=True)
    )


def timed(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Median and minimum ms of each function (``name``, ``name_min``), calls interleaved, one warm-up each."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            started = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - started) * 1000)
    return {**{name: median(t) for name, t in times.items()}, **{f"{name}_min": min(t) for name, t in times.items()}}


def measure(sizes: Sequence[int] = (50, 100, 200), repeats: int = 40) -> list[dict[str, Any]]:
    from config.settings import Settings
    from tempr.core.rank_features import feature_array
    from tempr.core.rerank_scores import sigmoid
    from tempr.providers.reranker.learned import LearnedRanker
    from tempr.recall.context import RecallContext
    from tempr.recall.models import RecallRequest
    from tempr.recall.plan import QueryPlan
    from tempr.recall.rank_inputs import gather
    from tempr.recall.scoring import rerank

    old = oracle()
    ranker = LearnedRanker()
    ctx = RecallContext(_Engine(), None, Settings(), ranker=ranker)  # type: ignore[arg-type]
    results = []
    for n in sizes:
        rows, text, now = units(n)
        candidates = fused(rows)
        for with_window in (False, True):
            windows = [window_around(rows)] if with_window else []
            request = RecallRequest(query=text, query_timestamp=now)
            plan = QueryPlan(bank_id="b", request=request, embedding=[], budget=10, depth=1, now=now, windows=windows)

            def before(plan: QueryPlan = plan, candidates: list[Any] = candidates) -> Any:
                query, cands, _ = gather(plan, candidates, ctx)
                matrix = old.feature_matrix(query, cands)
                raw = ranker.score_rows(matrix)
                ids = [c.id for c in cands]
                trace = {
                    i: [None if math.isnan(v) else round(v, 6) for v in r] for i, r in zip(ids, matrix, strict=True)
                }
                return {i: sigmoid(r) for i, r in zip(ids, raw, strict=True)}, trace

            with store_stub(rows):
                query, cands, _ = gather(plan, candidates, ctx)
                assert same_rows(old.feature_matrix(query, cands), feature_array(query, cands).tolist())
                assert rerank(plan, candidates, ctx).scores == before()[0]
                got = timed(
                    {
                        "features_before": lambda q=query, c=cands: old.feature_matrix(q, c),
                        "features_after": lambda q=query, c=cands: feature_array(q, c),
                        "stage_before": before,
                        "stage_after": lambda plan=plan, fused=candidates: rerank(plan, fused, ctx),
                    },
                    repeats,
                )
            results.append({"candidates": n, "window": with_window, **got})
    return results


def render(results: Sequence[dict[str, Any]], load: tuple[float, float, float]) -> str:
    lines = [
        "## Learned ranker cost per recall (`python -m bench.rank_cost`)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on this machine ({os.cpu_count()} cores), in one process, "
        f"before and after interleaved; load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}. Synthetic "
        "candidates shaped like a LoCoMo recall (facts of ~20 words, 10 facts per ~300-word chunk, entities, dates). "
        "*Features*: `feature_matrix` as first written (the test oracle) vs now (same rows, checked in the run). "
        "*Stage*: the rerank stage beside its SQL (store stub, shipped model, sigmoid); before also built the "
        "trace rows on every recall, now only when a trace is asked for. The SQL is one statement now "
        "(units, entities, cosine and chunk texts; it was four: units, entities, cosines, chunks).",
        "",
        "Milliseconds per recall, median (minimum) over the runs; speed-up of the medians. On a busy "
        "2-core machine the longer calls are often preempted, so their medians swing between runs; the "
        "minima are the better guide to the cost on an idle one.",
        "",
        "| candidates | time window | features before | features after | speed-up | stage before | "
        "stage after | speed-up |",
        "|---:|:---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        cells = [f"{r[k]:.2f} ({r[k + '_min']:.2f})" for k in ("features_before", "features_after")]
        stage = [f"{r[k]:.2f} ({r[k + '_min']:.2f})" for k in ("stage_before", "stage_after")]
        lines.append(
            f"| {r['candidates']} | {'yes' if r['window'] else 'no'} | {cells[0]} | {cells[1]} | "
            f"{r['features_before'] / r['features_after']:.1f}x | {stage[0]} | {stage[1]} | "
            f"{r['stage_before'] / r['stage_after']:.1f}x |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--sizes", default="50,100,200")
    parser.add_argument("--write", action="store_true", help="write the table to BENCHMARKS.md")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    results = measure([int(s) for s in args.sizes.split(",")], args.repeats)
    load_after = os.getloadavg()
    load = tuple(max(a, b) for a, b in zip(load_before, load_after, strict=True))
    body = render(results, load)  # type: ignore[arg-type]
    print(body)
    if args.write:
        from bench.report import write_section

        write_section("rank_cost", body)


if __name__ == "__main__":
    main()
