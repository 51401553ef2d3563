"""BM25 at 10k / 100k / 1M facts: every posting scored, against top k with term bounds, in one run.

``python -m bench.bm25_scale [--sizes 10000,100000,1000000] [--queries 40] [--no-write]``

The keyword strategy (and the graph strategy's keyword seeds) grew linearly with the bank:
188 ms at 100k facts, 2,066 ms at 1M (BENCHMARKS.md, "Scale"), because every posting of every
query word was scored, and a common word ("moved", a year, a first name) has postings in a
good share of the bank. ``tempr.core.bm25_bounds`` proves when the memories holding only
such words cannot reach the top k and skips them. This measures both on the same banks,
query by query, the two orders alternated, and checks that the answers are identical.

The banks are the scale benchmark's synthetic facts, written by ``ingest_facts`` into a
database of their own (``tempr_bm25`` in the bench cluster, no HNSW index, hashed word
vectors from ``FakeEmbedder``): only the text side matters here, and a million real
embeddings would take an hour. Resumable: a rerun ingests only what is missing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sqlalchemy import make_url, text

from bench import banks, embcache, report, synthetic
from bench.progress import bar, log
from tempr.core.bm25_bounds import MIN_POSTINGS

DATABASE = "tempr_bm25"
SECTION = "bm25_scale"
LIMITS = {"budget mid (300)": 300, "graph seeds (10)": 10}
NEVER = 10**18  # min_postings that never prunes: every posting scored, one statement


def database(base_url: str) -> str:
    """The bench cluster's ``tempr_bm25`` database, created and migrated if missing."""
    from tempr.store.engine import make_engine
    from tempr.store.migrate import upgrade

    url = make_url(base_url)
    admin = make_engine(base_url)
    try:
        with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            if not conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :d"), {"d": DATABASE}).first():
                conn.execute(text(f'CREATE DATABASE "{DATABASE}"'))
    finally:
        admin.dispose()
    target = url.set(database=DATABASE).render_as_string(hide_password=False)
    upgrade(target)
    return target


def build(url: str, sizes: list[int], seed: int) -> Any:
    from config.settings import get_settings
    from tempr.providers.embedder.fake import FakeEmbedder
    from tempr.providers.entities import make_entity_extractor
    from tempr.store.engine import make_engine

    settings = get_settings()
    engine = make_engine(url)
    cache = embcache.EmbeddingCache(embcache.DEFAULT_DIR, FakeEmbedder, FakeEmbedder.space)
    res = SimpleNamespace(
        engine=engine,
        embedder=FakeEmbedder(),
        extractor=make_entity_extractor(settings.entity_extraction),
        settings=settings.model_copy(update={"semantic_link_top_k": 0}),
    )
    for n in sizes:
        banks.ensure_bank(n, res, cache, seed=seed)
    with engine.connect() as conn:
        conn.execute(text("ANALYZE memory_units"))
        conn.execute(text("ANALYZE bm25_terms"))
        conn.execute(text("ANALYZE bm25_postings"))
        conn.commit()
    return engine


def measure(engine: Any, bank: str, queries: list[str], limit: int) -> dict[str, Any]:
    """Per query: the full statement and the bounded search, alternately first; answers compared."""
    from tempr.store.keyword_repo import bm25_top
    from tempr.store.recall_filters import Filters

    full_ms, bounded_ms, pruned, differ = [], [], 0, 0
    with engine.connect() as conn:
        for q in queries[:2]:  # warm the buffers for both
            bm25_top(conn, q, Filters(bank), limit)
        for j, q in enumerate(queries):
            runs = {}
            for kind in ("full", "bounded") if j % 2 == 0 else ("bounded", "full"):
                t = time.perf_counter()
                hits, info = bm25_top(
                    conn, q, Filters(bank), limit, min_postings=NEVER if kind == "full" else MIN_POSTINGS
                )
                runs[kind] = ((time.perf_counter() - t) * 1000, hits, info)
            full_ms.append(runs["full"][0])
            bounded_ms.append(runs["bounded"][0])
            pruned += runs["bounded"][2]["scored"] != "all postings"
            differ += runs["full"][1] != runs["bounded"][1]
    return {
        "full_p50": statistics.median(full_ms),
        "full_p95": _p95(full_ms),
        "bounded_p50": statistics.median(bounded_ms),
        "bounded_p95": _p95(bounded_ms),
        "pruned": pruned,
        "differ": differ,
        "queries": len(queries),
    }


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def render(results: dict[str, dict[int, dict[str, Any]]], sizes: list[int], queries: int) -> str:
    lines = [
        "## BM25 at scale: every posting scored vs top k with term bounds (`python -m bench.bm25_scale`)",
        "",
        f"{report.machine_line()} {queries} synthetic questions per size (the scale benchmark's), both ways per question, "
        "the order alternated; *same answers* counts questions whose hits and scores were identical.",
        "",
    ]
    for label, per_size in results.items():
        rows = []
        for n in sizes:
            r = per_size[n]
            rows.append(
                [
                    f"{n:,}",
                    report.fmt(r["full_p50"]),
                    report.fmt(r["full_p95"]),
                    report.fmt(r["bounded_p50"]),
                    report.fmt(r["bounded_p95"]),
                    f"{r['full_p50'] / max(r['bounded_p50'], 1e-9):.1f}x",
                    f"{r['pruned']} / {r['queries']}",
                    f"{r['queries'] - r['differ']} / {r['queries']}",
                ]
            )
        lines += [
            f"### {label}",
            "",
            report.table(
                [
                    "facts",
                    "all postings p50 ms",
                    "p95",
                    "bounded p50 ms",
                    "p95",
                    "speed-up (p50)",
                    "pruned",
                    "same answers",
                ],
                rows,
            ),
            "",
        ]
        if len(sizes) > 1:
            a, z = sizes[-2], sizes[-1]
            lines.append(
                f"Growth {a:,} → {z:,} facts: all postings {per_size[z]['full_p50'] / per_size[a]['full_p50']:.1f}x, "
                f"bounded {per_size[z]['bounded_p50'] / per_size[a]['bounded_p50']:.1f}x (p50)."
            )
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=synthetic.DEFAULT_SEED)
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))

    from bench import stack

    endpoints = stack.services_up()
    assert endpoints.database_url is not None
    engine = build(database(endpoints.database_url), sizes, args.seed)
    results: dict[str, dict[int, dict[str, Any]]] = {label: {} for label in LIMITS}
    with bar(len(sizes) * len(LIMITS), "measure", "set") as progress:
        for n in sizes:
            questions = synthetic.queries(args.queries, n, args.seed)
            for label, limit in LIMITS.items():
                results[label][n] = measure(engine, banks.bank_id(n, args.seed), questions, limit)
                log(f"{n:,} facts, {label}: {results[label][n]}")
                progress.update(1)
    body = render(results, sizes, args.queries)
    print(body)
    if not args.no_write:
        report.write_section(SECTION, body, Path(report.DEFAULT_PATH))


if __name__ == "__main__":
    main()
