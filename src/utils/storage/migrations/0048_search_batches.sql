-- The search index (0017) takes new text in batches (issue #23). Updating FTS5 row by row cost a
-- chat turn about 0.2 ms of its SQL: every write transaction that touches the index reads its
-- structure, writes a new segment and three more pages. Now a new or edited message only
-- enters `messages_fts_pending`; `storage/search.py` indexes the waiting messages together, at
-- the end of a turn once PENDING_BATCH wait, at the end of an import, and before every search,
-- so a search still sees every message as it is. The index holds exactly the messages that do
-- not wait, with their current text: an edit or a delete of an indexed message takes its old
-- words out at once (never found again), one of a waiting message only changes what waits.
CREATE TABLE messages_fts_pending (id INTEGER PRIMARY KEY);

DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT OR IGNORE INTO messages_fts_pending (id) VALUES (new.id);
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) SELECT 'delete', old.id, old.content
        WHERE NOT EXISTS (SELECT 1 FROM messages_fts_pending WHERE id = old.id);
    DELETE FROM messages_fts_pending WHERE id = old.id;
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) SELECT 'delete', old.id, old.content
        WHERE NOT EXISTS (SELECT 1 FROM messages_fts_pending WHERE id = old.id);
    INSERT OR IGNORE INTO messages_fts_pending (id) VALUES (new.id);
END;
