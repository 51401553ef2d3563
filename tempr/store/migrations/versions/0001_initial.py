"""Initial schema: banks, documents, chunks, memory units, entities, links, BM25 term statistics.

Revision ID: 0001
Revises:
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

UPGRADE = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- Bank versions come from one sequence, so a deleted and re-created bank never reuses a
-- version that a cached answer was keyed on.
CREATE SEQUENCE bank_version_seq;
CREATE TABLE banks (
    id          text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$'),
    version     bigint NOT NULL DEFAULT nextval('bank_version_seq'),
    unit_count  bigint NOT NULL DEFAULT 0,          -- BM25: N
    total_len   bigint NOT NULL DEFAULT 0,          -- BM25: sum of document lengths
    text_config regconfig NOT NULL DEFAULT 'english',
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE documents (
    bank_id    text NOT NULL REFERENCES banks(id) ON DELETE CASCADE,
    id         text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bank_id, id)
);

CREATE TABLE chunks (
    bank_id     text NOT NULL REFERENCES banks(id) ON DELETE CASCADE,
    id          text NOT NULL,
    document_id text,
    text        text NOT NULL,
    PRIMARY KEY (bank_id, id)
);

CREATE TABLE memory_units (
    id             uuid PRIMARY KEY,
    bank_id        text NOT NULL REFERENCES banks(id) ON DELETE CASCADE,
    fact_id        text NOT NULL,
    text           text NOT NULL CHECK (length(text) > 0),
    context        text,
    fact_type      text NOT NULL CHECK (fact_type IN ('world', 'experience', 'observation')),
    embedding      vector(384) NOT NULL,
    occurred_start timestamptz,
    occurred_end   timestamptz,
    mentioned_at   timestamptz,
    event_date     timestamptz GENERATED ALWAYS AS (COALESCE(occurred_start, occurred_end, mentioned_at)) STORED,
    proof_count    integer NOT NULL DEFAULT 1 CHECK (proof_count >= 1),
    tags           text[] NOT NULL DEFAULT '{}',
    metadata       jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    document_id    text,
    chunk_id       text,
    search_vector  tsvector NOT NULL,
    doc_len        integer NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (bank_id, fact_id),
    CHECK (occurred_end IS NULL OR occurred_start IS NULL OR occurred_end >= occurred_start)
);
-- ANN: one HNSW index; recall filters by bank inside the query with pgvector's iterative scan,
-- and the planner switches to the (bank_id, fact_type) index + exact sort for small banks.
CREATE INDEX memory_units_embedding_hnsw ON memory_units USING hnsw (embedding vector_cosine_ops);
CREATE INDEX memory_units_bank_type ON memory_units (bank_id, fact_type);
CREATE INDEX memory_units_bank_event_date ON memory_units (bank_id, event_date);
CREATE INDEX memory_units_bank_occurred ON memory_units (bank_id, occurred_start, occurred_end);
CREATE INDEX memory_units_bank_mentioned ON memory_units (bank_id, mentioned_at);
CREATE INDEX memory_units_search_vector ON memory_units USING gin (search_vector);
CREATE INDEX memory_units_tags ON memory_units USING gin (tags);

CREATE TABLE entities (
    id             bigserial PRIMARY KEY,
    bank_id        text NOT NULL REFERENCES banks(id) ON DELETE CASCADE,
    canonical_name text NOT NULL CHECK (length(canonical_name) > 0)
);
CREATE UNIQUE INDEX entities_bank_name ON entities (bank_id, lower(canonical_name));

CREATE TABLE unit_entities (
    unit_id   uuid NOT NULL REFERENCES memory_units(id) ON DELETE CASCADE,
    entity_id bigint NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    PRIMARY KEY (unit_id, entity_id)
);
CREATE INDEX unit_entities_entity ON unit_entities (entity_id, unit_id);

CREATE TABLE memory_links (
    from_unit_id uuid NOT NULL REFERENCES memory_units(id) ON DELETE CASCADE,
    to_unit_id   uuid NOT NULL REFERENCES memory_units(id) ON DELETE CASCADE,
    link_type    text NOT NULL CHECK (link_type IN ('semantic', 'temporal', 'causal')),
    weight       double precision NOT NULL CHECK (weight >= 0 AND weight <= 1),
    PRIMARY KEY (from_unit_id, to_unit_id, link_type),
    CHECK (from_unit_id <> to_unit_id)
);
CREATE INDEX memory_links_from ON memory_links (from_unit_id, link_type, weight DESC);
CREATE INDEX memory_links_to ON memory_links (to_unit_id, link_type, weight DESC);

CREATE TABLE bm25_terms (
    bank_id text NOT NULL REFERENCES banks(id) ON DELETE CASCADE,
    term    text NOT NULL,
    df      integer NOT NULL CHECK (df >= 0),
    PRIMARY KEY (bank_id, term)
);
"""

DOWNGRADE = """
DROP TABLE IF EXISTS bm25_terms, memory_links, unit_entities, entities, memory_units, chunks, documents, banks;
DROP SEQUENCE IF EXISTS bank_version_seq;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
