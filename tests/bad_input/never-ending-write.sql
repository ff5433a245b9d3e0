-- A write whose subquery never ends: stopped by run.sql_steps_max.
-- name: heartbeat
UPDATE orchestration_tasks SET last_heartbeat = (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c) WHERE task_id = :task_id;
