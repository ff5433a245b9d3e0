-- VACUUM rewrites the file: refused at load.
-- name: heartbeat
VACUUM;
