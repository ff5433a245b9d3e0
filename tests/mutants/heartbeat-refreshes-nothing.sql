-- MUTANT heartbeat-refreshes-nothing: the heartbeat UPDATE matches the row but writes the old
-- value back, so step boundaries and watcher refreshes never move `last_heartbeat`; only
-- state changes do, and a long step looks like a dead session.
-- Breaks 000 "Execution Queries 4. Heartbeat Update (Step Boundary)": "update the task row's
-- `last_heartbeat` to the current time", and 000 "Heartbeat Refresh (Both Modes)": "If
-- seconds_stale > 480 (8 minutes): Update heartbeat".

-- name: heartbeat
UPDATE orchestration_tasks
SET last_heartbeat = last_heartbeat
WHERE task_id = :task_id;
