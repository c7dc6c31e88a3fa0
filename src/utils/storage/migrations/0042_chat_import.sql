-- Chat import (issue 24, DESIGN §16): an imported message is an ordinary message of its
-- session's tree, marked `imported = 1`. The cortex trigger and the regular update leave such
-- messages out (learning happens on request, never because a history was imported); a later
-- "learn from it" step reads them by this mark.
ALTER TABLE messages ADD COLUMN imported INTEGER NOT NULL DEFAULT 0 CHECK (imported IN (0, 1));
-- A session made by an import: it opens with its own first message, so neither the chat nor the
-- prompt adds the persona's greeting before it.
ALTER TABLE sessions ADD COLUMN imported INTEGER NOT NULL DEFAULT 0 CHECK (imported IN (0, 1));
