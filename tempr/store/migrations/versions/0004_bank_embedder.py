"""Banks record the vector space their embeddings were written in (``tempr.providers.embedder.spaces``).

NULL is a bank written before this column existed: read as the exact MiniLM space, the
default embedder of those versions.

Revision ID: 0004_bank_embedder
Revises: 0003_api_keys
"""

from alembic import op

revision = "0004_bank_embedder"
down_revision = "0003_api_keys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE banks ADD COLUMN IF NOT EXISTS embedder text")
    # an import embeds every chunk in one space, chosen when it is registered
    op.execute("ALTER TABLE import_jobs ADD COLUMN IF NOT EXISTS embedder text")


def downgrade() -> None:
    op.execute("ALTER TABLE banks DROP COLUMN IF EXISTS embedder")
    op.execute("ALTER TABLE import_jobs DROP COLUMN IF EXISTS embedder")
