"""What a recall needs from the outside world, passed in explicitly (no globals)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from config.errors import ValidationError
from config.settings import Settings
from tempr.providers.embedder import Embedder
from tempr.providers.reranker import CandidateRanker, Reranker
from tempr.recall.seeds import SeedBoard

if TYPE_CHECKING:
    from tempr.store.unit_cache import UnitCache  # numpy: only where a ranker runs


@dataclass
class RecallContext:
    engine: Engine
    embedder: Embedder | None  # None in the steps after analysis: they never embed
    settings: Settings
    reranker: Reranker | None = None
    ranker: CandidateRanker | None = None
    """The learned ranker (recall profile ``default``); None for the seed profile."""
    count_tokens: Callable[[str], int] | None = None
    seeds: SeedBoard | None = None
    """This recall's seed board (``tempr.recall.seeds``): semantic and keyword post their first
    hits there for the graph walk. None: the graph runs its own seed queries."""
    unit_cache: UnitCache | None = None
    """This process's cache of the rows the learned ranker reads (``tempr.store.unit_cache``);
    None: they are read from PostgreSQL on every recall."""
    embedders: Callable[[str], Embedder] | None = None
    """An embedder for any vector space (``Resources.embedder_for``): a bank's query is embedded
    in the space the bank was written in (``for_space``)."""

    def for_space(self, space: str) -> RecallContext:
        """This context with an embedder of ``space`` (a bank's, from ``banks_repo.bank_state``)."""
        if self.embedder is None or self.embedder.space == space:
            return self
        if self.embedders is None:
            raise ValidationError(
                f"the bank holds vectors of {space}; this recall embeds queries as {self.embedder.space}",
                field="embedder",
            )
        return replace(self, embedder=self.embedders(space))

    def tokens(self, text: str) -> int:
        if self.count_tokens is None:
            from tempr.providers.tokens import count_tokens

            self.count_tokens = count_tokens
        return self.count_tokens(text)
