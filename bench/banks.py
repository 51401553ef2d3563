"""Synthetic banks in the database: build (or find complete) a bank of n generated facts.

Ingest runs in-process through ``ingest_facts`` in batches (one transaction each),
with a ``CachedEmbedder`` so the real model only runs for facts not yet cached, and
with each fact's entities given by the generator (no NER). A bank that already holds
all its facts is reused as it is: reruns skip the ingest.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import text

from bench import embcache, synthetic
from bench.progress import bar, log
from tempr.providers.embedder.spaces import space_of

BATCH = 2000


def bank_id(n: int, seed: int = synthetic.DEFAULT_SEED) -> str:
    label = f"{n // 1000}k" if n % 1000 == 0 else str(n)
    return f"bench-syn-g{synthetic.GENERATOR_VERSION}-s{seed}-{label}"


@dataclass
class BankBuild:
    bank_id: str
    n: int
    inserted: int
    ingest_s: float
    embed_s: float
    embedded: int
    own_index_s: float = 0.0
    """Seconds this call spent building the bank's own HNSW index (0: none needed, or built before)."""

    @property
    def facts_per_s(self) -> float:
        return self.inserted / self.ingest_s if self.ingest_s > 0 and self.inserted else float("nan")


def unit_count(engine: Any, bank: str) -> int:
    with engine.connect() as conn:
        row = conn.execute(text("SELECT count(*) FROM memory_units WHERE bank_id = :b"), {"b": bank}).scalar_one()
    return int(row)


def delete_bank(engine: Any, bank: str) -> None:
    from tempr.store import ingest_repo

    with engine.begin() as conn:
        ingest_repo.delete_bank(conn, bank)


def make_cache(res: Any) -> embcache.EmbeddingCache:
    return embcache.EmbeddingCache(embcache.DEFAULT_DIR, lambda: res.embedder, space_of(res.settings.embedder))


def ensure_own_index(res: Any, build: BankBuild) -> BankBuild:
    """The bank's own HNSW index, as ingest would queue it (``tempr.store.bank_index``), built here
    so that a benchmark's first recall does not meet a bank whose index is still being built."""
    from tempr.store import bank_index

    seconds = bank_index.build(res.engine, build.bank_id)
    if seconds is None:
        return build
    log(f"{build.bank_id}: own HNSW index built in {seconds:.1f} s")
    return replace(build, own_index_s=seconds)


def ensure_bank(
    n: int,
    res: Any,
    cache: embcache.EmbeddingCache,
    *,
    seed: int = synthetic.DEFAULT_SEED,
    bank: str | None = None,
    start: int = 0,
    force: bool = False,
    settings: Any = None,
) -> BankBuild:
    """Bank of synthetic facts start..n-1; ingest whatever is missing. Returns what this call did.

    Streams one embedding-cache chunk (10,000 facts) at a time, so memory stays flat at any
    size (a 1,000,000-fact bank never holds more than two chunks), and embeds the next chunk
    on a thread while this one is written: ONNX Runtime releases the GIL, so the model and
    PostgreSQL work at once. Ingest is idempotent by fact id, so an interrupted build resumes:
    facts already in the bank are skipped after one id lookup per batch. ``settings``: ingest's
    settings if not the process's (``bench.bulk_bank`` writes without semantic links).
    """
    from tempr.ingest.facts import parse_array
    from tempr.ingest.pipeline import IngestDeps, ingest_facts

    bank = bank or bank_id(n, seed)
    want = n - start
    have = 0 if force else unit_count(res.engine, bank)
    if have >= want:
        return BankBuild(bank, want, 0, 0.0, 0.0, 0)
    before_embed, before_embedded = cache.embed_s, cache.embedded
    inserted, ingest_s = 0, 0.0
    first, last = start // embcache.CHUNK, -(-n // embcache.CHUNK)
    log(f"ingesting {want:,} synthetic facts into {bank} ({have:,} already there)")
    with ThreadPoolExecutor(1, thread_name_prefix="embed-ahead") as ahead, bar(want, f"ingest {bank}", "fact") as b:
        pending = ahead.submit(cache.chunk, seed, first)
        for c in range(first, last):
            vectors = pending.result()
            if c + 1 < last:
                pending = ahead.submit(cache.chunk, seed, c + 1)
            lo, hi = max(start, c * embcache.CHUNK), min(n, (c + 1) * embcache.CHUNK)
            facts = list(synthetic.facts(hi, seed, start=lo))
            table = vectors[lo - c * embcache.CHUNK : hi - c * embcache.CHUNK]
            embedder = embcache.CachedEmbedder.for_facts(
                [f["text"] for f in facts], table, lambda: res.embedder, cache.space
            )
            deps = IngestDeps(res.engine, embedder, res.extractor, settings or res.settings)
            for a in range(0, len(facts), BATCH):
                batch = parse_array(facts[a : a + BATCH])
                t = time.perf_counter()
                report = ingest_facts(bank, batch, deps)
                ingest_s += time.perf_counter() - t
                inserted += report.inserted
                b.update(len(batch))
    return BankBuild(bank, want, inserted, ingest_s, cache.embed_s - before_embed, cache.embedded - before_embedded)
