-- MUTANT set-error-counts-no-retry: an error report sets `error` but does not count the retry,
-- so retry_count stays 0 and the 5th failure never ends the task.
-- Breaks 000 "Execution Queries 7. Error Report": "update state to `error`, increment retry
-- count" and 004 "Report Error": `retry_count = retry_count + 1`.

-- name: set_error
UPDATE orchestration_tasks
SET state = 'error',
    last_error = :last_error,
    last_heartbeat = datetime('now')
WHERE task_id = :task_id;
