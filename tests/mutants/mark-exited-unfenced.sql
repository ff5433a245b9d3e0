-- MUTANT mark-exited-unfenced: a fenced protocol (docs/protocol.md D11, scenarios/variants/
-- fencing.sql) that forgot the fence on the terminal `mark_exited`: a session the conductor
-- replaced writes `exited` onto its successor's row when it wakes, and the conductor, reading
-- `exited`, hands the task over again while the successor is alive and working.
-- Breaks 000 Bootstrap 5 "Session Handoff" ("Old session exits → writes HANDOFF, sets state to
-- `exited`; Conductor reads HANDOFF → sets state to `fix_proposed` + sends handoff message": the
-- `exited` the conductor acts on is the old owner's own) and 000 Execution Queries 10 (the
-- session's TERMINAL WRITE is on its own task row).
-- Layered over the scenario's own fenced SQL: only this statement changes.

-- name: mark_exited
UPDATE orchestration_tasks
SET state = 'exited', last_heartbeat = datetime('now')
WHERE task_id = :task_id;
