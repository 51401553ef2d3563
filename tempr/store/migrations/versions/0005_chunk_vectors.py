"""Chunks keep an embedding of their own: the second text representation of every memory.

A fact drops words its source chunk kept ("Alice joined Helix Health" from a turn about her
new job), so the learned ranker reads the query's cosine to the chunk beside its cosine to the
fact. NULL: a chunk written before this column, or with ``TEMPR_CHUNK_VECTORS=false``; the
ranker then reads the fact's cosine in its place. The vector is in the bank's space
(``banks.embedder``), like its memories'. Staged imports carry it per staged row until publish.

Revision ID: 0005_chunk_vectors
Revises: 0004_bank_embedder
"""

from alembic import op

revision = "0005_chunk_vectors"
down_revision = "0004_bank_embedder"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE chunks ADD COLUMN IF NOT EXISTS embedding vector(384)")


def downgrade() -> None:
    op.execute("ALTER TABLE chunks DROP COLUMN IF EXISTS embedding")
