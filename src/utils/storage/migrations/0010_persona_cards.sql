-- Character-card fields (DESIGN §12). Lists and objects are JSON text. `card` keeps the card's
-- other data verbatim (creator, character_version, nickname, source, dates, character_book,
-- group_only_greetings, assets, creator_notes_multilingual) so an export gives them back.
ALTER TABLE personas ADD COLUMN personality TEXT NOT NULL DEFAULT '';
ALTER TABLE personas ADD COLUMN scenario TEXT NOT NULL DEFAULT '';
ALTER TABLE personas ADD COLUMN example_dialogue TEXT NOT NULL DEFAULT '';
ALTER TABLE personas ADD COLUMN alternate_greetings TEXT NOT NULL DEFAULT '[]';
ALTER TABLE personas ADD COLUMN creator_notes TEXT NOT NULL DEFAULT '';
ALTER TABLE personas ADD COLUMN system_prompt TEXT NOT NULL DEFAULT '';
ALTER TABLE personas ADD COLUMN post_history_instructions TEXT NOT NULL DEFAULT '';
ALTER TABLE personas ADD COLUMN use_card_prompts INTEGER NOT NULL DEFAULT 1;
ALTER TABLE personas ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE personas ADD COLUMN extensions TEXT NOT NULL DEFAULT '{}';
ALTER TABLE personas ADD COLUMN card TEXT NOT NULL DEFAULT '{}';

-- The persona's picture, already re-encoded (PNG, JPEG or WebP). In SQLite rather than a file so
-- creating a persona with its avatar is one transaction, and a backup snapshot holds both.
CREATE TABLE persona_avatars (
    persona_id TEXT PRIMARY KEY REFERENCES personas(id) ON DELETE CASCADE,
    mime TEXT NOT NULL CHECK (mime IN ('image/png', 'image/jpeg', 'image/webp')),
    data BLOB NOT NULL,
    sha256 TEXT NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
