"""Reads about banks as a whole: does it exist, what is in it (for the 404 rule and the console).

``require_bank`` is the one place that decides "unknown bank": the recall start task, the
in-process recall and the gateway all call it, so a Celery-native caller gets the same answer
as an HTTP or CLI caller. Creating a bank stays implicit on ingest (``ingest_repo.lock_bank``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, text

from config.errors import NotFound
from tempr.providers.embedder import spaces


def missing_bank(bank_id: str) -> NotFound:
    """The error every caller gets for an unknown bank (HTTP 404, CLI exit 1)."""
    return NotFound(f"bank {bank_id!r} does not exist")


def require_bank(conn: Connection, bank_id: str) -> int:
    """The bank's version; raises ``NotFound`` for a bank that does not exist (an empty one is fine)."""
    return bank_state(conn, bank_id)[0]


def bank_state(conn: Connection, bank_id: str) -> tuple[int, str]:
    """(version, vector space) of a bank, in one read; ``NotFound`` for a bank that does not exist.

    The space is what a query on this bank must be embedded in (``embedder.spaces``; a bank
    from before banks recorded it reads as ``spaces.LEGACY``)."""
    row = conn.execute(text("SELECT version, embedder FROM banks WHERE id = :b"), {"b": bank_id}).first()
    if row is None:
        raise missing_bank(bank_id)
    return int(row[0]), row[1] or spaces.LEGACY


def bank_space(conn: Connection, bank_id: str) -> str | None:
    """The vector space an existing bank holds, or None for a bank that does not exist yet."""
    row = conn.execute(text("SELECT embedder FROM banks WHERE id = :b"), {"b": bank_id}).first()
    return None if row is None else (row[0] or spaces.LEGACY)


def list_banks(conn: Connection) -> list[dict[str, Any]]:
    """Every bank with its size, most recently created first."""
    rows = conn.execute(
        text("SELECT id, unit_count, version, created_at FROM banks ORDER BY created_at DESC NULLS LAST, id")
    )
    return [_bank(r) for r in rows]


def bank_summary(conn: Connection, bank_id: str, *, recent: int = 10) -> dict[str, Any]:
    """Size, fact types, tags, documents and the most recent facts of one bank; NotFound if unknown."""
    row = conn.execute(
        text("SELECT id, unit_count, version, created_at FROM banks WHERE id = :b"), {"b": bank_id}
    ).first()
    if row is None:
        raise missing_bank(bank_id)
    out = _bank(row)
    params = {"b": bank_id}
    types = conn.execute(
        text("SELECT fact_type, count(*) FROM memory_units WHERE bank_id = :b GROUP BY 1 ORDER BY 1"), params
    )
    out["types"] = {t: int(n) for t, n in types}
    tags = conn.execute(
        text(
            "SELECT tag, count(*) FROM memory_units, unnest(tags) AS tag WHERE bank_id = :b "
            "GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 50"
        ),
        params,
    )
    out["tags"] = {t: int(n) for t, n in tags}
    out["documents"] = int(conn.execute(text("SELECT count(*) FROM documents WHERE bank_id = :b"), params).scalar_one())
    out["entities"] = int(conn.execute(text("SELECT count(*) FROM entities WHERE bank_id = :b"), params).scalar_one())
    facts = conn.execute(
        text("""
        SELECT fact_id, text, fact_type, occurred_start, mentioned_at, tags
        FROM memory_units WHERE bank_id = :b
        ORDER BY coalesce(occurred_start, mentioned_at) DESC NULLS LAST, created_at DESC, fact_id
        LIMIT :n"""),
        {**params, "n": max(0, recent)},
    )
    out["recent_facts"] = [
        {
            "fact_id": f[0],
            "text": f[1],
            "type": f[2],
            "occurred_start": f[3].isoformat() if f[3] else None,
            "mentioned_at": f[4].isoformat() if f[4] else None,
            "tags": list(f[5] or []),
        }
        for f in facts
    ]
    return out


def _bank(row: Any) -> dict[str, Any]:
    return {
        "bank_id": row[0],
        "facts": int(row[1]),
        "version": int(row[2]),
        "created_at": row[3].isoformat() if row[3] else None,
    }
