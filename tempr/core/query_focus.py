"""The query's topic without its names: a second text for the learned ranker to compare against.

Why: in a memory bank most memories name the same few people, and a name carries much of a
short question's embedding. "What activities does Melanie do?" is close to every memory about
Melanie, so the cosine says "about Melanie" more than "about an activity", and the memory that
answers loses to any Melanie memory with more words in common. The ranker already knows who is
named (``entity_hits``, the lexical features), so it gets, beside the plain cosine, the cosine to
the question with each name replaced by "someone" ("What activities does someone do?"): the topic
alone. On the LoCoMo dev conversations, cross-validated, that feature adds 0.2-0.5 points of
recall at every k, most of it on open-domain questions (BENCHMARKS.md, "The query's topic without
its names").

A name here is a capitalised word (one capital, then lower-case letters; a trailing possessive
kept), anywhere but at the start of a sentence, where every word is capitalised (a sentence starts
the query and follows a word ending in ".", "?" or "!", unless that word is a title or initials:
"Dr. Chen", "C. S. Lewis"). A run of names
("Mary Jane") becomes one "someone". All-capital words (acronyms: "LGBTQ"), "I", and the names of
months and weekdays (time, which the temporal features read) are kept. A query left with no topic
word once its names go ("What did Priya do on March 8?": only stopwords, dates and numbers) has no
focus either: its answer is found by the date, and a vector of "What did someone do on March 8?"
would only add noise. The rule also takes capitalised places and products ("Google"); that costs nothing to the plain
cosine, which the ranker still has.
"""

from __future__ import annotations

import re

from tempr.core.rank_text import STOPWORDS, tokens

PLACEHOLDER = "someone"
_WORD = re.compile(r"\S+")
CALENDAR = frozenset(
    """january february march april may june july august september october november december jan feb mar
    apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday mon tue
    tues wed thu thur thurs fri sat sun""".split()
)
_TITLES = frozenset("mr mrs ms dr prof st".split())
_INITIALS = re.compile(r"(?:[A-Za-z]\.)*[A-Za-z]")
_POSSESSIVE = ("'s", "\u2019s")
_OPENING = "\"'(\u201c\u2018"
_CLOSING = "?!.,;:\"')\u201d\u2019"


def _name_part(token: str) -> tuple[str, str] | None:
    """(what precedes the name, what follows it) when ``token`` is a capitalised word, else None."""
    core = token.lstrip(_OPENING)
    head = token[: len(token) - len(core)]
    word = core.rstrip(_CLOSING)
    tail = core[len(word) :]
    for mark in _POSSESSIVE:
        if word.endswith(mark):
            word, tail = word[: -len(mark)], word[-len(mark) :] + tail
            break
    if len(word) < 2 or not word.isalpha() or not word[0].isupper() or not word[1:].islower():
        return None
    if word.lower() in CALENDAR:
        return None
    return head, tail


def focus_text(query: str) -> str | None:
    """The query with its names replaced by ``PLACEHOLDER``; None when it names nobody (the plain
    query is its own focus, so no second embedding is needed)."""
    out: list[str] = []
    changed = previous_was_name = False
    sentence_start = True
    for match in _WORD.finditer(query):
        token = match.group()
        part = None if sentence_start else _name_part(token)
        sentence_start = _ends_sentence(token)
        if part is None:
            out.append(token)
            previous_was_name = False
            continue
        head, tail = part
        changed = True
        if previous_was_name and not head:  # "Mary Jane" -> one "someone", keeping the last word's tail
            out[-1] = PLACEHOLDER + tail
        else:
            out.append(head + PLACEHOLDER + tail)
        previous_was_name = not tail  # "Mary, Jane" are two people
    if not changed:
        return None
    focus = " ".join(out)
    return focus if any(_is_topic(t) for t in tokens(focus)) else None


def has_topic(query: str) -> bool:
    """Whether the query keeps a topic word once its names go: "What did Priya do on March 8?"
    does not (a name, stopwords and a date). Word by word such a query matches only the name,
    which every memory about that person shares, so its token features are left missing
    (``tempr.core.token_match``) and its answer is found by the date."""
    kept, sentence_start = [], True
    for match in _WORD.finditer(query):
        token = match.group()
        if sentence_start or _name_part(token) is None:
            kept.append(token)
        sentence_start = _ends_sentence(token)
    return any(_is_topic(t) for t in tokens(" ".join(kept)))


def _ends_sentence(token: str) -> bool:
    """The token ends a sentence, unless it is a title ("Dr.") or initials ("C.", "J.K.")."""
    core = token.rstrip("\"')\u201d\u2019")
    if not core.endswith((".", "?", "!")):
        return False
    if core.endswith("?") or core.endswith("!"):
        return True
    word = core.rstrip(".")
    return word.lower() not in _TITLES and not _INITIALS.fullmatch(word)


def _is_topic(token: str) -> bool:
    return token != PLACEHOLDER and token not in STOPWORDS and token not in CALENDAR and not token.isdigit()
