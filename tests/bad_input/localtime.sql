-- Reads the host's time zone: refused at load (issue 41).
-- name: heartbeat
UPDATE orchestration_tasks SET last_heartbeat = datetime('now', 'localtime') WHERE task_id = :task_id;
