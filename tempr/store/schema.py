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
"""The shared HNSW index as migration 0008 defines it (``bench.bulk_bank`` drops and rebuilds it)."""
ANN_INDEX_MIN_UNITS = 5_000
"""A bank's memories are in the HNSW index (``ann_indexed``) once the bank holds more than this
many. Smaller banks are searched exactly by recall and by ingest's link k-NN, so their index
entries were never read, yet cost about 0.9 ms each to insert (migration 0008)."""
