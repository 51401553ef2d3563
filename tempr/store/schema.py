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
