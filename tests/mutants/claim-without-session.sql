-- MUTANT claim-without-session: the claim does not record the claiming session, so the row
-- names no owner (session_id stays NULL) and the stop hook cannot find it.
-- Breaks 000 "3. Atomic Task Claim" (`SET state = 'working', session_id = '{session_id}', …`)
-- and 000 "Implementation-Hook Integration" (the hook finds the session's row by session_id).

-- name: claim_task
UPDATE orchestration_tasks
SET state = 'working',
    worked_by = :worked_by,
    started_at = datetime('now'),
    last_heartbeat = datetime('now'),
    retry_count = 0
WHERE task_id = :task_id
  AND state IN ('watching', 'fix_proposed', 'exit_requested');
