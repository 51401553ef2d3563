"""Constants of tempr's schema that code outside the migration needs.

The schema itself (tables, indexes, checks, extensions) is owned by the Alembic migrations in
``tempr/store/migrations``; all SQL in ``tempr/store`` is written against it directly. (Table
objects mirroring it used to live here; nothing built queries from them and they had drifted
from the migration, so they were removed rather than kept as a second, wrong description.)
"""

from __future__ import annotations

EMBEDDING_DIM = 384
"""all-MiniLM-L6-v2's dimension: the ``vector(384)`` columns and every query's bound vector."""
FACT_TYPES = ("world", "experience", "observation")
LINK_TYPES = ("semantic", "temporal", "causal")

ANN_INDEX = "memory_units_embedding_hnsw"
ANN_INDEX_DDL = f"CREATE INDEX {ANN_INDEX} ON memory_units USING hnsw (embedding vector_cosine_ops) WHERE ann_indexed"
"""The shared HNSW index as migration 0008 defines it: since 0014 only banks written before then use it."""
ANN_INDEX_MIN_UNITS = 5_000
"""Past this many memories a bank gets an HNSW index of its own (``bank_index``), and ingest's link
k-NN goes through it; smaller banks are searched exactly by recall and by that k-NN. (Before
migration 0014 a bank this large entered the shared index, ``ann_indexed``, instead.)"""
