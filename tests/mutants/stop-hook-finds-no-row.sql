-- MUTANT stop-hook-finds-no-row: the stop hook looks the session's row up by a condition that
-- never holds, so it never lets a finished session end: the session spins for 500 checks and
-- is forced out, long after its terminal write (and after the conductor has exited).
-- Breaks 000 "Implementation-Hook Integration" and 004 "Hook System (Automatic)" / "Exit
-- Criteria": the hook reads the session's own row (`WHERE session_id = …`) and allows exit on
-- `complete` / `exited`.

-- name: stop_hook_state
SELECT task_id, state FROM orchestration_tasks
WHERE session_id = :session_id AND 0
ORDER BY task_id;
