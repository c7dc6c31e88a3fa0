-- Job ownership that pid reuse and zombies cannot fool: `owner` is the token of the process
-- that claimed the job, alive exactly while it holds `DATA_DIR/locks/owners/<owner>.lock`
-- (flock, dropped by the kernel when the process exits). `lease_until` (epoch seconds) is
-- renewed by the owner's heartbeat; a running job past its lease is failed as interrupted.
-- `attempted` keeps the edits a failed run staged, for inspection (never applied).
ALTER TABLE cortex_jobs ADD COLUMN owner TEXT;
ALTER TABLE cortex_jobs ADD COLUMN lease_until REAL;
ALTER TABLE cortex_jobs ADD COLUMN attempted TEXT;
