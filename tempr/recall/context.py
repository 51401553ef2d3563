"""What a recall needs from the outside world, passed in explicitly (no globals)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine

from config.settings import Settings
from tempr.providers.embedder import Embedder
from tempr.providers.reranker import CandidateRanker, Reranker


@dataclass
class RecallContext:
    engine: Engine
    embedder: Embedder | None  # None in the steps after analysis: they never embed
    settings: Settings
    reranker: Reranker | None = None
    ranker: CandidateRanker | None = None
    """The learned ranker (recall profile ``default``); None for the seed profile."""
    count_tokens: Callable[[str], int] | None = None

    def tokens(self, text: str) -> int:
        if self.count_tokens is None:
            from tempr.providers.tokens import count_tokens

            self.count_tokens = count_tokens
        return self.count_tokens(text)
