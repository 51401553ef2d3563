"""Rule-based names: runs of capitalised words, which small NER models miss ("Priya").

A capitalised word that opens a sentence counts only when it is not a
common sentence opener, so "The" or "Yesterday" are never entities.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SPAN = re.compile(r"\b([A-Z][\w&'-]*(?:\s+(?:of|de|van|von|the)?\s*[A-Z][\w&'-]*)*)")
_STOP = frozenset(
    """a an the this that these those i i'm i've i'd i'll he she it we they you me him her us them my
    his its our their your yes no ok okay hi hello hey thanks thank please so but and or if when while
    what who whom whose which where why how after before since until during then there here also
    yesterday today tomorrow last next early late mid monday tuesday wednesday thursday friday saturday
    sunday january february march april may june july august september october november december spring
    summer autumn fall winter q1 q2 q3 q4 mr mrs ms dr""".split()
)


def _clean(span: str) -> str:
    span = re.sub(r"'s$", "", span.strip())
    words = span.split()
    while words and words[0].lower() in _STOP:
        words = words[1:]
    while words and words[-1].lower() in _STOP:
        words = words[:-1]
    return " ".join(words)


def capitalised_names(text: str) -> list[str]:
    names: list[str] = []
    for match in _SPAN.finditer(text):
        name = _clean(match.group(1))
        if len(name) < 2 or name.lower() in _STOP or name.isdigit():
            continue
        names.append(name)
    return names


class RuleEntityExtractor:
    def extract(self, texts: Sequence[str]) -> list[list[str]]:
        return [dedupe(capitalised_names(t)) for t in texts]


def dedupe(names: Sequence[str]) -> list[str]:
    """Case-insensitive de-duplication keeping first spelling; drops names contained in longer ones."""
    seen: dict[str, str] = {}
    for name in names:
        seen.setdefault(name.lower(), name)
    keys = list(seen)
    kept = [k for k in keys if not any(k != o and f" {k} " in f" {o} " for o in keys)]
    return [seen[k] for k in kept]
