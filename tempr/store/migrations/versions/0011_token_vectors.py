"""Each memory's content-token vectors (int8, ``tempr.core.token_match``), for the ranker's word-by-word match.

Nullable: memories written before this version, or with ``TEMPR_TOKEN_VECTORS=false``, have
none, and the ranker reads their token features as missing. Staged imports carry them too, so a
publish writes what the staging step computed.

Revision ID: 0011_token_vectors
Revises: 0010_links_without_foreign_keys
"""

from alembic import op

revision = "0011_token_vectors"
down_revision = "0010_links_without_foreign_keys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE memory_units ADD COLUMN IF NOT EXISTS tokens bytea")
    op.execute("ALTER TABLE staged_units ADD COLUMN IF NOT EXISTS tokens bytea")


def downgrade() -> None:
    op.execute("ALTER TABLE staged_units DROP COLUMN IF EXISTS tokens")
    op.execute("ALTER TABLE memory_units DROP COLUMN IF EXISTS tokens")
