"""The text side of the learned ranker's features: tokens, the crude stemmer, lexical coverage.

A token is a maximal run of ``[a-z0-9]`` in the lower-cased text; a word is a token with one
of the suffixes ing/es/s/ed trimmed (``words``). The lexical features ask only "does this
text contain a word equal to one of the query's few terms", so ``LexicalPool`` never stems
a text: it lists, per query term, the raw tokens that stem to it (``forms``) and intersects
them with the text's raw tokens. That, and scanning each distinct text once per
recall (a source chunk is shared by many facts), is what makes the features cheap enough
to compute for every candidate of every recall. The results are those of the first, plain
version, which stemmed every token of every text (``tests/unit/rank_features_oracle.py``).
"""

from __future__ import annotations

import math
import re
import string
import sys
from collections.abc import Sequence
from functools import lru_cache

WORD = re.compile(r"[a-z0-9]+")
STOPWORDS: frozenset[str] = frozenset(
    """a an the and or but of to in on at by for with from as is are was were be been being do does did
    has have had having it its this that these those what when where who whom which why how i you he she
    we they me him her us them my your his our their there here if then than so not no yes can could
    would should will shall may might must about into over after before up down out off just also very
    any some all each other such only own same too s t ever""".split()
)
_KEEP = frozenset(string.ascii_lowercase + string.digits)
# ASCII fast path: upper case to lower, every other non-token character to a space. For an
# ASCII text, ``text.translate(_ASCII).split()`` is exactly ``WORD.findall(text.lower())``.
_ASCII = str.maketrans({chr(i): (chr(i).lower() if chr(i).lower() in _KEEP else " ") for i in range(128)})


def tokens(text: str) -> list[str]:
    """The text's raw tokens: ``WORD.findall(text.lower())``, faster for ASCII text."""
    if text.isascii():
        return text.translate(_ASCII).split()
    return WORD.findall(text.lower())


TOKEN_MEMO = 16384
"""Texts whose token sets ``token_set`` keeps (least recently used out): a reranking process sees
the same memories and chunks recall after recall, so each is split once, not once per recall.
About 1.5 KB a text (LoCoMo's facts and chunks, tokens interned): about 25 MB when full."""


@lru_cache(maxsize=TOKEN_MEMO)
def token_set(text: str) -> tuple[frozenset[str], int]:
    """The text's distinct raw tokens and how many tokens it has (``tokens``, memoised). The tokens
    are interned: texts share most of their words, and kept once they cost 1.5 KB a text, not 2.6."""
    found = tokens(text)
    return frozenset(map(sys.intern, found)), len(found)


def padded(text: str) -> str:
    """The tokens space-joined and space-padded, so ``f" {token} " in padded(text)`` is a whole-token test."""
    if text.isascii():  # one space between tokens: a multi-word name must meet "alice, smith" too
        return f" {' '.join(text.translate(_ASCII).split())} "
    return f" {' '.join(WORD.findall(text.lower()))} "


@lru_cache(maxsize=8192)
def stem(token: str) -> str:
    """The crude plural/inflection trim of one token (cached: vocabularies repeat)."""
    if len(token) > 4 and token.endswith("ing"):
        return token[:-3]
    if len(token) > 3 and token.endswith("es"):
        return token[:-2]
    if len(token) > 3 and token.endswith("s"):
        return token[:-1]
    if len(token) > 3 and token.endswith("ed"):
        return token[:-2]
    return token


def words(text: str) -> list[str]:
    """Lower-case word tokens with a crude plural/inflection trim (so 'works' meets 'work')."""
    return [stem(w) for w in WORD.findall(text.lower())]


def content_terms(text: str) -> list[str]:
    """Distinct non-stopword terms of a text, in order."""
    return list(dict.fromkeys(w for w in words(text) if w not in STOPWORDS))


def forms(term: str) -> tuple[str, ...]:
    """Every raw token that ``stem`` maps to ``term``.

    ``stem`` trims at most one of ing/es/s/ed, so such a token is the term itself or the term
    plus one suffix; keeping those that stem back to it makes "the text has a word equal to
    term" a lookup of raw tokens, with no stemming of the text.
    """
    return tuple(w for w in (term, term + "ing", term + "es", term + "s", term + "ed") if stem(w) == term)


def bm25_idf(n: int, df: int) -> float:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))``: the non-negative BM25 idf."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


@lru_cache(maxsize=8192)
def entity_phrase(name: str) -> str | None:
    """An entity name as a padded token phrase (None: no tokens); names repeat across recalls."""
    found = WORD.findall(name.lower())
    return f" {' '.join(found)} " if found else None


def names_in(padded_query: str, name: str) -> bool:
    """The query names the entity: all its tokens, in order, as whole tokens."""
    phrase = entity_phrase(name)
    return phrase is not None and phrase in padded_query


class LexicalPool:
    """Idf-weighted coverage of one query's terms over a candidate pool, each distinct text scanned once.

    ``scan`` gives a text's pattern (which terms it contains, as words): the text's raw tokens
    intersected with the terms' raw ``forms``, so nothing is stemmed. ``fit`` takes each
    candidate's (fact, chunk) patterns and computes the pool idf (a term counts once per
    candidate); ``coverage`` is memoised per pattern (a handful of terms, so few patterns).
    """

    def __init__(self, query: str) -> None:
        self.terms = content_terms(query)
        self._form_term = {w: j for j, t in enumerate(self.terms) for w in forms(t)}
        self._forms = frozenset(self._form_term)
        self._nothing = (False,) * len(self.terms)
        self._patterns: dict[str, tuple[bool, ...]] = {}
        self._counted: dict[str, tuple[tuple[bool, ...], int]] = {}
        self._covers: dict[tuple[bool, ...], float] = {}
        self._idf: list[float] = []
        self._total = 0.0

    def scan(self, text: str) -> tuple[bool, ...]:
        """Which of the query's terms the text contains."""
        got = self._patterns.get(text)
        if got is None:
            got = self._patterns[text] = self._match(token_set(text)[0])
        return got

    def scan_counting(self, text: str) -> tuple[tuple[bool, ...], int]:
        """``scan`` and the text's token count, from one pass over it."""
        got = self._counted.get(text)
        if got is None:
            found, count = token_set(text)
            got = self._counted[text] = (self._patterns.setdefault(text, self._match(found)), count)
        return got

    def _match(self, found: frozenset[str]) -> tuple[bool, ...]:
        present = self._forms & found
        if not present:
            return self._nothing
        hit = list(self._nothing)
        for w in present:
            hit[self._form_term[w]] = True
        return tuple(hit)

    def fit(self, docs: Sequence[tuple[tuple[bool, ...], tuple[bool, ...]]]) -> None:
        n = len(docs)
        self._idf = [bm25_idf(n, sum(f[j] or c[j] for f, c in docs)) for j in range(len(self.terms))]
        self._total = math.fsum(self._idf)

    def coverage(self, pattern: tuple[bool, ...]) -> float:
        got = self._covers.get(pattern)
        if got is None:
            if self._total <= 0.0:
                got = 0.0
            else:
                got = math.fsum(x for x, hit in zip(self._idf, pattern, strict=True) if hit) / self._total
            self._covers[pattern] = got
        return got
