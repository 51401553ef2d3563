"""LoCoMo conversion: observations to facts, questions kept and skipped, session dates (bench.locomo)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench import locomo
from tempr.ingest.facts import parse_array

CONVERSATION = {
    "speaker_a": "Caroline",
    "speaker_b": "Melanie",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
        {"speaker": "Melanie", "dia_id": "D1:2", "text": "I painted a lake.", "blip_caption": "a painting of a lake"},
        {"speaker": "Melanie", "dia_id": "D1:3", "text": "It was at sunrise."},
    ],
    "session_1_observation": {
        "Caroline": [["Caroline attended a support group.", "D1:1"]],
        "Melanie": [["Melanie painted a lake at sunrise.", ["D1:2", "D1:3"]], ["", "D1:2"]],
    },
    "session_2_date_time": "10:05 am on 1 June, 2023",
    "session_2": [{"speaker": "Caroline", "dia_id": "D2:1", "text": "I start counseling school."}],
    "session_2_observation": {"Caroline": [["Caroline is starting counseling school.", "D2:1"]]},
    "session_3_date_time": "9:00 am on 1 July, 2023",  # a date with no session: not the last session
    "qa": [
        {
            "question": "When did Caroline go to the support group?",
            "answer": "7 May 2023",
            "evidence": ["D1:1"],
            "category": 2,
        },
        {"question": "What did Melanie paint?", "answer": "a lake", "evidence": ["D1:2; D1:3"], "category": 4},
        {"question": "What did Caroline realise?", "adversarial_answer": "x", "evidence": ["D2:1"], "category": 5},
        {"question": "Broken evidence", "answer": 2022, "evidence": ["D"], "category": 1},
        {"question": "Multi", "answer": 2022, "evidence": ["D1:1", "D:11:26", "D2:1"], "category": 1},
    ],
}


@pytest.fixture()
def conv() -> locomo.Conversation:
    return locomo.convert("99", CONVERSATION)


def test_session_time_parses_locomo_format() -> None:
    assert locomo.parse_session_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert locomo.parse_session_time("12:06 am on 11 November, 2022") == datetime(2022, 11, 11, 0, 6, tzinfo=UTC)


def test_one_fact_per_observation_dated_at_its_session(conv: locomo.Conversation) -> None:
    assert [f["text"] for f in conv.facts] == [
        "Caroline attended a support group.",
        "Melanie painted a lake at sunrise.",
        "Caroline is starting counseling school.",
    ]  # the empty observation is dropped
    first = conv.facts[0]
    assert first["fact_type"] == "world"
    assert first["occurred_start"] == first["occurred_end"] == first["mentioned_at"] == "2023-05-08T13:56:00+00:00"
    assert first["metadata"]["dia_id"] == "D1:1"
    assert first["document_id"] == "session_1"
    assert first["chunk"] == {"id": "D1:1", "text": "Caroline: I went to a support group yesterday."}
    assert first["entities"] == ["Caroline"]
    assert conv.facts[2]["occurred_start"].startswith("2023-06-01T10:05")


def test_observation_citing_several_turns_keeps_them_all(conv: locomo.Conversation) -> None:
    fact = conv.facts[1]
    assert fact["metadata"]["dia_id"] == "D1:2,D1:3"
    assert locomo.result_dia_ids(fact["metadata"]) == ["D1:2", "D1:3"]
    assert fact["chunk"]["text"] == (
        "Melanie: I painted a lake. [shares a photo: a painting of a lake]\nMelanie: It was at sunrise."
    )


def test_facts_pass_tempr_validation_and_ids_are_unique(conv: locomo.Conversation) -> None:
    parsed = parse_array(conv.facts)
    assert len({f.key for _, f in parsed}) == len(conv.facts)


def test_questions_keep_categories_1_to_4_with_usable_evidence(conv: locomo.Conversation) -> None:
    assert [(q.question, q.category, q.evidence) for q in conv.questions] == [
        ("When did Caroline go to the support group?", 2, ("D1:1",)),
        ("What did Melanie paint?", 4, ("D1:2", "D1:3")),
        ("Multi", 1, ("D1:1", "D2:1")),
    ]
    assert conv.skipped_questions == {"adversarial (category 5)": 1, "no usable evidence": 1}
    assert conv.questions[2].answer == "2022"


def test_query_timestamp_is_one_day_after_the_last_session_with_turns(conv: locomo.Conversation) -> None:
    assert conv.query_timestamp == datetime(2023, 6, 2, 10, 5, tzinfo=UTC)


def test_add_entities_appends_extracted_names_after_the_speaker(conv: locomo.Conversation) -> None:
    locomo.add_entities(conv.facts, lambda texts: [["caroline", "Support Group"] for _ in texts])
    assert conv.facts[0]["entities"] == ["Caroline", "Support Group"]
    assert conv.facts[1]["entities"] == ["Melanie", "caroline", "Support Group"]


def test_bank_ids_are_versioned_per_conversation(conv: locomo.Conversation) -> None:
    assert conv.bank_id == f"bench-locomo-v{locomo.CONVERSION_VERSION}-99"


def test_shared_data_converts_when_present() -> None:
    folder = Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "locomo-dev"
    if not folder.is_dir():
        pytest.skip("no LoCoMo data beside the checkout")
    convs = locomo.load(folder)
    assert len(convs) >= 1
    for c in convs:
        parse_array(c.facts)
        assert c.questions and all(q.category in locomo.CATEGORIES and q.evidence for q in c.questions)
