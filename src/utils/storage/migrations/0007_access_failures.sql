-- Failed sign-ins and wrong tokens, shared by every worker process: the per-address limit and
-- the global cap count rows here inside a sliding window; older rows are pruned on insert.
CREATE TABLE access_failures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    client TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX access_failures_by_client ON access_failures(client, at);
CREATE INDEX access_failures_by_time ON access_failures(at);
