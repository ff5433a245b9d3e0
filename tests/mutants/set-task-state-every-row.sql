-- MUTANT set-task-state-every-row: the conductor's answer has no WHERE clause, so approving one
-- task's review writes the answer onto every row: the other tasks and the conductor's own.
-- Breaks 004 "Heartbeat Rule" / 002 "States the Conductor Sets": the conductor sets the state
-- of the task it answers (`WHERE task_id = '[task-id]'`).

-- name: set_task_state
UPDATE orchestration_tasks
SET state = :state,
    last_heartbeat = datetime('now');
