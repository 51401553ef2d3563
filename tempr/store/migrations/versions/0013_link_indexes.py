"""``memory_links``: two indexes instead of three, each able to answer the graph walk on its own.

The table had its primary key (from, to, type) and two lookup indexes, (from, type, weight) and
(to, type, weight). The graph walk reads a frontier memory's links by one end and needs the
other end and the weight: neither lookup index held the other end, so every link it read cost a
visit to the table's heap, and every link ingest wrote went into three B-trees.

Now the primary key is (from, type, to) INCLUDE (weight): it keeps the uniqueness that
``ON CONFLICT DO NOTHING`` relies on and answers the walk's forward lookups from the index
alone. The reverse index is (to, type, from) INCLUDE (weight). Nothing read the links in weight
order (the walk takes each neighbour's largest weight), so no ordering is lost.
Measured in BENCHMARKS.md, "Two link indexes instead of three".

On a large database this rebuilds two indexes over every link while the table is locked
(about a minute per 10 million links on two cores); plan it like any index build.

Revision ID: 0013_link_indexes
Revises: 0012_bank_own_index
"""

from alembic import op

revision = "0013_link_indexes"
down_revision = "0012_bank_own_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "ALTER TABLE memory_links DROP CONSTRAINT memory_links_pkey, "
        "ADD CONSTRAINT memory_links_pkey PRIMARY KEY (from_unit_id, link_type, to_unit_id) INCLUDE (weight)"
    )
    op.execute("DROP INDEX IF EXISTS memory_links_from")
    op.execute("DROP INDEX IF EXISTS memory_links_to")
    op.execute("CREATE INDEX memory_links_to ON memory_links (to_unit_id, link_type, from_unit_id) INCLUDE (weight)")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS memory_links_to")
    op.execute(
        "ALTER TABLE memory_links DROP CONSTRAINT memory_links_pkey, "
        "ADD CONSTRAINT memory_links_pkey PRIMARY KEY (from_unit_id, to_unit_id, link_type)"
    )
    op.execute("CREATE INDEX memory_links_from ON memory_links (from_unit_id, link_type, weight DESC)")
    op.execute("CREATE INDEX memory_links_to ON memory_links (to_unit_id, link_type, weight DESC)")
