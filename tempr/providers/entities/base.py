"""The entity-extractor interface: texts in, canonical entity names per text out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class EntityExtractor(Protocol):
    def extract(self, texts: Sequence[str]) -> list[list[str]]: ...
