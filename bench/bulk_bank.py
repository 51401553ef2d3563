"""Large synthetic banks built in bulk: facts first, then the bank's own vector index, then semantic links.

``tempr ingest`` asks an HNSW index for each new fact's neighbours, a fact at a time, inside the
publish's one transaction; past a few hundred thousand facts that is 150-190 facts/s on two
cores (BENCHMARKS.md, "One million facts"), so a 1,000,000-fact bank would take about two hours
to publish. The scale benchmark needs the finished bank, not the ingest, so this builds the same
rows in another order:

1. the facts are written by the product's own ``ingest_facts`` with semantic linking switched
   off: units, entities, temporal links and BM25 statistics are exactly what ingest writes (a new
   bank's memories enter no HNSW index: ``ingest_repo.enter_ann_index``);
2. the bank's own index is built as ingest's follow-up task builds it (``bank_index.build``,
   ``CREATE INDEX CONCURRENTLY``, in bulk and in parallel);
3. each fact gets its ``semantic_link_top_k`` nearest other facts of the bank with cosine >= the
   threshold, by the same HNSW query ingest uses (``LINK_EF_SEARCH``, iterative scan), on two
   connections at once.

Measured here for 10k + 100k + 1M facts (2026-12-02, sharing the 2-core machine with other work,
one shared index then): loading 67 min (embedding 900,000 new texts dominated), the index 7 min
(1.1M vectors), the links 3 min (10k), 7 min (100k) and about 50 min (1M). So it is not much
quicker than ingest's publish on this machine: the link walks, one per fact, cost about what they
cost inside a publish. What it buys is that every phase resumes where a stopped build left it (a
publish is one transaction, and two stopped 1M publishes left nothing).

Since 2026-12-06 a bank of ``IVF_MIN_FACTS`` or more is linked by ``bench.ivf_links`` instead:
exact top k within an inverted-file partition of the bank's vectors, 10.5 minutes for the 1M bank
(8,472,600 links, 8.5 a fact against 8.7 by the HNSW pass; 85 % of the exact links, where HNSW's
walk found about 98 %). The walk's cost depends on how many links a fact has, which is alike.

One difference from ingest: there a fact links to its nearest among the facts written before
it and in its batch; here among every fact of the bank. The count of links per fact is the same
(at most ``top_k``), and the graph walk follows links both ways, so the walk's cost is alike.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text

from bench import banks, embcache, ivf_links, synthetic
from bench.progress import bar, log
from tempr.store import bank_index, links_repo
from tempr.store.recall_filters import set_ann_scan

LINK_BLOCK = 1_000
IVF_MIN_FACTS = 500_000
"""Banks this large are linked by ``bench.ivf_links`` (minutes) instead of one HNSW walk a fact
(about 50 minutes at 1M facts here); the HNSW pass after it only fills blocks left unlinked."""


@dataclass
class BulkBuild:
    """What one call did, phase by phase (seconds; 0 where a phase had nothing to do)."""

    builds: dict[int, banks.BankBuild] = field(default_factory=dict)
    load_s: float = 0.0
    link_s: dict[int, float] = field(default_factory=dict)
    links: dict[int, int] = field(default_factory=dict)


def link_bank(engine: Any, bank: str, settings: Any, threads: int = 2) -> tuple[float, int]:
    """Semantic links for every fact of ``bank`` (blocks already linked are skipped: a rerun resumes)."""
    blocks = _blocks(engine, bank)
    started, added = time.perf_counter(), 0
    with bar(sum(map(len, blocks)), f"semantic links {bank}", "fact") as progress, ThreadPoolExecutor(threads) as pool:
        for n_block, n_links in pool.map(lambda b: _link_block(engine, bank, b, settings), blocks):
            added += n_links
            progress.update(n_block)
    return time.perf_counter() - started, added


def fully_linked(engine: Any, bank: str) -> bool:
    """Whether every block of ``LINK_BLOCK`` facts (in id order) holds a semantic link already."""
    with engine.connect() as conn:
        return all(_block_linked(conn, block) for block in _blocks(engine, bank))


def _blocks(engine: Any, bank: str) -> list[list[str]]:
    """The bank's memory ids in id order, ``LINK_BLOCK`` at a time: the unit a link pass resumes by."""
    with engine.connect() as conn:
        ids = [
            r[0]
            for r in conn.execute(text("SELECT id::text FROM memory_units WHERE bank_id = :b ORDER BY id"), {"b": bank})
        ]
    return [ids[i : i + LINK_BLOCK] for i in range(0, len(ids), LINK_BLOCK)]


