-- MUTANT heartbeat-as-select: the heartbeat is a read (a SELECT of the heartbeat) instead of
-- an UPDATE. The simulator refuses to load a statement whose write flag changed, so this
-- mutant is caught at load, before any actor runs.
-- Breaks 000 "Execution Queries 4. Heartbeat Update (Step Boundary)": `UPDATE
-- orchestration_tasks SET last_heartbeat = datetime('now') WHERE task_id = 'task-{NN}'`.

-- name: heartbeat
SELECT last_heartbeat FROM orchestration_tasks
WHERE task_id = :task_id;
