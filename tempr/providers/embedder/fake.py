"""A deterministic bag-of-words embedder for pure unit tests (same interface, no model).

Texts sharing words get similar vectors, which is enough to exercise ranking
code without loading torch.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from tempr.providers.embedder.spaces import FAKE

_WORD = re.compile(r"\w+")


class FakeEmbedder:
    dim = 384
    space = FAKE

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                slot = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
                out[row, slot % self.dim] += 1.0
            norm = float(np.linalg.norm(out[row]))
            out[row] = out[row] / norm if norm else 1.0 / np.sqrt(self.dim)
        return out

    def embed_tokens(self, texts: Sequence[str], *, tokens: bool = True) -> tuple[np.ndarray, list[bytes | None]]:
        """Each word (not a stopword; the words when all are) a one-hot token vector of the slot it hashes to."""
        from tempr.core import token_match

        packed: list[bytes | None] = []
        for text in texts:
            found = _WORD.findall(text.lower()) if tokens else []  # as ``token_match.select``: the words
            words = [w for w in found if token_match.keep(w)] or [w for w in found if token_match.keep_word(w)]
            rows = np.zeros((len(words), self.dim), dtype=np.float32)
            for i, word in enumerate(words):
                slot = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
                rows[i, slot % self.dim] = 1.0
            packed.append(token_match.pack(rows) if words else None)
        return self.embed(texts), packed
