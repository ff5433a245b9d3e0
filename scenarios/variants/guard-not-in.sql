-- docs/protocol.md D1: the claim guard of seed 004 "SQL Patterns / Atomic claim".
-- name: claim_task
UPDATE orchestration_tasks
SET state = 'working',
    session_id = :session_id,
    worked_by = :worked_by,
    started_at = datetime('now'),
    last_heartbeat = datetime('now'),
    retry_count = 0
WHERE task_id = :task_id
  AND state NOT IN ('working', 'complete', 'exited');
