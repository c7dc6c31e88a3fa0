-- Which of the persona's greetings opens the session: 0 is `greeting` (a card's first_mes),
-- n is `alternate_greetings[n-1]` (the numbering of SPEC_V3's @@is_greeting). Chosen before the
-- first message and fixed after it, so the prompt holds the greeting the person saw.
ALTER TABLE sessions ADD COLUMN greeting_index INTEGER NOT NULL DEFAULT 0;
