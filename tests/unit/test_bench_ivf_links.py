"""The bulk semantic linker of the scale benchmark (``bench.ivf_links``): its pure numpy parts.

With every list probed, the partition changes nothing and the links must be exactly each fact's
``top_k`` nearest others at cosine >= the threshold (the brute-force answer); with fewer probes
they may miss some, never invent one, and never link a fact to itself.
"""

from __future__ import annotations

import numpy as np

from bench.ivf_links import links, list_links, nearest_centroids, train_centroids


def _clustered(n: int = 600, dim: int = 16, seed: int = 3) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(12, dim))
    vectors = centres[rng.integers(0, 12, n)] + 0.35 * rng.normal(size=(n, dim))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return vectors, [f"u{i:04d}" for i in range(n)]


def _brute(vectors: np.ndarray, ids: list[str], top_k: int, threshold: float) -> set[tuple[str, str]]:
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -2.0)
    out = set()
    for i, row in enumerate(sims):
        for j in np.argsort(-row)[:top_k]:
            if row[j] >= threshold:
                out.add((ids[i], ids[j]))
    return out


def test_every_list_probed_gives_the_brute_force_links() -> None:
    vectors, ids = _clustered()
    got = {(a, b) for _, found in links(vectors, ids, lists=10, probes=10, top_k=5, threshold=0.6) for a, b, _ in found}
    assert got == _brute(vectors, ids, 5, 0.6)
    assert got  # the threshold leaves links to compare


def test_fewer_probes_only_miss_links_and_never_link_a_fact_to_itself() -> None:
    vectors, ids = _clustered()
    found = [f for _, part in links(vectors, ids, lists=20, probes=2, top_k=5, threshold=0.6) for f in part]
    pairs = {(a, b) for a, b, _ in found}
    assert all(a != b for a, b in pairs)
    assert all(w >= 0.6 for _, _, w in found)
    per_fact = np.bincount([ids.index(a) for a, _ in pairs], minlength=len(ids))
    assert per_fact.max() <= 5
    exact = _brute(vectors, ids, 5, 0.6)
    assert len(pairs & exact) / len(exact) > 0.8  # the approximation is close on clustered data
    done = sum(n for n, _ in links(vectors, ids, lists=20, probes=2, top_k=5, threshold=0.6))
    assert done == len(ids)  # every fact is in exactly one list


def test_list_links_scores_are_the_cosines() -> None:
    vectors, ids = _clustered(50)
    members = np.arange(10)
    found = list_links(vectors, ids, members, np.arange(50), top_k=3, threshold=-1.0)
    assert len(found) == 30
    for a, b, w in found:
        assert np.isclose(w, min(1.0, float(vectors[ids.index(a)] @ vectors[ids.index(b)])), atol=1e-6)


def test_centroids_are_unit_length_and_nearest_is_sorted() -> None:
    vectors, _ = _clustered()
    centroids = train_centroids(vectors, 8, sample=400, rounds=4)
    assert np.allclose(np.linalg.norm(centroids, axis=1), 1.0, atol=1e-5)
    near = nearest_centroids(vectors[:20], centroids, 3)
    sims = vectors[:20] @ centroids.T
    best = np.argsort(-sims, axis=1)[:, :3]
    assert (near == best).all()
