-- A read that never ends: stopped by run.sql_steps_max.
-- name: poll_tasks
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;
