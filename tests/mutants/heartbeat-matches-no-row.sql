-- MUTANT heartbeat-matches-no-row: the heartbeat UPDATE matches no row (`WHERE 0`), so it
-- changes nothing, and the session reads "0 rows" as having lost its task.
-- Breaks 000 "Execution Queries 4. Heartbeat Update (Step Boundary)": "update the task row's
-- `last_heartbeat` to the current time" (`WHERE task_id = 'task-{NN}'`).

-- name: heartbeat
UPDATE orchestration_tasks
SET last_heartbeat = datetime('now')
WHERE 0;
