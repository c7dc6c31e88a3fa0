-- A persona deletion in progress: written in the transaction that deletes the persona row and
-- removed once its cortex directory, revisions and lock file are gone. A row left behind by a
-- crash is completed at the next start-up.
CREATE TABLE persona_deletions (
    persona_id TEXT PRIMARY KEY,
    requested_at TEXT NOT NULL
);
