-- Variant `claim-compare-and-set` (issue 48, in the `repaired` profile; docs/protocol.md C82),
-- first shipped as an example of a designer's own SQL: a compare-and-set claim. The seeds' claim_task takes the row whenever its state is claimable; this one takes
-- it only if its owner is still the one the claiming session saw (:previous_session_id: a
-- successor's read_task_record, NULL for a task's first session), so of two sessions that
-- read the same owner only the first to write wins, and a claim made on a stale read changes
-- no row (the session then writes its fallback row, 000 "Guard Block Fallback"). A double
-- launch's twin is a first session (NULL): it cannot take a row its original claimed, in
-- whatever claimable state the conductor's answer left it (`fix_proposed` being reworked,
-- `exit_requested` being left), which the seeds' guard by state alone allows.
-- Run it with: rehearsal run SCENARIO --sql scenarios/variants/claim-compare-and-set.sql
-- or side by side: rehearsal compare SCENARIO --variants default,scenarios/variants/claim-compare-and-set.sql
-- name: claim_task
UPDATE orchestration_tasks
SET state = 'working',
    session_id = :session_id,
    worked_by = :worked_by,
    started_at = datetime('now'),
    last_heartbeat = datetime('now'),
    retry_count = 0
WHERE task_id = :task_id
  AND state IN ('watching', 'fix_proposed', 'exit_requested')
  AND session_id IS :previous_session_id
  -- A task's first session (:attempt 1, a double launch's twin included) saw no owner because
  -- it read none: it claims only a row no session has claimed yet (`watching`, 004 "Initial
  -- State"). A row the conductor released (release-stale, release-asked-exit) names no
  -- session either, but it has a history: only the successor the conductor launched for it
  -- reads that history (003), and a late twin or a first session woken from a hang that took
  -- it would start over and handle the task's messages again (issue 48: swarm-1-00422 seed 3;
  -- docs/protocol.md C89).
  AND (:attempt > 1 OR state = 'watching');
