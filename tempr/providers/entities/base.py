"""The entity-extractor interface: texts in, canonical entity names per text out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

MAX_NAME_CHARS = 512
"""The longest entity name a bank keeps. Names are indexed per bank (``entities_bank_name``), and a
B-tree entry holds at most 2,704 bytes: 512 characters of UTF-8 (up to 2,048 bytes) and a bank id
fit. A fact naming a longer one is refused at validation; an extractor drops such a span (a run of
capitalised words that long is not a name)."""


class EntityExtractor(Protocol):
    def extract(self, texts: Sequence[str]) -> list[list[str]]: ...
