-- Change counters for what a chat turn reads but rarely changes (issue #23). Each process keeps
-- the configuration rows a turn reads (settings, the persona, its user persona, its world books)
-- and the newest cortex revision ids, parsed, for as long as the counter they depend on is
-- unchanged (`storage/generations.py`); a turn reads this one row instead of those rows. The
-- triggers below raise `config` on every insert, update and delete of a configuration table
-- and `cortex` on every change of `cortex_revisions`, in the writer's own transaction, so a
-- write from any process and any path (REST, imports, the memory process, raw SQL in a
-- migration or a test) is seen by the next turn of every process. A migration that rebuilds
-- one of these tables must create its triggers again (tests/storage/test_generations.py checks
-- that every table has them).
CREATE TABLE generations (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    config INTEGER NOT NULL,
    cortex INTEGER NOT NULL
);
INSERT INTO generations (id, config, cortex) VALUES (1, 0, 0);

-- settings
CREATE TRIGGER settings_config_insert AFTER INSERT ON settings BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER settings_config_update AFTER UPDATE ON settings BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER settings_config_delete AFTER DELETE ON settings BEGIN
    UPDATE generations SET config = config + 1;
END;

-- personas
CREATE TRIGGER personas_config_insert AFTER INSERT ON personas BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER personas_config_update AFTER UPDATE ON personas BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER personas_config_delete AFTER DELETE ON personas BEGIN
    UPDATE generations SET config = config + 1;
END;

-- persona_avatars
CREATE TRIGGER persona_avatars_config_insert AFTER INSERT ON persona_avatars BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER persona_avatars_config_update AFTER UPDATE ON persona_avatars BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER persona_avatars_config_delete AFTER DELETE ON persona_avatars BEGIN
    UPDATE generations SET config = config + 1;
END;

-- user_personas
CREATE TRIGGER user_personas_config_insert AFTER INSERT ON user_personas BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER user_personas_config_update AFTER UPDATE ON user_personas BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER user_personas_config_delete AFTER DELETE ON user_personas BEGIN
    UPDATE generations SET config = config + 1;
END;

-- user_persona_avatars
CREATE TRIGGER user_persona_avatars_config_insert AFTER INSERT ON user_persona_avatars BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER user_persona_avatars_config_update AFTER UPDATE ON user_persona_avatars BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER user_persona_avatars_config_delete AFTER DELETE ON user_persona_avatars BEGIN
    UPDATE generations SET config = config + 1;
END;

-- world_books
CREATE TRIGGER world_books_config_insert AFTER INSERT ON world_books BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER world_books_config_update AFTER UPDATE ON world_books BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER world_books_config_delete AFTER DELETE ON world_books BEGIN
    UPDATE generations SET config = config + 1;
END;

-- world_entries
CREATE TRIGGER world_entries_config_insert AFTER INSERT ON world_entries BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER world_entries_config_update AFTER UPDATE ON world_entries BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER world_entries_config_delete AFTER DELETE ON world_entries BEGIN
    UPDATE generations SET config = config + 1;
END;

-- persona_world_books
CREATE TRIGGER persona_world_books_config_insert AFTER INSERT ON persona_world_books BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER persona_world_books_config_update AFTER UPDATE ON persona_world_books BEGIN
    UPDATE generations SET config = config + 1;
END;
CREATE TRIGGER persona_world_books_config_delete AFTER DELETE ON persona_world_books BEGIN
    UPDATE generations SET config = config + 1;
END;

-- cortex_revisions
CREATE TRIGGER cortex_revisions_cortex_insert AFTER INSERT ON cortex_revisions BEGIN
    UPDATE generations SET cortex = cortex + 1;
END;
CREATE TRIGGER cortex_revisions_cortex_update AFTER UPDATE ON cortex_revisions BEGIN
    UPDATE generations SET cortex = cortex + 1;
END;
CREATE TRIGGER cortex_revisions_cortex_delete AFTER DELETE ON cortex_revisions BEGIN
    UPDATE generations SET cortex = cortex + 1;
END;

-- The cortex trigger's count after every reply (`cortex_input.trigger_state`): the finished,
-- active, not imported messages of a persona after an id, read from this index alone instead of
-- from each message row (the rows hold the texts).
CREATE INDEX messages_unprocessed ON messages(persona_id, id)
    WHERE on_branch = 1 AND imported = 0 AND streaming = 0;
