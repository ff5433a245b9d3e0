-- Changes the journal mode: refused at load.
-- name: poll_tasks
PRAGMA journal_mode = DELETE;
