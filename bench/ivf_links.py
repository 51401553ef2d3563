"""Semantic links for a large synthetic bank in minutes, from an inverted-file partition of its vectors.

``bench.bulk_bank`` links a bank one fact at a time through the HNSW index, as ingest does: about
3 ms a fact on two cores, so 50-60 minutes for a 1,000,000-fact bank, more than a session can
spare after the load and the index. The scale benchmark needs the links to exist (the graph
walk reads them), not to have been found by that index, so this finds the same kind of links
another way, in bulk:

1. the bank's vectors are read once (unit length, float32: 1.5 GB at 1M);
2. spherical k-means on a sample puts them in ``lists`` lists (about 1,000 facts a list);
3. for every list, its facts are compared exactly (one matrix product) with the facts of the
   ``probes`` lists whose centroids are nearest its own, and each fact keeps its ``top_k``
   nearest other facts with cosine >= the threshold, as ingest's link query does;
4. the links are written with ``links_repo.insert_links`` (ON CONFLICT DO NOTHING, so facts
   the HNSW pass already linked keep their links and a rerun adds nothing).

Like the HNSW walk (``LINK_EF_SEARCH`` 64 found 98.4 % of the exact links), this is approximate:
a neighbour in a list that was not probed is missed. ``--check N`` measures that share against
brute force over the whole bank for N facts. The count of links per fact is what the graph
walk's cost depends on, and it is bounded by ``top_k`` either way.

``python -m bench.ivf_links BANK [--lists 1000] [--probes 6] [--check 200]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from sqlalchemy import text

from bench.progress import bar, log
from tempr.store import links_repo

READ_BATCH = 50_000


def read_vectors(engine: Any, bank: str) -> tuple[list[str], np.ndarray]:
    """The bank's memory ids and unit-length float32 vectors, in id order."""
    ids: list[str] = []
    chunks: list[np.ndarray] = []
    with engine.connect() as conn:
        total = int(
            conn.execute(text("SELECT count(*) FROM memory_units WHERE bank_id = :b"), {"b": bank}).scalar_one()
        )
        result = conn.execution_options(stream_results=True, yield_per=READ_BATCH).execute(
            text("SELECT id::text, embedding FROM memory_units WHERE bank_id = :b ORDER BY id"), {"b": bank}
        )
        with bar(total, f"read vectors {bank}", "fact") as progress:
            for part in result.partitions(READ_BATCH):
                ids.extend(r[0] for r in part)
                chunks.append(np.asarray([_array(r[1]) for r in part], dtype=np.float32))
                progress.update(len(part))
    vectors = np.concatenate(chunks) if chunks else np.zeros((0, 384), np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return ids, vectors


def _array(value: Any) -> np.ndarray:
    """A vector as psycopg returns it (pgvector's ``Vector``/``HalfVector``, or an array)."""
    return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, dtype=np.float32)


def nearest_centroids(vectors: np.ndarray, centroids: np.ndarray, n: int, block: int = 50_000) -> np.ndarray:
    """Each row's ``n`` nearest centroids by cosine, nearest first."""
    out = np.empty((len(vectors), n), dtype=np.int32)
    for start in range(0, len(vectors), block):
        sims = vectors[start : start + block] @ centroids.T
        top = (
            np.argpartition(-sims, n - 1, axis=1)[:, :n]
            if n < sims.shape[1]
            else np.tile(np.arange(sims.shape[1]), (len(sims), 1))
        )
        order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1)
        out[start : start + block] = np.take_along_axis(top, order, axis=1)
    return out


def train_centroids(
    vectors: np.ndarray, lists: int, *, seed: int = 7, sample: int = 100_000, rounds: int = 8
) -> np.ndarray:
    """Spherical k-means on a sample: centroids of unit length."""
    rng = np.random.default_rng(seed)
    pick = vectors[rng.choice(len(vectors), min(sample, len(vectors)), replace=False)]
    centroids = pick[rng.choice(len(pick), lists, replace=False)].copy()
    for _ in range(rounds):
        owner = nearest_centroids(pick, centroids, 1)[:, 0]
        sums = np.zeros_like(centroids)
        np.add.at(sums, owner, pick)
        filled = np.linalg.norm(sums, axis=1) > 0
        centroids[filled] = sums[filled] / np.linalg.norm(sums[filled], axis=1, keepdims=True)
    return centroids


