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
        ("I moved to Lisbon. Where did Bob stay?", "I moved to someone. Where did someone stay?"),
        ("What did Dr. Chen say? Was Ana there?", "What did someone. someone say? Was someone there?"),
        ("Would she read C. S. Lewis or J.K. Rowling?", "Would she read C. S. someone or J.K. someone?"),
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
def test_names_go_unless_they_start_a_sentence_and_every_other_word_stays(tokens: list[str]) -> None:
    masked = [i > 0 and t in NAMES and not tokens[i - 1].endswith("?") for i, t in enumerate(tokens)]
    kept = [t for t, m in zip(tokens, masked, strict=True) if not m]
    has_topic = any(t in TOPICS or t in NAMES for t in kept)  # a kept name is a topic word too
    focus = focus_text(" ".join(tokens))
    if not any(masked) or not has_topic:
        assert focus is None
        return
    assert focus is not None
    out = focus.split()
    assert [w for w in out if not w.startswith(PLACEHOLDER)] == kept
    assert focus_text(focus) is None  # one pass masks every name


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("What did Priya do on March 8, 2024?", False),  # a name, stopwords and a date
        ("Who is Alice?", False),
        ("When?", False),
        ("What video games does Nate play?", True),
        ("Where does she work?", True),  # names nobody: its own words
        ("Which flight was TP1351?", True),
    ],
)
def test_a_query_has_a_topic_when_a_word_is_left_besides_names_and_dates(query: str, topic: bool) -> None:
    from tempr.core.query_focus import has_topic

    assert has_topic(query) is topic
