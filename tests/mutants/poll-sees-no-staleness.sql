-- MUTANT poll-sees-no-staleness: the conductor's poll reports every heartbeat as 0 s old, so
-- it never finds a lost session. A fault-free run has no lost session, so this mutant is run
-- against a scenario whose session crashes: the crashed task must then never finish.
-- Breaks 000 "Heartbeat Protocol" (a heartbeat older than 9 minutes means a lost session) and
-- 000 "Parallel Awareness Queries 12" (`(julianday('now') - julianday(last_heartbeat)) * 86400
-- as seconds_stale`).

-- name: poll_tasks
SELECT task_id, state, last_heartbeat,
       0 AS seconds_stale,
       session_id, retry_count
FROM orchestration_tasks
WHERE task_id != 'task-00' AND task_id NOT LIKE 'fallback-%'
ORDER BY task_id;
