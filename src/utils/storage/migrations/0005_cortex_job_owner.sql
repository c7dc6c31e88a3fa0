-- The process that claimed a running cortex job, so a process starting up fails only the jobs
-- of processes that are gone, not those another live worker process is running.
ALTER TABLE cortex_jobs ADD COLUMN claimed_by INTEGER;
