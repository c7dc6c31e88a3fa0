-- A persona may name its own model (issue 13); NULL means the app setting's model. The id is
-- the current provider's (e.g. `claude-opus-5-5` or `qwen2.5:7b`).
ALTER TABLE personas ADD COLUMN model TEXT;
