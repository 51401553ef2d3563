"""Import staging: chunked, resumable imports that become visible in one publishing transaction.

Revision ID: i13_import_staging
Revises: 0001
"""

from alembic import op

revision = "i13_import_staging"
down_revision = "0001"
branch_labels = None
depends_on = None

UPGRADE = """
-- One row per import. Staged rows are invisible to recall (nothing reads staged_units but
-- the publish step), so a failed or abandoned import leaves nothing a query can see.
CREATE TABLE import_jobs (
    id           text PRIMARY KEY,
    bank_id      text NOT NULL,
    status       text NOT NULL DEFAULT 'staging'
                 CHECK (status IN ('staging', 'publishing', 'published', 'failed')),
    total        integer NOT NULL,
    chunks_total integer NOT NULL,
    error        text,
    report       jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX import_jobs_status_updated ON import_jobs (status, updated_at);

-- A chunk is staged in one transaction together with its row here: a retried chunk
-- replaces its rows, and "facts done" is the sum over this table.
CREATE TABLE import_chunks (
    import_id text NOT NULL REFERENCES import_jobs(id) ON DELETE CASCADE,
    chunk     integer NOT NULL,
    facts     integer NOT NULL,
    PRIMARY KEY (import_id, chunk)
);

CREATE TABLE staged_units (
    import_id      text NOT NULL REFERENCES import_jobs(id) ON DELETE CASCADE,
    chunk          integer NOT NULL,
    line           integer NOT NULL,
    id             uuid NOT NULL,
    bank_id        text NOT NULL,
    fact_id        text NOT NULL,
    text           text NOT NULL,
    context        text,
    fact_type      text NOT NULL,
    embedding      vector(384) NOT NULL,
    occurred_start timestamptz,
    occurred_end   timestamptz,
    mentioned_at   timestamptz,
    proof_count    integer NOT NULL,
    tags           text[] NOT NULL,
    metadata       jsonb NOT NULL,
    document_id    text,
    chunk_id       text,
    chunk_text     text,
    entity_names   text[] NOT NULL,
    caused_by      text[] NOT NULL,
    PRIMARY KEY (import_id, chunk, line)
);
"""

DOWNGRADE = """
DROP TABLE IF EXISTS staged_units, import_chunks, import_jobs;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
