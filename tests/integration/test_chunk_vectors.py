"""Chunks get a vector of their own after their facts are visible, in-process and on the workers,
and the rank stage reads its cosine (real PostgreSQL, Redis and Celery worker)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import text

from tempr.ingest.backfill import embed_missing_chunks
from tempr.ingest.facts import parse_array
from tempr.ingest.pipeline import IngestDeps, ingest_facts
from tempr.providers.embedder.fake import FakeEmbedder
from tempr.providers.entities import NoEntities
from tempr.store import recall_repo

pytestmark = pytest.mark.integration
SAME_TEXT = 0.98
"""Cosine of one text's vectors embedded in two batches: the default (int8) export scales
activations per batch, so a text's vector moves slightly with its batch (1.0 with the exact export)."""
TURN = "Alice: I finally started at Helix Health last week, a hospital software company."
FACTS = [
    {"id": "f1", "text": "Alice joined Helix Health.", "document_id": "s1", "chunk": {"id": "s1:t1", "text": TURN}},
    {
        "id": "f2",
        "text": "Helix Health makes hospital software.",
        "document_id": "s1",
        "chunk": {"id": "s1:t1", "text": TURN},
    },
    {
        "id": "f3",
        "text": "Alice prefers tea.",
        "document_id": "s1",
        "chunk": {"id": "s1:t2", "text": "Alice: tea, always."},
    },
]


