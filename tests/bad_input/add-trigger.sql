-- Adds a trigger: refused at load, the trigger never reaches comms.db.
-- name: heartbeat
CREATE TRIGGER t AFTER UPDATE ON orchestration_tasks BEGIN SELECT 1; END;
