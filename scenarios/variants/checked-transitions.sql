-- Variant `checked-transitions` (issue 28): the musician's writes that end a wait or leave the
-- task also check the row's state, a compare-and-set on 002 "Valid State Transitions". A pause
-- watcher decides on a TIMEOUT from a read, and a clean exit writes its HANDOFF for a minute or
-- two before `exited`: the conductor's answer (fix_proposed, review_approved, review_failed)
-- can land in between, and the seeds' UPDATE (only `task_id`) or fencing's (and `session_id`)
-- overwrites it with a transition 002 does not have (scenarios/bench/fleet-1000.toml seed 7:
-- `fix_proposed → error` by `set_error`, `fix_proposed → exited` by `mark_exited`). Each
-- statement below keeps fencing's `session_id` check (scenarios/variants/fencing.sql) and adds
-- the states 002 (with the transitions the text implies, docs/protocol.md D10) lets the
-- musician leave by it. A write that changes no row while the row still names the session
-- means the conductor answered first (a hand-over clears `session_id` under `release-stale`):
-- the session reads the row and acts on the answer (sim/actors/musician/mod.rs
-- `checked_write`, review.rs, exit.rs).

-- name: set_error
-- 002: working → error; D10: needs_review → error (a pause TIMEOUT); error → error (a second
-- report, no transition).
UPDATE orchestration_tasks
SET state = 'error',
    retry_count = retry_count + 1,
    last_error = :last_error,
    last_heartbeat = datetime('now')
WHERE task_id = :task_id AND session_id = :session_id
  AND state IN ('working', 'needs_review', 'error');

-- name: set_escalation
-- As `set_error`, without the retry (variant `timeout-not-counted`, escalations).
UPDATE orchestration_tasks
SET state = 'error', last_heartbeat = datetime('now'),
    last_error = :last_error
WHERE task_id = :task_id AND session_id = :session_id
  AND state IN ('working', 'needs_review', 'error');

-- name: set_context_warning
-- 000 Execution Queries 6: from the work (002: working → error); error → error is no
-- transition (a row an earlier report left in `error`).
UPDATE orchestration_tasks
SET state = 'error', last_heartbeat = datetime('now'),
    last_error = 'context_exhaustion_warning'
WHERE task_id = :task_id AND session_id = :session_id
  AND state IN ('working', 'error');

-- name: mark_exited
-- 002: working → exited, error → exited; D10: review_failed → exited ("prepare handoff now");
-- D16: exit_requested → exited (a session the conductor asked to exit; under
-- `exit-requested-conductor-only` no task row is ever `exit_requested`, so that state never
-- matches there).
UPDATE orchestration_tasks
SET state = 'exited', last_heartbeat = datetime('now')
WHERE task_id = :task_id AND session_id = :session_id
  AND state IN ('working', 'error', 'review_failed', 'exit_requested');
