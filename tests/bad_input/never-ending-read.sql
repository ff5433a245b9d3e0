-- A read that never ends (poll_tasks' own columns, only its length wrong): stopped by run.sql_steps_max.
-- name: poll_tasks
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
SELECT NULL AS task_id, NULL AS state, NULL AS last_heartbeat, NULL AS seconds_stale, NULL AS session_id, count(*) AS retry_count FROM c;
