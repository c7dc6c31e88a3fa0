-- Learning from an imported history (issue 24, docs/chat-import.md#learning-from-it).
-- Jobs gain the reason 'learn'. The reason's CHECK came with an ADD COLUMN (0018), so the table is
-- rebuilt (no table references cortex_jobs; rowids are kept, jobs are ordered by them). One queued
-- job per persona and kind: a learn run waits beside a queued update and a queued consolidation.
CREATE TABLE cortex_jobs_new (
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
    finished_at TEXT,
    claimed_by INTEGER,
    owner TEXT,
    lease_until REAL,
    attempted TEXT,
    reason TEXT NOT NULL DEFAULT 'manual'
        CHECK (reason IN ('threshold', 'idle', 'manual', 'reconcile', 'consolidate', 'learn')),
    proposal_id TEXT
);
INSERT INTO cortex_jobs_new (rowid, id, persona_id, status, trigger, files, usage, summary, error,
    error_message, retryable, message_from, message_to, created_at, started_at, finished_at,
    claimed_by, owner, lease_until, attempted, reason, proposal_id)
    SELECT rowid, id, persona_id, status, trigger, files, usage, summary, error, error_message,
    retryable, message_from, message_to, created_at, started_at, finished_at, claimed_by, owner,
    lease_until, attempted, reason, proposal_id FROM cortex_jobs;
DROP TABLE cortex_jobs;
ALTER TABLE cortex_jobs_new RENAME TO cortex_jobs;
CREATE INDEX cortex_jobs_by_persona ON cortex_jobs(persona_id, created_at);
CREATE INDEX cortex_jobs_by_status ON cortex_jobs(status, created_at);
CREATE UNIQUE INDEX cortex_jobs_one_running ON cortex_jobs(persona_id) WHERE status = 'running';
CREATE UNIQUE INDEX cortex_jobs_one_queued ON cortex_jobs(
    persona_id, CASE reason WHEN 'consolidate' THEN 1 WHEN 'learn' THEN 2 ELSE 0 END)
    WHERE status = 'queued';

-- A learn job's own row: what the job columns cannot hold (the session, the window size,
-- progress and a cancel request, read by the job between windows and by the guard of its one
-- apply at the end).
CREATE TABLE cortex_learn_runs (
    job_id TEXT PRIMARY KEY REFERENCES cortex_jobs(id) ON DELETE CASCADE,
    persona_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    window_messages INTEGER NOT NULL CHECK (window_messages > 0),
    windows INTEGER NOT NULL DEFAULT 0,
    windows_done INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0,
    cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
    created_at TEXT NOT NULL
);
CREATE INDEX cortex_learn_runs_by_session ON cortex_learn_runs(session_id, created_at);
