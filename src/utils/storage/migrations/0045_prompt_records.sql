-- Prompt inspector (issue 24, DESIGN §16, docs/prompt-inspector.md): the request each reply was
-- generated from, as the SDK sent it. One row per reply; the body is stored without the bytes
-- of its first system text (persona and cortex, the same on every turn of a persona until its
-- memory changes), which are kept once per distinct content in `prompt_prefixes` and put back
-- at `prefix_at`. The rest is zlib-compressed. Replies from before this migration have no row:
-- the inspector says "not recorded".
CREATE TABLE prompt_prefixes (
    hash TEXT PRIMARY KEY,
    bytes BLOB NOT NULL
);

CREATE TABLE reply_prompts (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    layout TEXT NOT NULL,
    prefix_hash TEXT REFERENCES prompt_prefixes(hash),
    prefix_at INTEGER NOT NULL DEFAULT 0,
    rest BLOB NOT NULL,
    usage TEXT,
    created_at TEXT NOT NULL
);

CREATE INDEX reply_prompts_prefix ON reply_prompts(prefix_hash);

-- A prefix goes with the last reply that used it (also when a session or persona cascade
-- deletes the replies).
CREATE TRIGGER reply_prompts_prefix_gone AFTER DELETE ON reply_prompts
WHEN OLD.prefix_hash IS NOT NULL
BEGIN
    DELETE FROM prompt_prefixes WHERE hash = OLD.prefix_hash
        AND NOT EXISTS (SELECT 1 FROM reply_prompts WHERE prefix_hash = OLD.prefix_hash);
END;

-- Provider token counts of a text (or a whole request) by model, so reopening the inspector
-- asks the provider nothing. The key is a SHA-256 of provider, model and text.
CREATE TABLE token_counts (
    key TEXT PRIMARY KEY,
    tokens INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
