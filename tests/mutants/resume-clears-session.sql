-- MUTANT resume-clears-session: resuming after an approval also clears session_id, so the row
-- no longer names the session that works it.
-- Breaks 004 "After Approval (Resume Working)" (template follow="exact": `SET state =
-- 'working', last_heartbeat = datetime('now')` and nothing else) and the ownership the claim
-- recorded (000 "3. Atomic Task Claim": `session_id = '{session_id}'`).

-- name: resume_working
UPDATE orchestration_tasks
SET state = 'working',
    session_id = NULL,
    last_heartbeat = datetime('now')
WHERE task_id = :task_id;
