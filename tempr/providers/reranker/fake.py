"""A deterministic word-overlap reranker for pure unit tests (same interface, no model)."""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = re.compile(r"\w+")


class FakeReranker:
    name = "fake-overlap"
    calibrated = False

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        out = []
        for query, passage in pairs:
            q = set(_WORD.findall(query.lower()))
            p = set(_WORD.findall(passage.lower()))
            out.append(4.0 * len(q & p) / (len(q) or 1) - 2.0)  # a logit-like range
        return out
