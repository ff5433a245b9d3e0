-- MUTANT answers-inserted-twice: every answer of the conductor (approval, rejection, fix
-- proposal) is inserted twice by one `INSERT … SELECT` over two rows; other messages once.
-- Breaks 000 "Review Request Flow" (one request, one response to process) and 004 "Request
-- Review": the musician acts on each new message (000 "Message Deduplication"), so it handles
-- the same answer twice.

-- name: send_conductor_message
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
SELECT :task_id, 'task-00', :message, :message_type
FROM (SELECT 1 AS copy UNION ALL SELECT 2 AS copy)
WHERE copy = 1 OR :message_type IN ('approval', 'rejection', 'fix_proposal');
