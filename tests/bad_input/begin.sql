-- Opens a transaction of its own: refused at load (issue 41).
-- name: heartbeat
BEGIN IMMEDIATE;
