"""Token vectors (``tempr.core.token_match``) are stored with each memory, by one-transaction ingest
and by a staged import alike, and reach the ranker's inputs (real PostgreSQL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tempr.core import token_match
from tempr.ingest import imports
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.providers.embedder.fake import FakeEmbedder
from tempr.providers.entities import NoEntities
from tempr.store import recall_repo

pytestmark = pytest.mark.integration
FACTS = [
    {"id": "f1", "text": "Nate won a Valorant games final."},
    {"id": "f2", "text": "Nate likes green tea."},
    {"id": "f3", "text": "It was so."},  # stopwords only: its words are its tokens
]


def _deps(resources: Any, **settings: Any) -> IngestDeps:
    return IngestDeps(resources.engine, FakeEmbedder(), NoEntities(), resources.settings.model_copy(update=settings))


def _stored(resources: Any, bank: str) -> dict[str, bytes | None]:
    with resources.engine.connect() as conn:
        rows = conn.execute(text("SELECT fact_id, tokens FROM memory_units WHERE bank_id = :b"), {"b": bank}).all()
    return {r[0]: None if r[1] is None else bytes(r[1]) for r in rows}


def _expected() -> dict[str, bytes | None]:
    _, packed = FakeEmbedder().embed_tokens([f["text"] for f in FACTS])
    return {f["id"]: p or b"" for f, p in zip(FACTS, packed, strict=True)}


def test_ingest_stores_each_memorys_token_vectors_and_the_ranker_reads_them(resources: Any, bank_id: str) -> None:
    ingest_facts(bank_id, parse_array(FACTS), _deps(resources))
    stored = _stored(resources, bank_id)
    assert stored == _expected()
    with resources.engine.connect() as conn:
        ids = [str(r[0]) for r in conn.execute(text("SELECT id FROM memory_units WHERE bank_id = :b"), {"b": bank_id})]
        units = recall_repo.fetch_units(conn, ids, tokens=True)
    by_fact = {u["fact_id"]: u["tokens"] for u in units.values()}
    assert by_fact == stored
    query = token_match.unpack(FakeEmbedder().embed_tokens(["What games does Nate play?"])[1][0])
    got = token_match.maxsim(query, [by_fact["f1"], by_fact["f2"]])
    assert got[0] > got[1]


def test_a_staged_import_publishes_the_same_token_vectors(resources: Any, bank_id: str, tmp_path: Path) -> None:
    import json

    path = tmp_path / "facts.jsonl"
    path.write_text("".join(json.dumps(f) + "\n" for f in FACTS))
    deps = _deps(resources)
    plan = imports.validate_file(path, bank_id, deps.engine)
    import_id = imports.new_import(plan, 2, deps.engine, deps.embedder.space)
    for number, items in enumerate(imports.iter_chunks(plan, 2)):
        imports.stage_chunk(import_id, bank_id, number, items, deps)
    imports.publish(import_id, deps)
    assert _stored(resources, bank_id) == _expected()


def test_without_token_vectors_nothing_is_stored(resources: Any, bank_id: str) -> None:
    ingest_facts(bank_id, parse_array(FACTS), _deps(resources, token_vectors=False))
    assert set(_stored(resources, bank_id).values()) == {None}
    _, packed = FakeEmbedder().embed_tokens(["Nate"], tokens=False)
    assert packed == [None]


def _version(resources: Any, bank: str) -> int:
    with resources.engine.connect() as conn:
        return int(conn.execute(text("SELECT version FROM banks WHERE id = :b"), {"b": bank}).scalar_one())


def test_embed_tokens_fills_in_a_bank_stored_without_them_once(resources: Any, bank_id: str) -> None:
    from tempr.ingest.backfill import embed_missing_tokens

    ingest_facts(bank_id, parse_array(FACTS), _deps(resources, token_vectors=False))  # as before migration 0011
    before = _version(resources, bank_id)
    seen: list[int] = []
    done = embed_missing_tokens(_deps(resources), bank_id, batch=2, progress=lambda _b, n: seen.append(n))
    assert done == {bank_id: 3} and seen == [2, 1]  # page by page
    assert _stored(resources, bank_id) == _expected()  # what ingest with token vectors on writes
    after = _version(resources, bank_id)
    assert after > before  # cached answers and rows from before are not served
    assert embed_missing_tokens(_deps(resources), bank_id) == {bank_id: 0}
    assert _version(resources, bank_id) == after  # nothing written, nothing invalidated


def test_a_memory_with_no_token_to_keep_is_stored_empty_and_not_filled_in_again(resources: Any, bank_id: str) -> None:
    from tempr.ingest.backfill import embed_missing_tokens

    facts = [{"id": "d1", "text": "8 March 2024."}, {"id": "d2", "text": "Nate plays Valorant."}]
    ingest_facts(bank_id, parse_array(facts), _deps(resources))
    stored = _stored(resources, bank_id)
    assert stored["d1"] == b"" and stored["d2"]  # computed, nothing kept: not NULL
    assert embed_missing_tokens(_deps(resources), bank_id) == {bank_id: 0}
    with resources.engine.connect() as conn:
        ids = [str(r[0]) for r in conn.execute(text("SELECT id FROM memory_units WHERE bank_id = :b"), {"b": bank_id})]
        units = recall_repo.fetch_units(conn, ids, tokens=True)
    assert {u["fact_id"]: u["tokens"] for u in units.values()}["d1"] is None  # the ranker reads it as missing


def test_db_embed_tokens_cli_reports_json_and_names_an_unknown_bank(resources: Any, bank_id: str) -> None:
    import json
    import subprocess
    import sys

    ingest_facts(bank_id, parse_array(FACTS), _deps(resources, token_vectors=False))
    with resources.engine.connect() as conn:  # the CLI embeds in the bank's space: make it the configured one's
        conn.execute(
            text("UPDATE banks SET embedder = :e WHERE id = :b"), {"e": resources.embedder.space, "b": bank_id}
        )
        conn.commit()
    cli = [sys.executable, "-m", "tempr.cli.main", "db", "embed-tokens", "--bank"]
    done = subprocess.run([*cli, bank_id], capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"memories_tokenised": {bank_id: 3}}
    assert f"{bank_id}: 3 memories embedded" in done.stderr
    stored = _stored(resources, bank_id)
    _, packed = resources.embedder.embed_tokens([FACTS[0]["text"]])
    got = token_match.maxsim(token_match.unpack(packed[0]), [stored["f1"]])
    assert got[0] >= 0.95  # the same text's tokens, embedded in another batch
    missing = subprocess.run([*cli, "no-such-bank"], capture_output=True, text=True, timeout=280)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert "bank 'no-such-bank' does not exist" in missing.stderr + missing.stdout
