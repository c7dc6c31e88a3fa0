-- World info (issue 24, DESIGN §16): lorebooks used at chat time.
-- A book is a V2/V3 `character_book` object kept verbatim (`data`, without its entries); each
-- entry is its own row (`data`, the entry object verbatim) so it has an id the API and the UI
-- can address, and `position` keeps the card's order for export. `persona_id` names the persona
-- whose card brought the book (its own book, exported with its card); NULL is a shared book.
-- Which books a persona uses is `persona_world_books` (its own book is attached on import).
CREATE TABLE world_books (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    persona_id TEXT REFERENCES personas(id) ON DELETE CASCADE,
    data TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX world_books_own ON world_books(persona_id) WHERE persona_id IS NOT NULL;

CREATE TABLE world_entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    book_id INTEGER NOT NULL REFERENCES world_books(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX world_entries_by_book ON world_entries(book_id, position);

CREATE TABLE persona_world_books (
    persona_id TEXT NOT NULL REFERENCES personas(id) ON DELETE CASCADE,
    book_id INTEGER NOT NULL REFERENCES world_books(id) ON DELETE CASCADE,
    PRIMARY KEY (persona_id, book_id)
);
CREATE INDEX persona_world_books_by_book ON persona_world_books(book_id);

-- The world info entries that were in an assistant message's prompt (JSON list, see
-- docs/world-info.md); NULL for replies without any (or older than this migration).
ALTER TABLE messages ADD COLUMN world_info TEXT;

-- Books imported before this migration were kept in the persona's `card`: they become the
-- persona's own book (same rule as an import: an object whose `entries` is a list of objects).
INSERT INTO world_books (persona_id, data, created_at, updated_at)
SELECT id, json_remove(json_extract(card, '$.character_book'), '$.entries'), created_at, updated_at
FROM personas
WHERE json_valid(card) AND json_type(card, '$.character_book') = 'object'
  AND json_type(card, '$.character_book.entries') = 'array'
  AND NOT EXISTS (SELECT 1 FROM json_each(personas.card, '$.character_book.entries') e
                  WHERE e.type != 'object');

INSERT INTO world_entries (book_id, position, data)
SELECT b.id, e.key, e.value
FROM world_books b JOIN personas p ON p.id = b.persona_id,
     json_each(p.card, '$.character_book.entries') e;

INSERT INTO persona_world_books (persona_id, book_id)
SELECT persona_id, id FROM world_books WHERE persona_id IS NOT NULL;

UPDATE personas SET card = json_remove(card, '$.character_book')
WHERE id IN (SELECT persona_id FROM world_books WHERE persona_id IS NOT NULL);
