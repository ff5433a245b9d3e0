-- MUTANT exited-sets-complete: the clean exit's terminal write says `complete`, so a task
-- left half done looks finished and is never handed to a successor.
-- Breaks 000 "Execution Queries 10. Clean Exit (TERMINAL WRITE)": "If exiting early due to
-- context exhaustion, update state to `exited`" (`SET state = 'exited'`); 000 and 002 "Valid
-- State Transitions": "working → complete (TERMINAL: after conductor approves)"; and 000 "5.
-- Session Handoff (Conductor Pattern)".

-- name: mark_exited
UPDATE orchestration_tasks
SET state = 'complete', last_heartbeat = datetime('now')
WHERE task_id = :task_id;
