-- Loads code from outside the run: refused at load (issue 41).
-- name: heartbeat
SELECT load_extension('/tmp/x.so');
