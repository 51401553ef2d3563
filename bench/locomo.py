"""LoCoMo conversations as tempr banks and questions (pure: no database).

One bank per conversation; one memory per observation (``session_N_observation``):
text = the observation, fact_type ``world``, dated at its session (occurred_start,
occurred_end and mentioned_at = the session's date-time), ``metadata.dia_id`` = its
source turn(s), the source turn as its chunk, the session as its document; the
speaker is an entity (with whatever else the entity extractor finds).

Questions of categories 1-4 with at least one well-formed evidence id are kept
(5, adversarial, has no answer in the conversation), asked with ``query_timestamp``
one day after the conversation's last session.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.metrics import evidence_ids, split_dia_ids

CONVERSION_VERSION = 1
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TUNING_CONVERSATIONS = ("26", "30")
"""If anyone tunes weights or thresholds on LoCoMo, they tune on these two; the other three are held out."""

_SESSION = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True)
class Question:
    conversation: str
    index: int
    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass
class Conversation:
    name: str
    speakers: tuple[str, str]
    facts: list[dict[str, Any]]
    questions: list[Question]
    query_timestamp: datetime
    sessions: int
    skipped_questions: dict[str, int] = field(default_factory=dict)

    @property
    def bank_id(self) -> str:
        return bank_id(self.name)


def bank_id(name: str, prefix: str = "bench-locomo") -> str:
    return f"{prefix}-v{CONVERSION_VERSION}-{name}"


def parse_session_time(value: str) -> datetime:
    """LoCoMo's ``"1:56 pm on 8 May, 2023"`` as an aware UTC datetime."""
    cleaned = re.sub(r"\s+", " ", value.strip())
    return datetime.strptime(cleaned, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def _turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn.get('speaker', '')}: {turn.get('text', '')}".strip()
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def convert(name: str, data: dict[str, Any]) -> Conversation:
    speakers = (str(data["speaker_a"]), str(data["speaker_b"]))
    sessions = sorted(int(m.group(1)) for k in data if (m := _SESSION.match(k)) and data[k])
    if not sessions:
        raise ValueError(f"conversation {name} has no sessions")
    turns: dict[str, dict[str, Any]] = {}
    for n in sessions:
        for turn in data[f"session_{n}"]:
            if isinstance(turn, dict) and turn.get("dia_id"):
                turns[str(turn["dia_id"])] = turn
    facts: list[dict[str, Any]] = []
    for n in sessions:
        when = parse_session_time(data[f"session_{n}_date_time"]).isoformat()
        observations = data.get(f"session_{n}_observation") or {}
        for speaker, items in observations.items():
            for j, item in enumerate(items):
                if not isinstance(item, (list, tuple)) or len(item) < 2:
                    continue
                text, ids = str(item[0]).strip(), split_dia_ids(item[1])
                if not text:
                    continue
                fact: dict[str, Any] = {
                    "id": f"{name}-s{n}-{_slug(speaker)}-{j}",
                    "text": text,
                    "fact_type": "world",
                    "occurred_start": when,
                    "occurred_end": when,
                    "mentioned_at": when,
                    "entities": [speaker],
                    "metadata": {"dia_id": ",".join(ids), "speaker": speaker, "session": str(n), "conversation": name},
                    "document_id": f"session_{n}",
                }
                source = [turns[i] for i in ids if i in turns]
                if source:
                    fact["chunk"] = {"id": ",".join(ids), "text": "\n".join(_turn_text(t) for t in source)}
                facts.append(fact)
    last = parse_session_time(data[f"session_{sessions[-1]}_date_time"])
    questions, skipped = _questions(name, data.get("qa") or [])
    return Conversation(name, speakers, facts, questions, last + timedelta(days=1), len(sessions), skipped)


def _questions(name: str, qa: Sequence[dict[str, Any]]) -> tuple[list[Question], dict[str, int]]:
    out, skipped = [], {"adversarial (category 5)": 0, "no usable evidence": 0}
    for index, item in enumerate(qa):
        category = int(item.get("category", 0))
        if category not in CATEGORIES:
            skipped["adversarial (category 5)"] += 1
            continue
        evidence = evidence_ids(item.get("evidence") or [])
        if not evidence:
            skipped["no usable evidence"] += 1
            continue
        out.append(Question(name, index, str(item["question"]), str(item.get("answer", "")), tuple(evidence), category))
    return out, skipped


def _slug(value: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-") or "x"


def add_entities(facts: list[dict[str, Any]], extract: Callable[[list[str]], list[list[str]]]) -> None:
    """Add what the entity extractor finds to each fact's entities (the speaker stays first)."""
    found = extract([f["text"] for f in facts])
    for fact, names in zip(facts, found, strict=True):
        seen = {e.lower() for e in fact["entities"]}
        for n in names:
            if n.lower() not in seen:
                fact["entities"].append(n)
                seen.add(n.lower())


def load(directory: Path, names: Sequence[str] | None = None) -> list[Conversation]:
    paths = sorted(directory.glob("*.json"), key=lambda p: (len(p.stem), p.stem))
    if names:
        paths = [p for p in paths if p.stem in set(names)]
    if not paths:
        raise FileNotFoundError(f"no LoCoMo conversations (*.json) in {directory}")
    return [convert(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in paths]


def result_dia_ids(metadata: dict[str, str] | None) -> list[str]:
    return split_dia_ids((metadata or {}).get("dia_id", ""))
