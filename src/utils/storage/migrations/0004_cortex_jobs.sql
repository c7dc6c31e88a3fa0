-- Cortex update jobs and trigger state. Partial unique indexes make "one queued and one running
-- job per persona" a property of the schema: a second trigger coalesces into the queued job.
CREATE TABLE cortex_jobs (
    id TEXT PRIMARY KEY,
    persona_id TEXT NOT NULL REFERENCES personas(id) ON DELETE CASCADE,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    trigger TEXT NOT NULL DEFAULT 'manual' CHECK (trigger IN ('threshold', 'idle', 'manual')),
    files TEXT NOT NULL DEFAULT '[]',
    usage TEXT,
    summary TEXT NOT NULL DEFAULT '',
    error TEXT,
    error_message TEXT,
    retryable INTEGER NOT NULL DEFAULT 0,
    message_from INTEGER,
    message_to INTEGER,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT
);
CREATE INDEX cortex_jobs_by_persona ON cortex_jobs(persona_id, created_at);
CREATE INDEX cortex_jobs_by_status ON cortex_jobs(status, created_at);
CREATE UNIQUE INDEX cortex_jobs_one_queued ON cortex_jobs(persona_id) WHERE status = 'queued';
CREATE UNIQUE INDEX cortex_jobs_one_running ON cortex_jobs(persona_id) WHERE status = 'running';

-- The last message id a successful update processed, per persona; advanced only on success.
CREATE TABLE cortex_state (
    persona_id TEXT PRIMARY KEY REFERENCES personas(id) ON DELETE CASCADE,
    last_processed_id INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);
