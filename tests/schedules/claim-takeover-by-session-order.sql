-- MUTANT claim-takeover-by-session-order (for `rehearsal explore schedules`): the claim also
-- takes over a row held by a session whose id sorts lower, as if session ids grew with time
-- and a newer session should win (a fencing token that is not monotonic: the ids are random
-- UUIDs). Whether it double-claims depends on which of two racing sessions claims first:
-- the default order of scenarios/schedules/double-launch.toml seed 1 passes (the holder's
-- id sorts higher), and the order with the twin first fails.
-- Breaks 000 "3. Atomic Task Claim": only claimable states allow the UPDATE.

-- name: claim_task
UPDATE orchestration_tasks
SET state = 'working',
    session_id = :session_id,
    worked_by = :worked_by,
    started_at = datetime('now'),
    last_heartbeat = datetime('now'),
    retry_count = 0
WHERE task_id = :task_id
  AND (state IN ('watching', 'fix_proposed', 'exit_requested') OR session_id < :session_id);
