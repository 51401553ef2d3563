"""SQLAlchemy Core descriptions of tempr's tables, for building queries.

The DDL itself (indexes, checks, extensions) is owned by the Alembic
migrations in ``tempr/store/migrations``; these Table objects mirror the
columns so queries can be written with Core instead of strings.
"""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR, UUID

EMBEDDING_DIM = 384
FACT_TYPES = ("world", "experience", "observation")
LINK_TYPES = ("semantic", "temporal", "causal")

metadata = MetaData()

banks = Table(
    "banks",
    metadata,
    Column("id", Text, primary_key=True),
    Column("version", BigInteger, nullable=False, server_default="0"),
    Column("unit_count", BigInteger, nullable=False, server_default="0"),
    Column("total_len", BigInteger, nullable=False, server_default="0"),
    Column("text_config", Text, nullable=False, server_default="english"),
    Column("created_at", DateTime(timezone=True)),
)

documents = Table(
    "documents",
    metadata,
    Column("bank_id", Text, ForeignKey("banks.id", ondelete="CASCADE"), primary_key=True),
    Column("id", Text, primary_key=True),
    Column("created_at", DateTime(timezone=True)),
)

chunks = Table(
    "chunks",
    metadata,
    Column("bank_id", Text, ForeignKey("banks.id", ondelete="CASCADE"), primary_key=True),
    Column("id", Text, primary_key=True),
    Column("document_id", Text),
    Column("text", Text, nullable=False),
)

memory_units = Table(
    "memory_units",
    metadata,
    Column("id", UUID(as_uuid=False), primary_key=True),
    Column("bank_id", Text, ForeignKey("banks.id", ondelete="CASCADE"), nullable=False),
    Column("fact_id", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("context", Text),
    Column("fact_type", Text, nullable=False),
    Column("embedding", Vector(EMBEDDING_DIM), nullable=False),
    Column("occurred_start", DateTime(timezone=True)),
    Column("occurred_end", DateTime(timezone=True)),
    Column("mentioned_at", DateTime(timezone=True)),
    Column("event_date", DateTime(timezone=True)),
    Column("proof_count", Integer, nullable=False, server_default="1"),
    Column("tags", ARRAY(Text), nullable=False, server_default="{}"),
    Column("metadata", JSONB, nullable=False, server_default="{}"),
    Column("document_id", Text),
    Column("chunk_id", Text),
    Column("search_vector", TSVECTOR, nullable=False),
    Column("doc_len", Integer, nullable=False, server_default="0"),
    Column("created_at", DateTime(timezone=True)),
)

entities = Table(
    "entities",
    metadata,
    Column("id", BigInteger, primary_key=True),
    Column("bank_id", Text, ForeignKey("banks.id", ondelete="CASCADE"), nullable=False),
    Column("canonical_name", Text, nullable=False),
)

unit_entities = Table(
    "unit_entities",
    metadata,
    Column("unit_id", UUID(as_uuid=False), ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True),
    Column("entity_id", BigInteger, ForeignKey("entities.id", ondelete="CASCADE"), primary_key=True),
)

memory_links = Table(
    "memory_links",
    metadata,
    Column("from_unit_id", UUID(as_uuid=False), ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True),
    Column("to_unit_id", UUID(as_uuid=False), ForeignKey("memory_units.id", ondelete="CASCADE"), primary_key=True),
    Column("link_type", Text, primary_key=True),
    Column("weight", Float, nullable=False),
)

bm25_terms = Table(
    "bm25_terms",
    metadata,
    Column("bank_id", Text, ForeignKey("banks.id", ondelete="CASCADE"), primary_key=True),
    Column("term", Text, primary_key=True),
    Column("df", Integer, nullable=False),
)
