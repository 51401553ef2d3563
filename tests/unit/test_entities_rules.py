"""Capitalised-name rules: the default entity extractor, and what complements spaCy when it is chosen."""

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


def test_the_default_extractor_is_the_rules_and_finds_what_spacy_adds_nothing_to_on_the_sample_bank() -> None:
    """Why rules are the default (BENCHMARKS.md, "Entities by rules"): both keep only name-like
    spans, so on the sample bank spaCy's NER changes no fact's entities, at 40 % of the
    embedder's cost per fact."""
    import json
    from pathlib import Path

    from config.settings import Settings
    from tempr.providers.entities import make_entity_extractor
    from tempr.providers.entities.spacy_rules import SpacyRuleExtractor

    assert isinstance(make_entity_extractor(Settings().entity_extraction), RuleEntityExtractor)
    sample = Path(__file__).resolve().parents[2] / "tempr" / "data" / "sample_bank.jsonl"
    texts = [json.loads(line)["text"] for line in sample.read_text().splitlines() if line.strip()]
    by_rules = RuleEntityExtractor().extract(texts)
    by_spacy = SpacyRuleExtractor().extract(texts)
    assert sum(map(len, by_rules)) > len(texts)  # names found, not an empty match
    assert [sorted(n) for n in by_rules] == [sorted(n) for n in by_spacy]


def test_a_capitalised_run_longer_than_a_name_can_be_is_not_one() -> None:
    """A 3,000-character capitalised word became an entity whose index entry PostgreSQL refused
    (2,704 bytes at most), failing the publish of the whole import."""
    from tempr.providers.entities.base import MAX_NAME_CHARS

    long_word = "Xy" * 1500
    (names,) = RuleEntityExtractor().extract([f"Alice typed {long_word} by mistake."])
    assert names == ["Alice"]
    assert looks_like_name("A" + "b" * (MAX_NAME_CHARS - 1)) and not looks_like_name("A" + "b" * MAX_NAME_CHARS)
