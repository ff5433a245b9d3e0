-- A value of 800 MB: stopped by run.value_bytes_max (issue 41).
-- name: heartbeat
UPDATE orchestration_tasks SET last_heartbeat = hex(zeroblob(400000000)) WHERE task_id = :task_id;
