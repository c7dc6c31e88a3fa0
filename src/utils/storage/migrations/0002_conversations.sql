-- Personas, their sessions and messages. Message ids grow globally, so "the persona's messages
-- after id N" is how the cortex trigger counts what is not yet processed.
CREATE TABLE personas (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    user_name TEXT NOT NULL DEFAULT '',
    language TEXT NOT NULL DEFAULT 'en',
    greeting TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    persona_id TEXT NOT NULL REFERENCES personas(id) ON DELETE CASCADE,
    title TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX sessions_by_persona ON sessions(persona_id, updated_at);

CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    persona_id TEXT NOT NULL REFERENCES personas(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'complete' CHECK (status IN ('complete', 'incomplete')),
    created_at TEXT NOT NULL
);
CREATE INDEX messages_by_session ON messages(session_id, id);
CREATE INDEX messages_by_persona ON messages(persona_id, id);
