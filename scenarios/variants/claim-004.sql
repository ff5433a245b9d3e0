-- docs/protocol.md D1 and D2 together: seed 004's own claim ("SQL Patterns / Atomic claim",
-- "template follow=exact"), its guard and its worked_by. The variants `guard-not-in` and
-- `worked-by-session-id` each replace `claim_task`; named together, in either order, they run
-- this (sim/input/variant.rs `COMPOSITIONS`, docs/protocol.md C136).
-- name: claim_task
UPDATE orchestration_tasks
SET state = 'working',
    session_id = :session_id,
    worked_by = :session_id,
    started_at = datetime('now'),
    last_heartbeat = datetime('now'),
    retry_count = 0
WHERE task_id = :task_id
  AND state NOT IN ('working', 'complete', 'exited');