class _Counting(FakeEmbedder):
    """The fake embedder, noting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Any) -> np.ndarray:
        self.texts.extend(texts)
        return super().embed(texts)


def _chunk_vectors(resources: Any, bank: str) -> dict[str, np.ndarray | None]:
    with resources.engine.connect() as conn:
        rows = conn.execute(text("SELECT id, embedding FROM chunks WHERE bank_id = :b"), {"b": bank}).all()
    return {r[0]: None if r[1] is None else np.asarray(r[1].to_list(), dtype=np.float32) for r in rows}


def _deps(resources: Any, embedder: FakeEmbedder) -> IngestDeps:
    return IngestDeps(resources.engine, embedder, NoEntities(), resources.settings)


def _unit_ids(resources: Any, bank: str) -> list[str]:
    with resources.engine.connect() as conn:
        return [str(r[0]) for r in conn.execute(text("SELECT id FROM memory_units WHERE bank_id = :b"), {"b": bank})]


def test_chunks_are_embedded_after_the_facts_once_each_and_read_by_the_rank_stage(resources, bank_id: str) -> None:
    embedder = _Counting()
    report = ingest_facts(bank_id, parse_array(FACTS), _deps(resources, embedder))
    assert report.chunks == 2 and embedder.texts == [f["text"] for f in FACTS]  # the facts only
    assert set(_chunk_vectors(resources, bank_id).values()) == {None}  # visible before their chunks' vectors
    query = FakeEmbedder().embed(["Where does Alice work at Helix Health?"])[0]
    with resources.engine.connect() as conn:
        units = recall_repo.fetch_units(conn, _unit_ids(resources, bank_id), embedding=query, with_chunks=True)
    assert {u["chunk_cosine"] for u in units.values()} == {None}  # the ranker reads the fact's cosine instead

    embedder.texts.clear()
    assert embed_missing_chunks(_deps(resources, embedder), bank_id, batch=1) == {bank_id: 2}  # batch by batch
    assert sorted(embedder.texts) == sorted([TURN, "Alice: tea, always."])  # each chunk once
    stored = _chunk_vectors(resources, bank_id)
    assert np.allclose(stored["s1:t1"], FakeEmbedder().embed([TURN])[0], atol=1e-6)
    with resources.engine.connect() as conn:
        units = recall_repo.fetch_units(conn, _unit_ids(resources, bank_id), embedding=query, with_chunks=True)
    by_fact = {u["fact_id"]: u for u in units.values()}
    assert by_fact["f1"]["chunk_cosine"] == pytest.approx(float(stored["s1:t1"] @ query), abs=1e-5)
    assert by_fact["f1"]["chunk_cosine"] == by_fact["f2"]["chunk_cosine"]

    embedder.texts.clear()  # nothing left, and a later fact citing an embedded chunk adds no work
    more = [{"id": "f4", "text": "Alice's team is small.", "document_id": "s1", "chunk": {"id": "s1:t1", "text": TURN}}]
    ingest_facts(bank_id, parse_array(more), _deps(resources, embedder))
    assert embed_missing_chunks(_deps(resources, embedder), bank_id) == {bank_id: 0}
    assert embedder.texts == ["Alice's team is small."]


def _wait_for_vectors(resources: Any, bank: str, n: int, timeout_s: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        stored = _chunk_vectors(resources, bank)
        if len(stored) == n and all(v is not None for v in stored.values()):
            return stored
        time.sleep(0.2)
    raise AssertionError(
        f"chunk vectors of {bank} not all written within {timeout_s} s: {_chunk_vectors(resources, bank)}"
    )


def test_on_the_workers_the_embed_chunks_task_follows_an_ingest(resources: Any, worker: Path, bank_id: str) -> None:
    from tempr.auth import local_key
    from workers.app import app

    answer = app.send_task(
        "tempr.ingest.facts", kwargs={"bank_id": bank_id, "facts": FACTS, "api_key": local_key(resources.settings)}
    ).get(timeout=120)
    assert answer["inserted"] == 3 and answer["chunks"] == 2
    stored = _wait_for_vectors(resources, bank_id, 2)
    expected = resources.embedder.embed([TURN])[0]  # the worker embeds in the bank's space, the configured one
    assert float(np.dot(stored["s1:t1"], expected)) >= SAME_TEXT


def test_an_import_through_the_fleet_gets_its_chunk_vectors(
    resources: Any, worker: Path, bank_id: str, tmp_path: Path
) -> None:
    path = tmp_path / "facts.jsonl"
    path.write_text("".join(json.dumps(f) + "\n" for f in FACTS))
    done = subprocess.run(
        [sys.executable, "-m", "tempr.cli.main", "ingest", "--bank", bank_id, str(path), "--via-workers",
         "--chunk-facts", "2", "--json"],
        capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["inserted"] == 3
    _wait_for_vectors(resources, bank_id, 2)  # queued by the publish


def test_in_process_cli_ingest_embeds_the_chunks_before_it_returns(
    resources: Any, bank_id: str, tmp_path: Path
) -> None:
    path = tmp_path / "facts.jsonl"
    path.write_text("".join(json.dumps(f) + "\n" for f in FACTS))
    done = subprocess.run(
        [sys.executable, "-m", "tempr.cli.main", "ingest", "--bank", bank_id, str(path), "--in-process", "--json"],
        capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["chunks"] == 2 and report["chunks_embedded"] == 2
    assert all(v is not None for v in _chunk_vectors(resources, bank_id).values())


def test_parts_split_a_bank_s_chunks_disjointly(resources, bank_id: str) -> None:
    from tempr.ingest.backfill import parts_for

    facts = [
        {"id": f"g{i}", "text": f"Fact number {i}.", "document_id": "d", "chunk": {"id": f"c{i}", "text": f"Turn {i}."}}
        for i in range(40)
    ]
    ingest_facts(bank_id, parse_array(facts), _deps(resources, FakeEmbedder()))
    counts = [
        embed_missing_chunks(_deps(resources, FakeEmbedder()), bank_id, part=p, parts=3)[bank_id] for p in range(3)
    ]
    assert sum(counts) == 40 and all(counts)  # every chunk in exactly one part, every part some
    assert all(v is not None for v in _chunk_vectors(resources, bank_id).values())
    assert (parts_for(1), parts_for(256), parts_for(257), parts_for(10**7)) == (1, 1, 2, 16)
    with pytest.raises(ValueError):
        embed_missing_chunks(_deps(resources, FakeEmbedder()), bank_id, part=3, parts=3)


def test_db_embed_chunks_cli_embeds_a_bank_and_reports_json(resources: Any, bank_id: str) -> None:
    ingest_facts(bank_id, parse_array(FACTS), _deps(resources, FakeEmbedder()))  # chunks without vectors
    with resources.engine.connect() as conn:  # the CLI embeds in the bank's space: make it the configured one's
        conn.execute(
            text("UPDATE banks SET embedder = :e WHERE id = :b"), {"e": resources.embedder.space, "b": bank_id}
        )
        conn.commit()
    done = subprocess.run(
        [sys.executable, "-m", "tempr.cli.main", "db", "embed-chunks", "--bank", bank_id],
        capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"chunks_embedded": {bank_id: 2}}
    assert f"{bank_id}: 2 chunks embedded" in done.stderr
    stored = _chunk_vectors(resources, bank_id)
    assert float(np.dot(stored["s1:t1"], resources.embedder.embed([TURN])[0])) >= SAME_TEXT


def test_db_embed_chunks_names_an_unknown_bank(resources: Any) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tempr.cli.main", "db", "embed-chunks", "--bank", "no-such-bank"],
        capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "bank 'no-such-bank' does not exist" in done.stderr + done.stdout


def test_a_broker_error_after_a_committed_write_does_not_fail_it(resources: Any, monkeypatch, caplog) -> None:
    import tasks.ingest as ingest_tasks

    def broken(*_args: Any) -> None:
        raise ConnectionError("broker down")

    monkeypatch.setattr(ingest_tasks.embed_chunks, "delay", broken)
    ingest_tasks._chunk_vectors_follow("some-bank", {"chunks": 3})  # logged, not raised
    assert "could not queue embed_chunks for bank some-bank" in caplog.text
