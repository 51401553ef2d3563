"""Vectors for what older versions stored without one: chunks (before migration 0005, or with
chunk vectors off) and memories' token vectors (before migration 0011, or with token vectors off).

The learned ranker reads the query's cosine to a memory's chunk when the chunk has a vector
and the fact's cosine in its place otherwise, and treats missing token vectors as missing
features (the model is trained with such cases), so a bank upgraded from an older version
recalls as before until ``tempr db embed-chunks`` / ``tempr db embed-tokens`` fill them in,
bank by bank, a batch at a time (the embedding outside any transaction, each batch written in
its own), so either can be stopped and rerun at any point and recall keeps serving meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tempr.ingest.pipeline import IngestDeps
from tempr.store import ingest_repo as repo
from tempr.store.banks_repo import bank_space

Progress = Callable[[str, int], None]
"""progress(bank, chunks embedded since the last call)."""


CHUNKS_PER_PART = 256
"""The ``embed_chunks`` work queued after a write is split into parts of about this many chunks
(at most ``MAX_PARTS``), each its own task, so the ingest workers share it."""
MAX_PARTS = 16


def parts_for(chunks: int) -> int:
    return max(1, min(MAX_PARTS, -(-chunks // CHUNKS_PER_PART)))


def embed_missing_chunks(
    deps: IngestDeps,
    bank_id: str | None = None,
    *,
    batch: int = 512,
    progress: Progress | None = None,
    part: int = 0,
    parts: int = 1,
) -> dict[str, int]:
    """Embed every chunk without a vector (of ``bank_id``, or of every bank); bank -> chunks embedded.

    ``part`` of ``parts``: only that share of the chunks (``ingest_repo.unembedded_chunks``).
    """
    if not 0 <= part < parts:
        raise ValueError(f"part {part} of {parts}")
    with deps.engine.connect() as conn:
        banks = [bank_id] if bank_id is not None else repo.banks_with_unembedded_chunks(conn)
    done: dict[str, int] = {}
    for bank in banks:
        done[bank] = _embed_bank(deps, bank, batch, progress, part, parts)
    return done


def _embed_bank(deps: IngestDeps, bank: str, batch: int, progress: Progress | None, part: int, parts: int) -> int:
    def fetch(conn: Any, after: str) -> list[tuple[str, str]]:
        return repo.unembedded_chunks(conn, bank, after=after, limit=batch, part=part, parts=parts)

    def embed(rows: list[tuple[str, str]], embedder: Any) -> Callable[[Any], object]:
        vectors = embedder.embed([t for _, t in rows])
        pairs = [(cid, v) for (cid, _), v in zip(rows, vectors, strict=True)]
        return lambda conn: repo.set_chunk_vectors(conn, bank, pairs)

    return _fill_bank(deps, bank, fetch, embed, progress)


def embed_missing_tokens(
    deps: IngestDeps, bank_id: str | None = None, *, batch: int = 512, progress: Progress | None = None
) -> dict[str, int]:
    """Token vectors (``tempr.core.token_match``) for every memory stored without them (of
    ``bank_id``, or of every bank); bank -> memories done. A memory whose text keeps no token is
    stored with empty bytes, so a rerun does not pick it up again."""
    with deps.engine.connect() as conn:
        banks = [bank_id] if bank_id is not None else repo.banks_with_untokened_units(conn)
    done: dict[str, int] = {}
    for bank in banks:

        def fetch(conn: Any, after: str, bank: str = bank) -> list[tuple[str, str]]:
            return repo.untokened_units(conn, bank, after=after, limit=batch)

        def embed(rows: list[tuple[str, str]], embedder: Any, bank: str = bank) -> Callable[[Any], object]:
            _, packed = embedder.embed_tokens([t for _, t in rows], tokens=True)
            pairs = [(uid, p or b"") for (uid, _), p in zip(rows, packed, strict=True)]
            return lambda conn: repo.set_unit_tokens(conn, bank, pairs)

        done[bank] = _fill_bank(deps, bank, fetch, embed, progress)
    return done


Fetch = Callable[[Any, str], list[tuple[str, str]]]
"""fetch(connection, after id) -> the next page of (id, text) still lacking what is filled in."""
Embed = Callable[[list[tuple[str, str]], Any], Callable[[Any], object]]
"""embed(page, the bank's embedder) -> the write of its result: the embedding runs outside any
transaction, the write later in a transaction of its own."""


def _fill_bank(deps: IngestDeps, bank: str, fetch: Fetch, embed: Embed, progress: Progress | None) -> int:
    """Page through ``fetch`` in id order, each page embedded (before its transaction) and written
    in a transaction of its own; stops when a page comes back empty or the bank changed space."""
    with deps.engine.connect() as conn:
        space = bank_space(conn, bank)
    if space is None:  # no such bank (or deleted meanwhile)
        return 0
    embedder = deps.embedder_for(space)
    after, count = "", 0
    while True:
        with deps.engine.connect() as conn:
            rows = fetch(conn, after)
        if not rows:
            return count
        write = embed(rows, embedder)
        with deps.engine.begin() as conn:
            if bank_space(conn, bank) != space:  # the bank was dropped and rebuilt with another embedder
                return count
            write(conn)
        after, count = rows[-1][0], count + len(rows)
        if progress:
            progress(bank, len(rows))
