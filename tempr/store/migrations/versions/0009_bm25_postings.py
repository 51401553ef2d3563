"""BM25 reads a postings table: one narrow row per (bank, term, memory), not each memory's tsvector.

The keyword statement found its candidates through the GIN index on ``(bank_id, search_vector)``
and then read each candidate's whole ``memory_units`` row (a 384-d vector, text and metadata:
a few rows per page) to unnest its tsvector. At 1,000,000 facts a question naming a person
scored about 19,000 memories, 14,561 heap pages outside shared buffers and 140 ms of unnesting:
320 ms of the statement (BENCHMARKS.md, "BM25 at scale"). ``bm25_postings`` holds what the score
needs, keyed so that one term's postings in one bank are adjacent in one B-tree, with ``tf`` and
``doc_len`` in the index (``INCLUDE``): the statement is an index-only scan and an aggregate, no
heap row and no tsvector read. Ingest writes a memory's postings in the statement that inserts
the memory (``ingest_repo.insert_units``). The GIN index had no other reader and cost every
insert its maintenance, so it goes; ``search_vector`` stays (ingest derives postings, ``doc_len``
and the term statistics from it).

Revision ID: 0009_bm25_postings
Revises: 0008_ann_index_big_banks
"""

from alembic import op

revision = "0009_bm25_postings"
down_revision = "0008_ann_index_big_banks"
branch_labels = None
depends_on = None

# The tf expression is BM25's and ``bm25_terms.max_tf``'s (a lexeme without positions counts once).
BACKFILL = """
INSERT INTO bm25_postings (bank_id, term, unit_id, tf, doc_len)
SELECT m.bank_id, u.lexeme, m.id, GREATEST(cardinality(u.positions), 1), m.doc_len
FROM memory_units m, unnest(m.search_vector) AS u
ON CONFLICT DO NOTHING
"""


# A bank's postings go with the bank, as its memories do (their foreign key cascades). Not a
# foreign key here: its check ran once per posting, half of what postings added to ingest's
# write (31 of 65 us a fact, measured); one statement per DELETE on banks costs nothing there.
DROP_WITH_BANK = (
    """
    CREATE OR REPLACE FUNCTION bm25_postings_drop_bank() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM bm25_postings p USING gone g WHERE p.bank_id = g.id;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER banks_drop_bm25_postings AFTER DELETE ON banks
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION bm25_postings_drop_bank()
    """,
)


def upgrade() -> None:
    op.execute("""
    CREATE TABLE IF NOT EXISTS bm25_postings (
        bank_id  text NOT NULL,
        term     text NOT NULL,
        unit_id  uuid NOT NULL,
        tf       integer NOT NULL,
        doc_len  integer NOT NULL,
        PRIMARY KEY (bank_id, term, unit_id) INCLUDE (tf, doc_len)
    )
    """)
    for statement in DROP_WITH_BANK:
        op.execute(statement)
    op.execute(BACKFILL)
    op.execute("DROP INDEX IF EXISTS memory_units_bank_search")


def downgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS memory_units_bank_search ON memory_units USING gin (bank_id, search_vector)")
    op.execute("DROP TRIGGER IF EXISTS banks_drop_bm25_postings ON banks")
    op.execute("DROP FUNCTION IF EXISTS bm25_postings_drop_bank()")
    op.execute("DROP TABLE IF EXISTS bm25_postings")
