-- Variant `checked-answers` (issue 48, in the `repaired` profile; docs/protocol.md C83): the
-- writes that answer across the conductor/musician line also check the row's state, as
-- `checked-transitions` does for the musician's error and exit writes.
--
-- set_needs_review: a musician's review request is decided on its own work, and the
-- conductor's exit request (002 "States the Conductor Sets": `exit_requested`) can land
-- between the decision and the write; fencing's UPDATE (`task_id` and `session_id`) then
-- moves `exit_requested → needs_review`, which 002 "Valid State Transitions" does not have
-- (swarm --seed 1: 7 pairs of 930). It keeps fencing's check and adds the states 002 lets the
-- musician ask for a review from (working, review_approved, review_failed, fix_proposed); a
-- write that changes no row ends the session (fenced out, as under `fencing`), and the
-- conductor hands the asked task over when its heartbeat goes stale (release-asked-exit).
-- name: set_needs_review
UPDATE orchestration_tasks
SET state = 'needs_review',
    last_heartbeat = datetime('now')
WHERE task_id = :task_id AND session_id = :session_id AND state IN ('working', 'review_approved', 'review_failed', 'fix_proposed');

-- set_task_state: the conductor decides on a poll that can be reviews old (C3); a row that
-- went `complete` meanwhile "cannot transition back" (002 "Terminal States"), and a review's
-- answer (`review_approved`, `review_failed`) belongs on a row that asked for one (002
-- "States the Conductor Sets"). The seeds' UPDATE checks only `task_id`; this one changes no
-- row otherwise (swarm --seed 1: an exit request written over `complete`, 2 pairs of 930).
-- 004 Heartbeat Rule: every UPDATE that changes state also sets last_heartbeat.
-- name: set_task_state
UPDATE orchestration_tasks
SET state = :state,
    last_heartbeat = datetime('now')
WHERE task_id = :task_id
  AND state <> 'complete'
  AND (:state NOT IN ('review_approved', 'review_failed') OR state IN ('needs_review', 'error'))
  AND (:state <> 'exit_requested' OR state <> 'exited');
