"""Synthetic banks: deterministic, size-independent facts and queries (bench.synthetic, bench.embcache)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench import embcache, synthetic
from tempr.ingest.facts import parse_array


def test_same_seed_same_facts_and_other_seed_other_facts() -> None:
    a = list(synthetic.facts(200, seed=3))
    assert a == list(synthetic.facts(200, seed=3))
    assert [f["text"] for f in a] != [f["text"] for f in synthetic.facts(200, seed=4)]


def test_fact_i_does_not_depend_on_bank_size_or_start() -> None:
    big = list(synthetic.facts(300))
    assert list(synthetic.facts(100)) == big[:100]
    assert list(synthetic.facts(300, start=250)) == big[250:]


def test_facts_are_valid_dated_and_name_their_entities() -> None:
    facts = list(synthetic.facts(500))
    parsed = parse_array(facts)
    assert len({f.key for _, f in parsed}) == 500
    for fact in facts:
        assert fact["entities"], fact
        assert all(e in fact["text"] for e in fact["entities"]), fact
        assert fact["occurred_start"] <= fact["mentioned_at"]
    assert len({f["text"] for f in facts}) > 490


def test_people_pool_grows_with_the_bank() -> None:
    assert synthetic.people_in(1_000) == 50
    assert synthetic.people_in(100_000) == 5_000
    names = {synthetic.person_name(k) for k in range(60_000)}
    assert len(names) == 60_000


def test_queries_are_deterministic_and_name_people_of_that_bank() -> None:
    q = synthetic.queries(50, 10_000)
    assert q == synthetic.queries(50, 10_000)
    pool = {synthetic.person_name(k) for k in range(synthetic.people_in(10_000))}
    with_person = [x for x in q if any(p in x for p in pool)]
    assert with_person


def test_cached_embedder_uses_the_table_and_falls_back_for_misses() -> None:
    calls: list[list[str]] = []

    class Model:
        def embed(self, texts):
            calls.append(list(texts))
            return np.full((len(texts), 384), 0.5, dtype=np.float32)

    table = {"known": np.ones(384, dtype=np.float32)}
    emb = embcache.CachedEmbedder(table, Model, "fake")
    out = emb.embed(["known", "new", "known"])
    assert out.shape == (3, 384)
    assert (out[0] == 1).all() and (out[2] == 1).all() and (out[1] == 0.5).all()
    assert calls == [["new"]]
    assert (emb.hits, emb.misses) == (2, 1)
    emb.embed(["known"])
    assert calls == [["new"]]  # all hits: the model is not asked


def test_embedding_cache_writes_chunks_once_and_reuses_them(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(embcache, "CHUNK", 20)
    seen: list[int] = []

    class Model:
        def embed(self, texts):
            seen.append(len(texts))
            return np.stack([np.full(384, len(t), dtype=np.float32) for t in texts])

    cache = embcache.EmbeddingCache(tmp_path, Model)
    first = cache.vectors(30, seed=1)
    assert first.shape == (30, 384) and sum(seen) == 40  # two chunks of 20
    assert len(list(tmp_path.glob("*.npy"))) == 2
    again = embcache.EmbeddingCache(tmp_path, Model).vectors(25, seed=1)
    assert sum(seen) == 40 and np.array_equal(again, first[:25])
    texts = [f["text"] for f in synthetic.facts(30, seed=1)]
    assert first[7, 0] == len(texts[7])
