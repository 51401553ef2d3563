"""Vectors for chunks stored without one: written before migration 0005, or with chunk vectors off.

The learned ranker reads the query's cosine to a memory's chunk when the chunk has a vector
and the fact's cosine in its place otherwise, so a bank upgraded from an older version recalls
as before until its chunks are embedded; ``tempr db embed-chunks`` does that, bank by bank,
a batch at a time (the embedding outside any transaction, each batch written in its own),
so it can be stopped and rerun at any point and recall keeps serving meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable

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
    with deps.engine.connect() as conn:
        space = bank_space(conn, bank)
    if space is None:  # no such bank (or deleted meanwhile)
        return 0
    embedder = deps.embedder_for(space)
    after, count = "", 0
    while True:
        with deps.engine.connect() as conn:
            rows = repo.unembedded_chunks(conn, bank, after=after, limit=batch, part=part, parts=parts)
        if not rows:
            return count
        vectors = embedder.embed([t for _, t in rows])
        with deps.engine.begin() as conn:
            if bank_space(conn, bank) != space:  # the bank was dropped and rebuilt with another embedder
                return count
            repo.set_chunk_vectors(conn, bank, [(cid, v) for (cid, _), v in zip(rows, vectors, strict=True)])
        after, count = rows[-1][0], count + len(rows)
        if progress:
            progress(bank, len(rows))
