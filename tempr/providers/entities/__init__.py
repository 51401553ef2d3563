"""Entity extractors: one interface (``EntityExtractor``), one file per provider."""

from __future__ import annotations

from collections.abc import Sequence

from tempr.providers.entities.base import EntityExtractor


class NoEntities:
    def extract(self, texts: Sequence[str]) -> list[list[str]]:
        return [[] for _ in texts]


def make_entity_extractor(kind: str) -> EntityExtractor:
    if kind == "none":
        return NoEntities()
    if kind == "rules":
        from tempr.providers.entities.rules import RuleEntityExtractor

        return RuleEntityExtractor()
    from tempr.providers.entities.spacy_rules import SpacyRuleExtractor

    return SpacyRuleExtractor()


__all__ = ["EntityExtractor", "make_entity_extractor"]
