"""API keys and tenants: keys stored as SHA-256 hashes, scoped to bank patterns and roles.

Revision ID: 0003_api_keys
Revises: i13_import_staging
"""

from alembic import op

revision = "0003_api_keys"
down_revision = "i13_import_staging"
branch_labels = None
depends_on = None

UPGRADE = """
-- A tenant owns jobs and signs its webhooks with its own secret (generated at its first key).
CREATE TABLE tenants (
    name           text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    webhook_secret text NOT NULL CHECK (length(webhook_secret) >= 32),
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- The key itself is never stored: only sha256(secret part). `id` is the public part of the key.
CREATE TABLE api_keys (
    id         text PRIMARY KEY,
    tenant     text NOT NULL REFERENCES tenants(name) ON DELETE CASCADE,
    key_hash   text NOT NULL CHECK (key_hash ~ '^[0-9a-f]{64}$'),
    banks      text[] NOT NULL CHECK (cardinality(banks) > 0),
    roles      text[] NOT NULL CHECK (cardinality(roles) > 0 AND roles <@ ARRAY['recall', 'ingest', 'admin']),
    note       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
CREATE INDEX api_keys_tenant ON api_keys (tenant);
"""

DOWNGRADE = """
DROP TABLE IF EXISTS api_keys, tenants;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
