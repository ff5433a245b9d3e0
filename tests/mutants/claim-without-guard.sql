-- MUTANT claim-without-guard: the claim has no guard clause, so any session claims the task
-- whatever its state (under review, complete, already worked).
-- Breaks 000 "3. Atomic Task Claim": "The `state IN ('watching', 'fix_proposed',
-- 'exit_requested')` ensures only claimable states allow the UPDATE. Prevents claiming a task
-- that is already being worked on, already finished, or already exited." (002 "Guard Clause
-- Rules" says the same.)

-- name: claim_task
UPDATE orchestration_tasks
SET state = 'working',
    session_id = :session_id,
    worked_by = :worked_by,
    started_at = datetime('now'),
    last_heartbeat = datetime('now'),
    retry_count = 0
WHERE task_id = :task_id;
