"""The scale benchmark's bulk bank builder writes what ingest writes, with exact semantic links.

``bench.bulk_bank`` loads the facts with ingest's own code minus semantic linking, builds the
bank's own HNSW index and then links every fact to its nearest neighbours through it. Against
the real PostgreSQL: the units, entities and temporal links equal a bank built by ingest from the
same facts, the semantic links equal a brute-force top-k over the bank, and a second call does
nothing. The own-index threshold is lowered so that the 300-fact bank gets one.
"""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import text

from bench import banks, bulk_bank, embcache, ivf_links
from tempr.providers.embedder.fake import FakeEmbedder
from tempr.store import bank_index, links_repo

pytestmark = pytest.mark.integration

N = 300


def _rows(engine, sql: str, bank: str) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql), {"b": bank})]


def _links(engine, bank: str, kind: str) -> set[tuple[str, str]]:
    """(from fact id, to fact id) of the bank's links of one kind."""
    return set(
        _rows(
            engine,
            "SELECT f.fact_id, t.fact_id FROM memory_links l JOIN memory_units f ON f.id = l.from_unit_id "
            f"JOIN memory_units t ON t.id = l.to_unit_id WHERE f.bank_id = :b AND l.link_type = '{kind}'",
            bank,
        )
    )


def _vectors(engine, bank: str) -> dict[str, np.ndarray]:
    rows = _rows(engine, "SELECT fact_id, embedding FROM memory_units WHERE bank_id = :b ORDER BY fact_id", bank)
    return {r[0]: np.asarray(r[1].to_numpy(), dtype=np.float32) for r in rows}


def _neighbour_cosines(links: set[tuple[str, str]], vec: dict[str, np.ndarray]) -> dict[str, list[float]]:
    """Each fact's linked cosines, sorted: compared this way, ties at the k-th place do not matter."""
    out: dict[str, list[float]] = {u: [] for u in vec}
    for a, b in links:
        out[a].append(round(float(vec[a] @ vec[b]), 4))
    return {u: sorted(c, reverse=True) for u, c in out.items()}


def _brute_force(vec: dict[str, np.ndarray], threshold: float, top_k: int) -> dict[str, list[float]]:
    ids = list(vec)
    mat = np.vstack([vec[u] for u in ids])
    sims = mat @ mat.T
    np.fill_diagonal(sims, -np.inf)
    best = -np.sort(-sims, axis=1)[:, :top_k]
    return {u: [round(float(c), 4) for c in row if c >= threshold] for u, row in zip(ids, best, strict=True)}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("linker", ["hnsw", "ivf"])
def test_bulk_bank_writes_what_ingest_writes(resources, tmp_path, monkeypatch, linker) -> None:
    """``ivf``: the bulk linker of large banks (``bench.ivf_links``), used here for a small one."""
    calls: list[str] = []
    monkeypatch.setattr(bank_index, "OWN_INDEX_MIN_UNITS", 100)
    monkeypatch.setattr(links_repo, "LINK_EXACT_MAX_UNITS", 100)
    if linker == "ivf":
        monkeypatch.setattr(bulk_bank, "IVF_MIN_FACTS", 0)
        real = ivf_links.link_bank
        monkeypatch.setattr(
            ivf_links, "link_bank", lambda engine, bank, *a, **k: calls.append(bank) or real(engine, bank, *a, **k)
        )
    # temporal links on (off by default), so that the bulk builder is seen to write them as ingest does
    monkeypatch.setattr(resources, "settings", resources.settings.model_copy(update={"temporal_link_top_k": 10}))
    engine, s = resources.engine, resources.settings
    seed = 19901 if linker == "hnsw" else 19902  # generator seeds under bank ids no other test uses
    cache = embcache.EmbeddingCache(tmp_path, FakeEmbedder, FakeEmbedder.space)
    bulk = banks.bank_id(N, seed)
    try:
        built = bulk_bank.ensure_banks([N], resources, cache, seed)
        assert built.builds[N].inserted == N and built.builds[N].own_index_s > 0 and built.links[N] > 0
        with engine.connect() as conn:
            assert bank_index.bank_search(conn, bulk).own_index and not links_repo.exact_link_search(conn, bulk)

        plain = f"{bulk}-ingest"
        banks.ensure_bank(N, resources, cache, seed=seed, bank=plain)
        unit_sql = "SELECT fact_id, text, occurred_start, doc_len FROM memory_units WHERE bank_id = :b ORDER BY 1"
        assert _rows(engine, unit_sql, bulk) == _rows(engine, unit_sql, plain)
        entity_sql = (
            "SELECT m.fact_id, lower(e.canonical_name) FROM unit_entities ue JOIN memory_units m ON m.id = ue.unit_id "
            "JOIN entities e ON e.id = ue.entity_id WHERE m.bank_id = :b ORDER BY 1, 2"
        )
        assert _rows(engine, entity_sql, bulk) == _rows(engine, entity_sql, plain)
        assert _links(engine, bulk, "temporal") == _links(engine, plain, "temporal") != set()
        assert _rows(engine, "SELECT unit_count, total_len FROM banks WHERE id = :b", bulk) == _rows(
            engine, "SELECT unit_count, total_len FROM banks WHERE id = :b", plain
        )

        vec = _vectors(engine, bulk)
        linked = _neighbour_cosines(_links(engine, bulk, "semantic"), vec)
        exact = _brute_force(vec, s.semantic_link_threshold, s.semantic_link_top_k)
        assert sum(map(len, exact.values())) > N // 2  # the fake embedder's templated facts link
        same = [u for u in vec if linked[u] == exact[u]]
        # the HNSW walk is approximate and cosines at the threshold round either way: nearly all agree
        assert len(same) >= 0.97 * N, [(u, linked[u], exact[u]) for u in vec if linked[u] != exact[u]][:5]

        again = bulk_bank.ensure_banks([N], resources, cache, seed)
        assert again.builds[N].inserted == 0 and again.builds[N].own_index_s == 0 and again.links[N] == 0
        assert calls == ([bulk] if linker == "ivf" else [])  # once: the rerun found every block linked
    finally:
        for bank in (bulk, f"{bulk}-ingest"):
            banks.delete_bank(engine, bank)
        bank_index.drop_orphans(engine)
