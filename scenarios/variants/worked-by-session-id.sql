-- docs/protocol.md D2: seed 004's claim records the session id as worked_by.
-- name: claim_task
UPDATE orchestration_tasks
SET state = 'working',
    session_id = :session_id,
    worked_by = :session_id,
    started_at = datetime('now'),
    last_heartbeat = datetime('now'),
    retry_count = 0
WHERE task_id = :task_id
  AND state IN ('watching', 'fix_proposed', 'exit_requested');
