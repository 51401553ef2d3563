"""The write half of ingest: one batch of prepared rows into the bank, inside the caller's transaction.

Used by the one-transaction path (``pipeline.ingest_facts``) and, block after block, by the
publish step of a staged import (``imports.publish``), so both apply the same rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection

from config.settings import Settings
from tempr.ingest import links
from tempr.store import ingest_repo as repo
from tempr.store import links_repo

if TYPE_CHECKING:
    from tempr.ingest.pipeline import IngestReport


def write_batch(
    conn: Connection,
    bank_id: str,
    rows: list[dict[str, Any]],
    names: dict[str, list[str]],
    chunks: list[dict[str, Any]],
    s: Settings,
    report: IngestReport,
    *,
    space: str,
) -> set[str]:
    """Insert units (with their BM25 postings and statistics), entities, semantic and temporal links; return
    the ids inserted.

    Counts are added to ``report`` (a publish writes several batches into one report).
    ``space`` is the vector space the rows were embedded in: a new bank records it, an existing
    bank must hold it (``ingest_repo.lock_bank``).
    """
    t = report.timed
    with t("write_units"):
        cfg = repo.lock_bank(conn, bank_id, s.text_search_config, space)
        had_units = repo.bank_has_units(conn, bank_id)
        repo.insert_documents(conn, bank_id, [str(r["document_id"]) for r in rows if r["document_id"]])
        repo.insert_chunks(conn, bank_id, chunks)
        report.chunks += len(chunks)
        repo.stage_batch(conn, rows)
    with t("link_semantic"):
        semantic = _semantic_links(conn, bank_id, rows, had_units, s)
    with t("link_temporal"):
        temporal = _temporal_links(conn, bank_id, rows, had_units, s)
    with t("write_units"):
        inserted = repo.insert_units(conn, bank_id, cfg, ann_indexed=repo.enter_ann_index(conn, bank_id))
    report.inserted += len(inserted)
    report.skipped += len(rows) - len(inserted)
    keep = set(inserted)
    with t("write_entities"):
        report.entity_links += links_repo.link_entities(conn, bank_id, {u: n for u, n in names.items() if u in keep})
    with t("write_links"):
        for kind, found in (("semantic", semantic), ("temporal", temporal)):
            added = links_repo.copy_new_links(conn, kind, [x for x in found if x[0] in keep])
            report.links[kind] = report.links.get(kind, 0) + added
    return keep


def _semantic_links(
    conn: Connection, bank_id: str, rows: list[dict[str, Any]], had_units: bool, s: Settings
) -> list[tuple[str, str, float]]:
    """Each new unit's k nearest (cosine >= threshold) among the batch and the bank: in memory, or for a
    bank too large to read whole, one query through the HNSW index."""
    ids = [str(r["id"]) for r in rows]
    vectors = np.vstack([np.asarray(r["embedding"], dtype=np.float32) for r in rows])
    threshold, k = s.semantic_link_threshold, s.semantic_link_top_k
    batch = links.semantic_candidates(ids, vectors, threshold=threshold, top_k=k)
    existing: dict[str, list[links.Candidate]] = {}
    if had_units and k > 0:
        if links_repo.exact_link_search(conn, bank_id):
            unit = links.unit_rows(vectors)
            for bank_ids, bank_mat in links_repo.bank_vector_pages(conn, bank_id):
                others = links.unit_rows(bank_mat, copy=False)
                page = links.nearest_among(ids, unit, bank_ids, others, threshold=threshold, top_k=k)
                existing = links.keep_top_k(existing, page, k)
        else:
            existing = links_repo.existing_semantic_candidates(conn, bank_id, threshold=threshold, top_k=k)
    return links.merge_top_k(batch, existing, k)


def _temporal_links(
    conn: Connection, bank_id: str, rows: list[dict[str, Any]], had_units: bool, s: Settings
) -> list[tuple[str, str, float]]:
    """Each new dated unit's k nearest in time within the window, among the batch and the bank."""
    ids = [str(r["id"]) for r in rows]
    dates = [r["occurred_start"] or r["occurred_end"] or r["mentioned_at"] for r in rows]
    window, k = s.temporal_link_window_hours, s.temporal_link_top_k
    batch = links.temporal_candidates(ids, dates, window_hours=window, top_k=k)
    existing = (
        links_repo.existing_temporal_candidates(conn, bank_id, window_hours=window, top_k=k)
        if had_units and k > 0
        else {}
    )
    return links.merge_top_k(batch, existing, k)


def row_chunks(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The distinct chunks of prepared (or staged) rows: one path for ingest and publish."""
    seen: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["chunk_id"] and r["chunk_text"] is not None:
            seen.setdefault(
                r["chunk_id"], {"id": r["chunk_id"], "document_id": r["document_id"], "text": r["chunk_text"]}
            )
    return list(seen.values())
