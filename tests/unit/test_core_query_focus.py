"""The focus text: the query's names masked, everything else kept (``tempr.core.query_focus``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempr.core.query_focus import PLACEHOLDER, focus_text


@pytest.mark.parametrize(
    ("query", "focus"),
    [
        ("When did Caroline go to the LGBTQ support group?", "When did someone go to the LGBTQ support group?"),
        ("What activities does Melanie partake in?", "What activities does someone partake in?"),
        ("What did Jon's friends give him?", "What did someone's friends give him?"),
        ("Where did Mary Jane meet Bob?", "Where did someone meet someone?"),
        ("Did Mary, Jane and Bob travel together?", "Did someone, someone and someone travel together?"),
        ("How does José feel?", "How does someone feel?"),
        ("What did Priya buy on March 8, 2024?", "What did someone buy on March 8, 2024?"),
        ("Did Bob call on Monday or in Sept?", "Did someone call on Monday or in Sept?"),
        ("what did “Alice” say?", "what did “someone” say?"),
    ],
)
def test_names_become_someone(query: str, focus: str) -> None:
    assert focus_text(query) == focus


@pytest.mark.parametrize(
    "query",
    [
        "where does she work?",
        "Alice?",  # the first word is capitalised in any sentence: never taken for a name
        "What does I mean in the LGBTQ group?",  # "I" and acronyms are not names
        "When was the 2nd meeting in 2023?",
        "",
        "What did Priya do on March 8, 2024?",  # no topic once the name goes: the date finds the answer
        "Who is Bob?",
    ],
)
def test_a_query_that_names_nobody_is_its_own_focus(query: str) -> None:
    assert focus_text(query) is None


NAMES = ("Alice", "Bob's", "Helix", "Health,", "Ünal")
TOPICS = ("alice", "LGBTQ", "work?", "x")  # the other words are stopwords, numbers or punctuation
words = st.sampled_from([*TOPICS, "I", "where", "2024", "''", "-", *NAMES])


@given(st.lists(words, min_size=1, max_size=12))
def test_names_after_the_first_word_go_and_every_other_word_stays(tokens: list[str]) -> None:
    focus = focus_text(" ".join(tokens))
    has_topic = tokens[0] in NAMES or any(t in TOPICS for t in tokens)  # a first word is never masked
    if not any(t in NAMES for t in tokens[1:]) or not has_topic:
        assert focus is None
        return
    assert focus is not None
    out = focus.split()
    assert out[0] == tokens[0]
    assert [w for w in out[1:] if not w.startswith(PLACEHOLDER)] == [t for t in tokens[1:] if t not in NAMES]
    assert not any(n in out[1:] for n in NAMES)
    assert focus_text(focus) is None  # one pass masks every name
