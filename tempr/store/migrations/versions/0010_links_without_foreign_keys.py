"""``memory_links`` without foreign keys: a trigger removes a memory's links when it goes.

Each link row ran two foreign-key checks on insert (a ``SELECT ... FOR KEY SHARE`` of each end in
``memory_units``): more than half of ingest's link write. Measured with the 1,210 LoCoMo facts
(15,365 links, one process, three rounds): ``write_links`` 0.143-0.161 s with both checks,
0.113-0.123 s without the ``to_unit_id`` one, 0.067-0.074 s without either (BENCHMARKS.md, "A
publish's reads and link writes"). Ingest only links memories of one bank, written in the
transaction that holds the bank's lock, so the checks never failed. What the keys also did is
kept: their cascade. A statement trigger on ``memory_units`` deletes the links of the memories a
statement removed (either end), whether the bank's cascade removed them or a hand-written DELETE.

Revision ID: 0010_links_without_foreign_keys
Revises: 0009_bm25_postings
"""

from alembic import op

revision = "0010_links_without_foreign_keys"
down_revision = "0009_bm25_postings"
branch_labels = None
depends_on = None

DROP_WITH_UNITS = (
    """
    CREATE OR REPLACE FUNCTION memory_links_drop_units() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM memory_links l USING gone g WHERE l.from_unit_id = g.id;
        DELETE FROM memory_links l USING gone g WHERE l.to_unit_id = g.id;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER memory_units_drop_links AFTER DELETE ON memory_units
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION memory_links_drop_units()
    """,
)


def upgrade() -> None:
    op.execute("ALTER TABLE memory_links DROP CONSTRAINT IF EXISTS memory_links_from_unit_id_fkey")
    op.execute("ALTER TABLE memory_links DROP CONSTRAINT IF EXISTS memory_links_to_unit_id_fkey")
    for statement in DROP_WITH_UNITS:
        op.execute(statement)


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS memory_units_drop_links ON memory_units")
    op.execute("DROP FUNCTION IF EXISTS memory_links_drop_units()")
    op.execute(
        "DELETE FROM memory_links l WHERE NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.id = l.from_unit_id) "
        "OR NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.id = l.to_unit_id)"
    )
    op.execute(
        "ALTER TABLE memory_links ADD CONSTRAINT memory_links_from_unit_id_fkey "
        "FOREIGN KEY (from_unit_id) REFERENCES memory_units(id) ON DELETE CASCADE"
    )
    op.execute(
        "ALTER TABLE memory_links ADD CONSTRAINT memory_links_to_unit_id_fkey "
        "FOREIGN KEY (to_unit_id) REFERENCES memory_units(id) ON DELETE CASCADE"
    )
