"""SQL for tenants and API keys (``tempr.auth`` holds the rules; this module only reads and writes)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, text


@dataclass(frozen=True)
class KeyRow:
    id: str
    tenant: str
    key_hash: str
    banks: tuple[str, ...]
    roles: tuple[str, ...]
    note: str
    created_at: datetime | None
    revoked_at: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tenant": self.tenant,
            "banks": list(self.banks),
            "roles": list(self.roles),
            "note": self.note,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
        }


_COLUMNS = "id, tenant, key_hash, banks, roles, note, created_at, revoked_at"


def _row(r: Any) -> KeyRow:
    return KeyRow(r[0], r[1], r[2], tuple(r[3]), tuple(r[4]), r[5], r[6], r[7])


def ensure_tenant(conn: Connection, name: str, webhook_secret: str) -> str:
    """Create the tenant with this secret unless it exists; return the tenant's secret."""
    conn.execute(
        text("INSERT INTO tenants (name, webhook_secret) VALUES (:n, :s) ON CONFLICT (name) DO NOTHING"),
        {"n": name, "s": webhook_secret},
    )
    return str(conn.execute(text("SELECT webhook_secret FROM tenants WHERE name = :n"), {"n": name}).scalar_one())


def tenant_secret(conn: Connection, name: str) -> str | None:
    value = conn.execute(text("SELECT webhook_secret FROM tenants WHERE name = :n"), {"n": name}).scalar()
    return None if value is None else str(value)


def insert_key(
    conn: Connection, key_id: str, tenant: str, key_hash: str, banks: list[str], roles: list[str], note: str
) -> None:
    conn.execute(
        text(
            "INSERT INTO api_keys (id, tenant, key_hash, banks, roles, note) "
            "VALUES (:id, :t, :h, CAST(:b AS text[]), CAST(:r AS text[]), :note)"
        ),
        {"id": key_id, "t": tenant, "h": key_hash, "b": banks, "r": roles, "note": note},
    )


def find_key(conn: Connection, key_id: str) -> KeyRow | None:
    r = conn.execute(text(f"SELECT {_COLUMNS} FROM api_keys WHERE id = :id"), {"id": key_id}).first()
    return None if r is None else _row(r)


def live_keys_of(conn: Connection, tenant: str) -> list[KeyRow]:
    rows = conn.execute(
        text(f"SELECT {_COLUMNS} FROM api_keys WHERE tenant = :t AND revoked_at IS NULL"), {"t": tenant}
    )
    return [_row(r) for r in rows]


def list_keys(conn: Connection, tenant: str | None = None) -> list[KeyRow]:
    where, params = ("WHERE tenant = :t", {"t": tenant}) if tenant else ("", {})
    rows = conn.execute(text(f"SELECT {_COLUMNS} FROM api_keys {where} ORDER BY created_at, id"), params)
    return [_row(r) for r in rows]


def revoke_key(conn: Connection, key_id: str) -> bool:
    """True when the key existed and was live; revoking twice is a no-op."""
    result = conn.execute(
        text("UPDATE api_keys SET revoked_at = now() WHERE id = :id AND revoked_at IS NULL"), {"id": key_id}
    )
    return bool(result.rowcount)
