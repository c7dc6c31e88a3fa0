-- Memory true to the conversation (issue 15): anchoring, reconciliation and provenance.
-- Which messages each revision came from, with a hash of each message's text when it was
-- processed. `kind` 'derived': an update (or accepted proposal) learned from the message;
-- 'retracted': a reconciliation (direct revert or model run) removed what came from it.
-- Rows go with their revision (a dropped pending revision drops its rows).
CREATE TABLE cortex_revision_sources (
    revision_id INTEGER NOT NULL REFERENCES cortex_revisions(id) ON DELETE CASCADE,
    message_id INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'derived' CHECK (kind IN ('derived', 'retracted')),
    PRIMARY KEY (revision_id, message_id, kind)
);
CREATE INDEX cortex_revision_sources_by_message ON cortex_revision_sources(message_id, kind);

-- A direct revert names the (earliest) revision it undoes; the file is back at the text of the
-- revision before that one.
ALTER TABLE cortex_revisions ADD COLUMN reverts INTEGER;

-- A deleted message's text, kept only until its reconciliation has run (then erased), so the
-- reconciliation prompt can show what was retracted.
ALTER TABLE message_changes ADD COLUMN content TEXT;

-- The cortex revisions (per file) that were in an assistant message's prompt: {"memory.md": 12}.
ALTER TABLE messages ADD COLUMN cortex_revisions TEXT;

-- The messages a pending proposal's edits came from, anchored when it is accepted.
ALTER TABLE cortex_proposals ADD COLUMN sources TEXT NOT NULL DEFAULT '[]';