def _block_linked(conn: Any, unit_ids: Sequence[str]) -> bool:
    return bool(
        conn.execute(
            text(
                "SELECT EXISTS (SELECT 1 FROM memory_links WHERE from_unit_id = ANY(CAST(:ids AS uuid[])) "
                "AND link_type = 'semantic')"
            ),
            {"ids": list(unit_ids)},
        ).scalar_one()
    )


def _link_block(engine: Any, bank: str, unit_ids: Sequence[str], settings: Any) -> tuple[int, int]:
    top_k, threshold = settings.semantic_link_top_k, settings.semantic_link_threshold
    with engine.begin() as conn:
        if _block_linked(conn, unit_ids) or top_k <= 0:
            return len(unit_ids), 0
        found = nearest_in_bank(conn, bank, unit_ids, threshold=threshold, top_k=top_k)
        return len(unit_ids), links_repo.insert_links(conn, "semantic", found)


def nearest_in_bank(
    conn: Any, bank: str, unit_ids: Sequence[str], *, threshold: float, top_k: int
) -> list[tuple[str, str, float]]:
    """(unit, neighbour, cosine) for each unit's ``top_k`` nearest other units of the bank.

    The query of ``links_repo.existing_semantic_candidates`` (HNSW walk of breadth
    ``LINK_EF_SEARCH``, iterative scan, no sort node), with the units read from the bank itself;
    exact, as there, for a bank too small to be in the HNSW index.
    """
    indexed = not links_repo.exact_link_search(conn, bank)
    own = bank_index.bank_search(conn, bank).own_index
    index = bank_index.bank_clause(bank) if own else "m.ann_indexed"  # as links_repo
    if indexed:
        set_ann_scan(conn, max(top_k, links_repo.LINK_EF_SEARCH))
    order = "m.embedding <=> n.embedding" if indexed else "(m.embedding <=> n.embedding) + 0"
    with links_repo.sorting_off(conn) if indexed else nullcontext():
        rows = conn.execute(
            text(f"""
            SELECT n.id::text, nb.id::text, nb.dist
            FROM memory_units n
            CROSS JOIN LATERAL (
                SELECT m.id, m.embedding <=> n.embedding AS dist
                FROM memory_units m
                WHERE m.bank_id = :b{f" AND {index}" if indexed else ""} AND m.id <> n.id
                ORDER BY {order}
                LIMIT :k
            ) nb
            WHERE n.id = ANY(CAST(:ids AS uuid[])) AND nb.dist <= 1.0 - :threshold
            """),
            {"b": bank, "k": top_k, "threshold": threshold, "ids": list(unit_ids)},
        ).all()
    return [(unit, other, min(1.0, 1.0 - float(dist))) for unit, other, dist in rows]


def ensure_banks(sizes: Sequence[int], res: Any, cache: embcache.EmbeddingCache, seed: int) -> BulkBuild:
    """Synthetic banks of ``sizes`` facts, complete with index and links; only missing work is done."""
    out = BulkBuild()
    unlinked = res.settings.model_copy(update={"semantic_link_top_k": 0})
    missing = [n for n in sorted(sizes) if banks.unit_count(res.engine, banks.bank_id(n, seed)) < n]
    started = time.perf_counter()
    for n in sorted(sizes):
        out.builds[n] = banks.ensure_bank(n, res, cache, seed=seed, settings=unlinked)
    out.load_s = time.perf_counter() - started if missing else 0.0
    out.builds = {n: banks.ensure_own_index(res, b) for n, b in out.builds.items()}  # the links walk it
    for n in sorted(sizes):
        bank = banks.bank_id(n, seed)
        if n >= IVF_MIN_FACTS and not fully_linked(res.engine, bank):
            out.link_s[n], out.links[n], _, _ = ivf_links.link_bank(res.engine, bank, res.settings)
        out_s, out_n = link_bank(res.engine, bank, res.settings)  # skips linked blocks
        out.link_s[n], out.links[n] = out.link_s.get(n, 0.0) + out_s, out.links.get(n, 0) + out_n
        if out.links[n]:
            log(f"{bank}: {out.links[n]:,} semantic links in {out.link_s[n]:.0f} s")
    with res.engine.connect() as conn:
        conn.execute(text("ANALYZE memory_links"))
        conn.commit()
    return out


def main(sizes: Sequence[int], seed: int = synthetic.DEFAULT_SEED) -> BulkBuild:
    from bench import stack
    from workers.resources import get_resources

    stack.services_up()
    res = get_resources()
    return ensure_banks(sizes, res, banks.make_cache(res), seed)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", help="comma-separated bank sizes, e.g. 10000,100000,1000000")
    parser.add_argument("--seed", type=int, default=synthetic.DEFAULT_SEED)
    args = parser.parse_args()
    built = main([int(s) for s in args.sizes.split(",")], args.seed)
    print(built)
