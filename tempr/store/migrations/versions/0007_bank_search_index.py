"""BM25's GIN index leads with the bank: a bank's keyword search reads only its own postings.

The text index was on ``search_vector`` alone, shared by every bank, so the keyword strategy's
index scan returned the postings of the query's words in *all* banks and then intersected them
with the bank's rows: a 10,000-fact bank beside a 1,000,000-fact one read the big bank's
postings on every query (18 of its 47 ms, measured; BENCHMARKS.md, "BM25 at scale"). With
``btree_gin`` (installed by 0001) the index takes ``bank_id`` as its first column, and the scan
returns the bank's matching rows only. Built in about 7 s per million memories on 2 cores.

Revision ID: 0007_bank_search_index
Revises: 0006_bm25_bounds
"""

from alembic import op

revision = "0007_bank_search_index"
down_revision = "0006_bm25_bounds"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS memory_units_bank_search ON memory_units USING gin (bank_id, search_vector)")
    op.execute("DROP INDEX IF EXISTS memory_units_search_vector")


def downgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS memory_units_search_vector ON memory_units USING gin (search_vector)")
    op.execute("DROP INDEX IF EXISTS memory_units_bank_search")