def list_links(
    vectors: np.ndarray, ids: list[str], members: np.ndarray, pool: np.ndarray, *, top_k: int, threshold: float
) -> list[tuple[str, str, float]]:
    """For each fact of ``members``, its ``top_k`` nearest facts of ``pool`` (itself excluded) at cosine >= threshold."""
    sims = vectors[members] @ vectors[pool].T
    sims[pool[None, :] == members[:, None]] = -2.0
    k = min(top_k, sims.shape[1])
    top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    found = []
    for row, cols in enumerate(top):
        for col in cols:
            cos = float(sims[row, col])
            if cos >= threshold:
                found.append((ids[members[row]], ids[pool[col]], min(1.0, cos)))
    return found


def links(
    vectors: np.ndarray, ids: list[str], *, lists: int, probes: int, top_k: int, threshold: float
) -> Iterator[tuple[int, list[tuple[str, str, float]]]]:
    """(facts done, their links) list by list."""
    centroids = train_centroids(vectors, lists)
    owner = nearest_centroids(vectors, centroids, 1)[:, 0]
    neighbours = nearest_centroids(centroids, centroids, min(probes, lists))
    by_list = [np.flatnonzero(owner == c) for c in range(lists)]
    for c in range(lists):
        members = by_list[c]
        if len(members):
            pool = np.concatenate([by_list[n] for n in neighbours[c]])
            yield len(members), list_links(vectors, ids, members, pool, top_k=top_k, threshold=threshold)


def link_bank(
    engine: Any, bank: str, settings: Any, *, lists: int = 1000, probes: int = 6
) -> tuple[float, int, np.ndarray, list[str]]:
    """Write every fact's semantic links; returns (seconds, links added, vectors, ids)."""
    started = time.perf_counter()
    ids, vectors = read_vectors(engine, bank)
    lists = max(1, min(lists, len(ids) // 50 or 1))
    log(f"{bank}: {len(ids):,} vectors read in {time.perf_counter() - started:.0f} s; partitioning into {lists} lists")

    def write(found: list[tuple[str, str, float]]) -> int:
        with engine.begin() as conn:
            return links_repo.insert_links(conn, "semantic", found)

    added = 0
    with bar(len(ids), f"IVF semantic links {bank}", "fact") as progress, ThreadPoolExecutor(1) as writer:
        pending = []
        for done, found in links(
            vectors,
            ids,
            lists=lists,
            probes=probes,
            top_k=settings.semantic_link_top_k,
            threshold=settings.semantic_link_threshold,
        ):
            pending.append(writer.submit(write, found))
            progress.update(done)
        added = sum(f.result() for f in pending)
    with engine.connect() as conn:
        conn.execute(text("ANALYZE memory_links"))
        conn.commit()
    return time.perf_counter() - started, added, vectors, ids


def check(vectors: np.ndarray, ids: list[str], engine: Any, bank: str, settings: Any, n: int) -> float:
    """Share of the exact top-k links (brute force over the bank) that the bank holds, for ``n`` facts."""
    rng = np.random.default_rng(11)
    sample = rng.choice(len(ids), min(n, len(ids)), replace=False)
    exact = list_links(
        vectors,
        ids,
        sample,
        np.arange(len(ids)),
        top_k=settings.semantic_link_top_k,
        threshold=settings.semantic_link_threshold,
    )
    with engine.connect() as conn:
        held = {
            (a, b)
            for a, b in conn.execute(
                text(
                    "SELECT from_unit_id::text, to_unit_id::text FROM memory_links "
                    "WHERE link_type = 'semantic' AND from_unit_id = ANY(CAST(:ids AS uuid[]))"
                ),
                {"ids": [ids[i] for i in sample]},
            )
        }
    return sum((a, b) in held for a, b, _ in exact) / max(1, len(exact))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bank")
    parser.add_argument("--lists", type=int, default=1000)
    parser.add_argument("--probes", type=int, default=6)
    parser.add_argument(
        "--check", type=int, default=100, help="facts whose links are checked against brute force (0: none)"
    )
    args = parser.parse_args()

    from bench import stack
    from workers.resources import get_resources

    stack.services_up()
    res = get_resources()
    seconds, added, vectors, ids = link_bank(res.engine, args.bank, res.settings, lists=args.lists, probes=args.probes)
    log(f"{args.bank}: {added:,} semantic links added in {seconds:.0f} s")
    if args.check:
        log(
            f"{args.bank}: {check(vectors, ids, res.engine, args.bank, res.settings, args.check):.1%} of the exact links held"
        )


if __name__ == "__main__":
    main()
