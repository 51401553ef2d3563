"""Rule-based names: runs of capitalised words, which small NER models miss ("Priya").

A capitalised word that opens a sentence counts only when it is not a
common sentence opener, so "The" or "Yesterday" are never entities.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tempr.providers.entities.base import MAX_NAME_CHARS

_SPAN = re.compile(r"\b([A-Z][\w&'-]*(?:\s+(?:of|de|van|von|the)?\s*[A-Z][\w&'-]*)*)")
_STOP = frozenset(
    """a an the this that these those i i'm i've i'd i'll he she it we they you me him her us them my
    his its our their your yes no ok okay hi hello hey thanks thank please so but and or if when while
    what who whom whose which where why how after before since until during then there here also
    yesterday today tomorrow last next early late mid monday tuesday wednesday thursday friday saturday
    sunday january february march april may june july august september october november december spring
    summer autumn fall winter q1 q2 q3 q4 mr mrs ms dr in on at of for from with by to as because one two
    three four five six seven eight nine ten first second third every each all some many most later once
    although though however meanwhile finally maybe perhaps sure oh wow well great good nice""".split()
)
_CONNECTORS = frozenset({"of", "de", "del", "van", "von", "der", "the", "&", "for", "la", "le", "da"})


def looks_like_name(name: str) -> bool:
    """Every word capitalised (or a connector inside the name): filters NER spans like "Alice joined X"."""
    words = name.split()
    if not words or words[0].lower() in _STOP or len(name) > MAX_NAME_CHARS:
        return False
    return all(w[:1].isupper() or w.lower() in _CONNECTORS for w in words)


def _clean(span: str) -> str:
    span = re.sub(r"'s$", "", span.strip())
    words = span.split()
    while words and words[0].lower() in _STOP:
        words = words[1:]
    while words and words[-1].lower() in _STOP:
        words = words[:-1]
    return " ".join(words)


def split_possessives(span: str) -> list[str]:
    """ "Alice's GitHub" names two things, Alice and GitHub."""
    return [p for p in re.split(r"['’]s\b\s*", span) if p.strip()]


def capitalised_names(text: str) -> list[str]:
    names: list[str] = []
    for match in _SPAN.finditer(text):
        for part in split_possessives(match.group(1)):
            name = _clean(part)
            if len(name) >= 2 and name.lower() not in _STOP and looks_like_name(name):
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
