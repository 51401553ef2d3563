"""The shared HNSW index holds only the memories of banks too big to search exactly.

A bank of at most 5,000 memories is never searched through the HNSW index: recall scores every
memory of a bank up to 20,000 (``recall_filters.EXACT_SEARCH_MAX_UNITS``) and ingest's link
k-NN up to 5,000 (``links_repo.LINK_EXACT_MAX_UNITS``). Yet each of its memories was inserted
into the index, about 0.9 ms apiece once the table held 110,000 memories: 250 facts into a new
bank took 235 ms with the index and 17 ms without (BENCHMARKS.md, "Small banks out of the HNSW
index"). The index is now partial, ``WHERE ann_indexed``; ingest sets the flag on a bank's
memories once the bank holds more than 5,000 (``schema.ANN_INDEX_MIN_UNITS``), all of them at
once when it crosses, so an ANN query that adds ``AND m.ann_indexed`` sees every memory of its
bank. The upgrade flags the big banks' memories before it builds the index (one bulk build).

Revision ID: 0008_ann_index_big_banks
Revises: 0007_bank_search_index
"""

from alembic import op

revision = "0008_ann_index_big_banks"
down_revision = "0007_bank_search_index"
branch_labels = None
depends_on = None

MIN_UNITS = 5_000  # schema.ANN_INDEX_MIN_UNITS when this was written (a test checks they agree)


def upgrade() -> None:
    op.execute("ALTER TABLE memory_units ADD COLUMN IF NOT EXISTS ann_indexed boolean NOT NULL DEFAULT false")
    op.execute("DROP INDEX IF EXISTS memory_units_embedding_hnsw")
    op.execute(
        "UPDATE memory_units m SET ann_indexed = true FROM banks b "
        f"WHERE b.id = m.bank_id AND b.unit_count > {MIN_UNITS} AND NOT m.ann_indexed"
    )
    op.execute(
        "CREATE INDEX memory_units_embedding_hnsw ON memory_units USING hnsw (embedding vector_cosine_ops) "
        "WHERE ann_indexed"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS memory_units_embedding_hnsw")
    op.execute("CREATE INDEX memory_units_embedding_hnsw ON memory_units USING hnsw (embedding vector_cosine_ops)")
    op.execute("ALTER TABLE memory_units DROP COLUMN IF EXISTS ann_indexed")
