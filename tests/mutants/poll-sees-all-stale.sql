-- MUTANT poll-sees-all-stale: the conductor's poll reports every heartbeat as a day old, so it
-- hands every live, healthy session over to a successor.
-- Breaks 000 "Heartbeat Protocol" and 000 "Design Rationale" (8-minute refresh, 9-minute
-- staleness: only a heartbeat older than 540 s means a lost session), via 000 "Parallel
-- Awareness Queries 12" (`seconds_stale` computed from `last_heartbeat`).

-- name: poll_tasks
SELECT task_id, state, last_heartbeat,
       86400.0 AS seconds_stale,
       session_id, retry_count
FROM orchestration_tasks
WHERE task_id != 'task-00' AND task_id NOT LIKE 'fallback-%'
ORDER BY task_id;
