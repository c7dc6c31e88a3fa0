-- Session titles as queued requests (issue #23): a chat worker queues one after a session's
-- first complete exchange, and the memory process (or, without one, a thread of the same app)
-- claims it with an owner token and a lease, as cortex jobs are claimed (0009). A title is a
-- nicety: nothing waits for one, and a failed or interrupted request is simply queued again
-- after a later reply. The texts are the exchange as the title prompt reads it (2,000
-- characters of each side). Finished rows are pruned after a day.
CREATE TABLE title_jobs (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    user_text TEXT NOT NULL,
    reply_text TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
    owner TEXT,
    lease_until REAL,
    error TEXT,
    created_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE UNIQUE INDEX title_jobs_one_active ON title_jobs(session_id)
    WHERE status IN ('queued', 'running');
CREATE INDEX title_jobs_queued ON title_jobs(created_at) WHERE status = 'queued';
CREATE INDEX title_jobs_finished ON title_jobs(finished_at) WHERE finished_at IS NOT NULL;
