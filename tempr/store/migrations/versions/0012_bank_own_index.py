"""``banks.own_index``: the bank's own HNSW index (``tempr.store.bank_index``) is built and valid.

A large bank's searches used the one HNSW index all banks share, walking other banks' nodes on
the way; a bank past 5,000 memories now gets a partial index of its own, built concurrently
after the write that takes it there. Existing large banks get theirs from ``tempr db
index-banks`` or their next write; until then they are searched as before.

Revision ID: 0012_bank_own_index
Revises: 0011_token_vectors
"""

from alembic import op

revision = "0012_bank_own_index"
down_revision = "0011_token_vectors"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE banks ADD COLUMN IF NOT EXISTS own_index boolean NOT NULL DEFAULT false")


def downgrade() -> None:
    # The banks' own indexes go too: without the flag nothing would search through them, and a
    # bank's new memories skipped the shared index while it had one, so they re-enter it here.
    op.execute("""
        DO $$
        DECLARE r record;
        BEGIN
            FOR r IN SELECT relname FROM pg_class
                     WHERE relkind = 'i' AND left(relname, 18) = 'memory_units_hnsw_' LOOP
                EXECUTE format('DROP INDEX IF EXISTS %I', r.relname);
            END LOOP;
        END $$""")
    op.execute(
        "UPDATE memory_units m SET ann_indexed = true FROM banks b "
        "WHERE b.id = m.bank_id AND b.own_index AND NOT m.ann_indexed"
    )
    op.execute("ALTER TABLE banks DROP COLUMN IF EXISTS own_index")
