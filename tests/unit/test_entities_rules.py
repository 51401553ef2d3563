"""Capitalised-name rules that complement the small spaCy model."""

from __future__ import annotations

from tempr.providers.entities.rules import RuleEntityExtractor, dedupe, looks_like_name


def test_names_not_sentence_openers() -> None:
    (names,) = RuleEntityExtractor().extract(["In April 2024 Alice ran the Boston Marathon with Priya."])
    assert "Alice" in names and "Priya" in names and "Boston Marathon" in names
    assert not {"In", "April"} & set(names)


def test_because_and_pronouns_are_not_entities() -> None:
    (names,) = RuleEntityExtractor().extract(["Because of her wrist, She used dictation. The team agreed."])
    assert names == []


def test_looks_like_name_rejects_verb_phrases() -> None:
    assert looks_like_name("Bank of America")
    assert not looks_like_name("Alice joined Helix Health")
    assert not looks_like_name("In")


def test_dedupe_is_case_insensitive_and_drops_contained_names() -> None:
    assert dedupe(["Alice", "alice", "Alice Chen"]) == ["Alice Chen"]


def test_possessives_split_into_two_names() -> None:
    (names,) = RuleEntityExtractor().extract(["Yesterday Alice's GitHub was down."])
    assert set(names) == {"Alice", "GitHub"}
