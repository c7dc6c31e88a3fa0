-- Review mode, pins and "sleep" consolidation (issue 16).
-- Jobs gain `reason` (the issue-15 contract: threshold | idle | manual | reconcile |
-- consolidate); `trigger` keeps what fired a job. One queued job per persona and kind: a
-- consolidation queues beside a regular update instead of being swallowed by it.
ALTER TABLE cortex_jobs ADD COLUMN reason TEXT NOT NULL DEFAULT 'manual'
    CHECK (reason IN ('threshold', 'idle', 'manual', 'reconcile', 'consolidate'));
UPDATE cortex_jobs SET reason = trigger;
ALTER TABLE cortex_jobs ADD COLUMN proposal_id TEXT;
DROP INDEX cortex_jobs_one_queued;
CREATE UNIQUE INDEX cortex_jobs_one_queued
    ON cortex_jobs(persona_id, reason = 'consolidate') WHERE status = 'queued';

-- Per-persona memory settings: review mode and the sleep schedule.
CREATE TABLE cortex_persona_settings (
    persona_id TEXT PRIMARY KEY REFERENCES personas(id) ON DELETE CASCADE,
    memory_review TEXT NOT NULL DEFAULT 'auto' CHECK (memory_review IN ('auto', 'review')),
    sleep_enabled INTEGER NOT NULL DEFAULT 1,
    sleep_sessions INTEGER NOT NULL DEFAULT 5,
    sleep_hours INTEGER NOT NULL DEFAULT 24,
    updated_at TEXT NOT NULL
);

-- A proposal: staged edits of a review-mode run, kept instead of applied. At most one proposal
-- per persona is pending; a later run builds on it and extends it.
CREATE TABLE cortex_proposals (
    id TEXT PRIMARY KEY,
    persona_id TEXT NOT NULL REFERENCES personas(id) ON DELETE CASCADE,
    status TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected')),
    job_ids TEXT NOT NULL DEFAULT '[]',
    kinds TEXT NOT NULL DEFAULT '[]',
    summary TEXT NOT NULL DEFAULT '',
    message_from INTEGER,
    message_to INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    decided_at TEXT
);
CREATE INDEX cortex_proposals_by_persona ON cortex_proposals(persona_id, status);

-- One file of a proposal: the revision and text it builds on, the proposed text, and the edits
-- that lead there (replayed on the current text when the base is stale).
CREATE TABLE cortex_proposal_files (
    proposal_id TEXT NOT NULL REFERENCES cortex_proposals(id) ON DELETE CASCADE,
    filename TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'rejected')),
    base_revision INTEGER NOT NULL,
    base_content TEXT NOT NULL,
    content TEXT NOT NULL,
    edits TEXT NOT NULL DEFAULT '[]',
    revision INTEGER,
    review TEXT,
    decided_at TEXT,
    PRIMARY KEY (proposal_id, filename)
);

-- Revisions made by accepting a proposal name it and how it was reviewed.
ALTER TABLE cortex_revisions ADD COLUMN proposal_id TEXT;
ALTER TABLE cortex_revisions ADD COLUMN review TEXT;

-- What a consolidation let go, per file, readable and restorable.
CREATE TABLE cortex_archive (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    persona_id TEXT NOT NULL REFERENCES personas(id) ON DELETE CASCADE,
    filename TEXT NOT NULL,
    text TEXT NOT NULL,
    chars INTEGER NOT NULL,
    job_id TEXT,
    revision_before INTEGER,
    revision_after INTEGER,
    created_at TEXT NOT NULL,
    restored_at TEXT,
    restored_revision INTEGER
);
CREATE INDEX cortex_archive_by_file ON cortex_archive(persona_id, filename, id);
