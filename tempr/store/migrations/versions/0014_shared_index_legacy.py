"""``banks.shared_index``: only banks already in the shared HNSW index keep entering it.

Since 0012 every bank past 5,000 memories gets an HNSW index of its own, built seconds after the
write that takes it there. That write still put the bank's earlier memories into the shared
index first (one UPDATE, an HNSW insert per memory: 1.6-7.8 s for a bank of 5,100 beside the
100k bench bank), only for the bank to leave it for its own index moments later; those entries
then stayed in the shared graph, which every search through it walks. Now a bank never enters
the shared index: until its own index is ready it is searched exactly (what every bank of up to
20,000 memories got anyway). Banks whose memories are in it already (written before this
version, and not yet moved to an index of their own) are flagged here and keep their path.

Revision ID: 0014_shared_index_legacy
Revises: 0013_link_indexes
"""

from alembic import op

revision = "0014_shared_index_legacy"
down_revision = "0013_link_indexes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE banks ADD COLUMN IF NOT EXISTS shared_index boolean NOT NULL DEFAULT false")
    op.execute(
        "UPDATE banks SET shared_index = true WHERE id IN (SELECT DISTINCT bank_id FROM memory_units WHERE ann_indexed)"
    )


def downgrade() -> None:
    # Before this version a bank past 5,000 memories without an index of its own was searched
    # through the shared index: put the memories of such banks there, or that search loses them.
    op.execute(
        "UPDATE memory_units m SET ann_indexed = true FROM banks b "
        "WHERE b.id = m.bank_id AND NOT b.own_index AND b.unit_count > 5000 AND NOT m.ann_indexed"
    )
    op.execute("ALTER TABLE banks DROP COLUMN IF EXISTS shared_index")
