-- Messages form a tree: each message answers its parent (NULL for a session's first), siblings
-- are alternatives at one position (an edit, a regenerated reply), and a session shows one branch,
-- the path from the root to its active leaf. `on_branch` caches "on the active branch" so the
-- cortex can count and read the conversation as the person now sees it. A reply is stored the
-- moment it starts (`streaming` = 1, status 'incomplete', its text flushed as it grows), so it
-- survives a reload, can be followed from another worker process, and is already marked
-- incomplete if the process dies. `error` holds a failed reply's {code, message, retryable}.
ALTER TABLE messages ADD COLUMN parent_id INTEGER REFERENCES messages(id) ON DELETE CASCADE;
ALTER TABLE messages ADD COLUMN on_branch INTEGER NOT NULL DEFAULT 1;
ALTER TABLE messages ADD COLUMN edited INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN streaming INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN stop_reason TEXT;
ALTER TABLE messages ADD COLUMN error TEXT;
ALTER TABLE sessions ADD COLUMN active_leaf_id INTEGER REFERENCES messages(id) ON DELETE SET NULL;
UPDATE messages SET parent_id = (
    SELECT MAX(p.id) FROM messages p WHERE p.session_id = messages.session_id AND p.id < messages.id);
UPDATE sessions SET active_leaf_id = (SELECT MAX(m.id) FROM messages m WHERE m.session_id = sessions.id);
CREATE INDEX messages_by_parent ON messages(session_id, parent_id, id);
CREATE INDEX messages_streaming ON messages(streaming) WHERE streaming = 1;

-- How the conversation the cortex sees changed: a message left the active branch ('retracted':
-- an edit or regeneration replaced it, the person switched branches, or it was deleted) or came
-- back onto it ('restored'). One log for every cause, so memory reconciliation (retraction of
-- processed messages) reads one place; `handled_at` is set by whoever acts on a row. No foreign
-- key to messages: a deleted message keeps its record and the hash of what it said.
CREATE TABLE message_changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    persona_id TEXT NOT NULL REFERENCES personas(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    message_id INTEGER NOT NULL,
    change TEXT NOT NULL CHECK (change IN ('retracted', 'restored')),
    cause TEXT NOT NULL CHECK (cause IN ('edit', 'regenerate', 'switch', 'delete')),
    replaced_by INTEGER,
    content_sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL,
    handled_at TEXT
);
CREATE INDEX message_changes_by_persona ON message_changes(persona_id, handled_at, id);
