"""BM25 term bounds: each term's largest tf and shortest memory, so top-k BM25 can skip postings.

``tempr.core.bm25_bounds`` uses them to prove that memories holding only common query words
cannot reach the top k, and then never scores them. The defaults (tf 256, the most a
tsvector keeps, and length 0) are the loosest valid bounds; existing rows are then filled
from the memories themselves, in one pass over each bank's tsvectors.

Revision ID: 0006_bm25_bounds
Revises: 0005_chunk_vectors
"""

from alembic import op

revision = "0006_bm25_bounds"
down_revision = "0005_chunk_vectors"
branch_labels = None
depends_on = None

# Each term's bounds from the memories themselves (the expressions ingest and BM25 use).
BACKFILL = """
UPDATE bm25_terms t SET max_tf = s.max_tf, min_len = s.min_len
FROM (SELECT m.bank_id, u.lexeme, max(GREATEST(cardinality(u.positions), 1)) AS max_tf,
             min(m.doc_len) AS min_len
      FROM memory_units m, unnest(m.search_vector) AS u
      GROUP BY m.bank_id, u.lexeme) s
WHERE t.bank_id = s.bank_id AND t.term = s.lexeme
"""


def upgrade() -> None:
    op.execute("ALTER TABLE bm25_terms ADD COLUMN IF NOT EXISTS max_tf integer NOT NULL DEFAULT 256")
    op.execute("ALTER TABLE bm25_terms ADD COLUMN IF NOT EXISTS min_len integer NOT NULL DEFAULT 0")
    op.execute(BACKFILL)


def downgrade() -> None:
    op.execute("ALTER TABLE bm25_terms DROP COLUMN IF EXISTS min_len, DROP COLUMN IF EXISTS max_tf")
