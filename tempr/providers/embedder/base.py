"""The embedder interface: texts in, unit-normalised 384-d vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the interface needs no numpy at run time: ``spaces`` is imported where no model is
    import numpy as np


class Embedder(Protocol):
    dim: int
    space: str
    """The vector space its vectors live in (see ``tempr.providers.embedder.spaces``): a bank
    records the space it was written in, and vectors of two spaces are never compared."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a float32 array of shape (len(texts), dim), rows L2-normalised."""
        ...

    def embed_tokens(self, texts: Sequence[str], *, tokens: bool = True) -> tuple[np.ndarray, list[bytes | None]]:
        """``embed``, and each text's content-token vectors packed by ``tempr.core.token_match.pack``
        (None for a text with none, and for every text when ``tokens`` is False)."""
        ...
