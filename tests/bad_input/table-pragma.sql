-- Reads the connection's internals: refused at load (issue 41).
-- name: poll_tasks
SELECT name FROM pragma_table_info('orchestration_tasks');
