-- Learning from an imported history (issue 24, docs/chat-import.md#learning-from-it): a cortex
-- job with reason 'learn' reads an imported session's active branch in windows. One row per such
-- job holds what the job columns cannot: the session, the window size, progress and a cancel
-- request, read by the job between windows and by the guard of its one apply at the end.
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
-- A queued learn run waits beside a queued update and a queued consolidation (one of each).
DROP INDEX cortex_jobs_one_queued;
CREATE UNIQUE INDEX cortex_jobs_one_queued ON cortex_jobs(
    persona_id, CASE reason WHEN 'consolidate' THEN 1 WHEN 'learn' THEN 2 ELSE 0 END)
    WHERE status = 'queued';
