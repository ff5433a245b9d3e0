-- Attaches another database: refused at load.
-- name: heartbeat
ATTACH DATABASE '/tmp/other.db' AS other;
