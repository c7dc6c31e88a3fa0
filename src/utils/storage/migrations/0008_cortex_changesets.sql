-- Staged cortex edits being applied as one group (see src/utils/cortex/staged_apply.py). A row
-- is written, with the group's revisions as pending rows, before any file is replaced, and is
-- deleted in the transaction that commits those revisions (and marks the job's messages
-- processed). A row that outlives its writer means a crash mid-apply: the next holder of the
-- persona's lock completes the group from the pending revisions.
CREATE TABLE cortex_changesets (
    id TEXT PRIMARY KEY,
    persona_id TEXT NOT NULL,
    job_id TEXT,
    revisions TEXT NOT NULL,
    message_to INTEGER,
    outcome TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE INDEX cortex_changesets_by_persona ON cortex_changesets(persona_id);
