-- MUTANT mark-complete-every-row: the terminal write has no WHERE clause, so the first task
-- to finish marks every row `complete`: the other musicians' tasks and the conductor's own.
-- Breaks 000 "Execution Queries 9. Final Complete (TERMINAL WRITE)" and 004 "Mark Complete":
-- `UPDATE orchestration_tasks SET state = 'complete', … WHERE task_id = 'task-{NN}'`.

-- name: mark_complete
UPDATE orchestration_tasks
SET state = 'complete', last_heartbeat = datetime('now'),
    completed_at = datetime('now'),
    report_path = :report_path;
