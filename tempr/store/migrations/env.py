"""Alembic environment: tempr passes the database URL in programmatically (tempr db upgrade)."""

from alembic import context
from sqlalchemy import create_engine, pool

url = context.config.get_main_option("sqlalchemy.url")
engine = create_engine(url, poolclass=pool.NullPool)
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=None, transaction_per_migration=True)
    with context.begin_transaction():
        # One migration at a time across the fleet: services up may race with a worker's start-up.
        connection.exec_driver_sql("SELECT pg_advisory_xact_lock(727301)")
        context.run_migrations()
engine.dispose()
