-- Alters a table: refused at load.
-- name: heartbeat
ALTER TABLE orchestration_tasks ADD COLUMN x INTEGER;
