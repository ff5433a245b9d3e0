-- Drops a table the protocol needs: refused at load.
-- name: heartbeat
DROP TABLE orchestration_tasks;
