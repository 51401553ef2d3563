"""``unit_entities`` without foreign keys: triggers remove a memory's or an entity's rows when it goes.

Each entity link ran two foreign-key checks on insert, a ``SELECT ... FOR KEY SHARE`` of its memory
and of its entity. The memory's check visits (and, taking the row lock, dirties) the memory's heap
page: at 1,000,000 memories that is a random page of a 4 GB table for each of 2.46M links, and the
1M import's entity links took 1,079 s where its 100k import took 6 s (BENCHMARKS.md, "A bulk
import's links walked by two sessions before its publish"). Measured on the 10k bench bank, cached,
24,522 links re-inserted in a rolled-back transaction, three alternated rounds: 330-363 ms with the
checks, 172-194 ms without. Ingest only links memories and entities of one bank, written in the
transaction that holds the bank's lock, so the checks never failed (``memory_links`` dropped its
keys for the same reason: 0010). What the keys also did is kept, their cascade: statement triggers
on ``memory_units`` and ``entities`` delete the rows of the memories and entities a statement
removed, whether a bank's cascade removed them or a hand-written DELETE.

Revision ID: 0015_unit_entities_without_fks
Revises: 0014_shared_index_legacy
"""

from alembic import op

revision = "0015_unit_entities_without_fks"
down_revision = "0014_shared_index_legacy"
branch_labels = None
depends_on = None


def _cascade(table: str, column: str) -> tuple[str, str]:
    """A function and an AFTER DELETE statement trigger on ``table``: the rows of ``unit_entities``
    whose ``column`` names a removed row go with it."""
    function = f"unit_entities_drop_{table}"
    return (
        f"""
        CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM unit_entities ue USING gone g WHERE ue.{column} = g.id;
            RETURN NULL;
        END $$
        """,
        f"""
        CREATE TRIGGER {table}_drop_unit_entities AFTER DELETE ON {table}
            REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION {function}()
        """,
    )


CASCADES = {"memory_units": "unit_id", "entities": "entity_id"}


def upgrade() -> None:
    op.execute("ALTER TABLE unit_entities DROP CONSTRAINT IF EXISTS unit_entities_unit_id_fkey")
    op.execute("ALTER TABLE unit_entities DROP CONSTRAINT IF EXISTS unit_entities_entity_id_fkey")
    for table, column in CASCADES.items():
        for statement in _cascade(table, column):
            op.execute(statement)


def downgrade() -> None:
    for table in CASCADES:
        op.execute(f"DROP TRIGGER IF EXISTS {table}_drop_unit_entities ON {table}")
        op.execute(f"DROP FUNCTION IF EXISTS unit_entities_drop_{table}()")
    op.execute(
        "DELETE FROM unit_entities ue WHERE NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.id = ue.unit_id) "
        "OR NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = ue.entity_id)"
    )
    op.execute(
        "ALTER TABLE unit_entities ADD CONSTRAINT unit_entities_unit_id_fkey "
        "FOREIGN KEY (unit_id) REFERENCES memory_units(id) ON DELETE CASCADE"
    )
    op.execute(
        "ALTER TABLE unit_entities ADD CONSTRAINT unit_entities_entity_id_fkey "
        "FOREIGN KEY (entity_id) REFERENCES entities(id) ON DELETE CASCADE"
    )
