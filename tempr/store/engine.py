"""One SQLAlchemy engine per process, created lazily and disposed after fork."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event


def make_engine(database_url: str, *, pool_size: int = 5) -> Engine:
    engine = create_engine(
        database_url,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        connect_args={"connect_timeout": 10},
    )
    event.listen(engine, "connect", _register_vector)
    return engine


def _register_vector(dbapi_connection: Any, _record: object) -> None:
    import psycopg
    from pgvector.psycopg import register_vector

    try:
        register_vector(dbapi_connection)
    except psycopg.ProgrammingError:  # no vector type yet: the first migration creates it
        pass
