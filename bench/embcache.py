"""On-disk embedding cache for the synthetic banks, and an embedder that reads it.

Embeddings of the synthetic facts are computed once (about 3-4 ms a fact on two
cores) and stored as ``.npy`` files of ``CHUNK`` rows, keyed by the embedding
model, the generator version, the seed and the chunk index. Because fact i does
not depend on the bank size, the 10k bank reuses the first chunk of the 100k one.

``CachedEmbedder`` is passed to ``IngestDeps`` in place of the model: it looks
each text up among the cached vectors and embeds only the misses with the real
model, so ingest timings measure the write path and reruns take seconds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench import synthetic
from bench.progress import Bar
from tempr.providers.embedder import spaces

CHUNK = 10_000
DEFAULT_DIR = Path(__file__).resolve().parent / ".cache"


def model_key(space: str) -> str:
    """The cache files' model key: ``minilm`` for the exact model (as before spaces), else the space's slug."""
    return "minilm" if space == spaces.EXACT else re.sub(r"[^a-z0-9]+", "-", space.lower()).strip("-")


def chunk_path(root: Path, seed: int, index: int, space: str = spaces.EXACT) -> Path:
    return root / f"syn-{model_key(space)}-g{synthetic.GENERATOR_VERSION}-s{seed}-c{index:04d}x{CHUNK}.npy"


class EmbeddingCache:
    def __init__(self, root: Path, make_model: Callable[[], object], space: str = spaces.EXACT) -> None:
        """``space``: the vector space ``make_model``'s embedder writes (cached files are kept per space)."""
        self.root = root
        self.space = space
        self._make_model = make_model
        self._model: object | None = None
        self.embedded = 0
        """Facts embedded with the real model by this object (cache misses)."""
        self.embed_s = 0.0

    @property
    def model(self) -> object:
        if self._model is None:
            self._model = self._make_model()
        return self._model

    def chunk(self, seed: int, index: int, bar: Bar | None = None) -> np.ndarray:
        path = chunk_path(self.root, seed, index, self.space)
        if path.exists():
            vectors = np.load(path)
            if vectors.shape == (CHUNK, 384):
                if bar:
                    bar.update(CHUNK)
                return vectors
        import time

        texts = [f["text"] for f in synthetic.facts((index + 1) * CHUNK, seed, start=index * CHUNK)]
        out = np.zeros((CHUNK, 384), dtype=np.float32)
        started = time.perf_counter()
        step = 512
        for lo in range(0, CHUNK, step):
            out[lo : lo + step] = self.model.embed(texts[lo : lo + step])  # type: ignore[attr-defined]
            if bar:
                bar.update(min(step, CHUNK - lo))
        self.embed_s += time.perf_counter() - started
        self.embedded += CHUNK
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, out)
        tmp.replace(path)
        return out

    def vectors(self, n: int, seed: int, bar: Bar | None = None) -> np.ndarray:
        """Embeddings of synthetic facts 0..n-1 (n rounded up to whole chunks, then cut)."""
        chunks = [self.chunk(seed, c, bar) for c in range(-(-n // CHUNK))]
        return np.concatenate(chunks)[:n] if chunks else np.zeros((0, 384), dtype=np.float32)


class CachedEmbedder:
    """The ``Embedder`` interface over a text -> vector table, falling back to a real model."""

    dim = 384

    def __init__(self, table: dict[str, np.ndarray], fallback: Callable[[], object], space: str) -> None:
        self.table = table
        self.space = space
        self._fallback = fallback
        self._model: object | None = None
        self.hits = 0
        self.misses = 0

    @classmethod
    def for_facts(
        cls, texts: Sequence[str], vectors: np.ndarray, fallback: Callable[[], object], space: str
    ) -> CachedEmbedder:
        return cls(dict(zip(texts, vectors, strict=True)), fallback, space)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing = []
        for row, text in enumerate(texts):
            vector = self.table.get(text)
            if vector is None:
                missing.append(row)
            else:
                out[row] = vector
        self.hits += len(texts) - len(missing)
        if missing:
            if self._model is None:
                self._model = self._fallback()
            self.misses += len(missing)
            out[missing] = self._model.embed([texts[r] for r in missing])  # type: ignore[attr-defined]
        return out

    def embed_tokens(self, texts: Sequence[str], *, tokens: bool = True) -> tuple[np.ndarray, list[bytes | None]]:
        """The cached vectors without token vectors: the table holds vectors only, so a bench bank
        built through it has none (its ranker's token features are missing, as for an old bank)."""
        return self.embed(texts), [None] * len(texts)
