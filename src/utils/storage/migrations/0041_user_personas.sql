-- User personas, "About you" (issue 24, DESIGN §16): who the person is in a conversation.
-- One of them may be the default (`is_default`, at most one row); a session records the one it
-- uses (`sessions.user_persona_id`, NULL: it follows the default). Deleting a user persona sets
-- its sessions back to NULL, so they follow the default again (docs/about-you.md).
CREATE TABLE user_personas (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    is_default INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX user_personas_one_default ON user_personas(is_default) WHERE is_default = 1;

-- Re-encoded picture bytes, as `persona_avatars` (never SVG, capped in size and pixels).
CREATE TABLE user_persona_avatars (
    user_persona_id INTEGER PRIMARY KEY REFERENCES user_personas(id) ON DELETE CASCADE,
    mime TEXT NOT NULL CHECK (mime IN ('image/png', 'image/jpeg', 'image/webp')),
    data BLOB NOT NULL,
    sha256 TEXT NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);

ALTER TABLE sessions ADD COLUMN user_persona_id INTEGER
    REFERENCES user_personas(id) ON DELETE SET NULL;

-- The single "Your name" setting becomes the default user persona (its name, no description);
-- sessions that existed before keep NULL and so follow the default, as they followed the setting.
INSERT INTO user_personas (name, description, is_default, created_at, updated_at)
SELECT trim(json_extract(value, '$.user_name')), '', 1,
       strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
FROM settings
WHERE key = 'app' AND json_valid(value) AND json_type(value, '$.user_name') = 'text'
  AND trim(json_extract(value, '$.user_name')) <> '';
