-- MUTANT set-error-counts-down: an error report lowers retry_count instead of raising it
-- (0 → −1 → −2 …), so the 5th failure never comes.
-- Breaks 004 "Report Error" (`retry_count = retry_count + 1`) and 000 "Execution Queries 7.
-- Error Report" ("increment retry count").

-- name: set_error
UPDATE orchestration_tasks
SET state = 'error',
    retry_count = retry_count - 1,
    last_error = :last_error,
    last_heartbeat = datetime('now')
WHERE task_id = :task_id;
