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
