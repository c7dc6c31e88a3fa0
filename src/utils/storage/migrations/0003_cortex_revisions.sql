-- Every change to a cortex file, newest id last. A row starts uncommitted (committed = 0) before
-- the file is replaced on disk and is committed right after; a writer killed in between leaves a
-- pending row that the next access resolves against the disk (kept if the disk has it, else
-- dropped). No foreign key to personas: the default cortex exists before any persona row, and
-- deleting a persona deletes its revisions explicitly. job_id has no declared type so the update
-- service's ids come back exactly as stored.
CREATE TABLE cortex_revisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    persona_id TEXT NOT NULL,
    filename TEXT NOT NULL CHECK (filename IN ('memory.md', 'soul.md', 'relationship.md')),
    author TEXT NOT NULL CHECK (author IN ('user', 'ai', 'template', 'restore', 'external')),
    content TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    chars INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    job_id,
    message_from INTEGER,
    message_to INTEGER,
    summary TEXT NOT NULL DEFAULT '',
    committed INTEGER NOT NULL DEFAULT 1 CHECK (committed IN (0, 1))
);
CREATE INDEX cortex_revisions_by_file ON cortex_revisions(persona_id, filename, committed, id);
