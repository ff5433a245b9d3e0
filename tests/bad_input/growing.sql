-- 400 kB a heartbeat: stopped by run.db_bytes_max of tiny-bytes.toml (issue 41).
-- name: heartbeat
UPDATE orchestration_tasks SET last_heartbeat = hex(randomblob(200000)) WHERE task_id = :task_id;
