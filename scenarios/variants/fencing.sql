-- docs/protocol.md D11: no musician UPDATE in the seeds checks session_id. This
-- variant fences every musician write on the task row by the writer's session: a session
-- the conductor replaced changes nothing (rows affected 0) and learns it lost the task.

-- name: heartbeat
UPDATE orchestration_tasks
SET last_heartbeat = datetime('now')
WHERE task_id = :task_id AND session_id = :session_id;

-- name: set_needs_review
UPDATE orchestration_tasks
SET state = 'needs_review',
    last_heartbeat = datetime('now')
WHERE task_id = :task_id AND session_id = :session_id;

-- name: resume_working
UPDATE orchestration_tasks
SET state = 'working',
    last_heartbeat = datetime('now')
WHERE task_id = :task_id AND session_id = :session_id;

-- name: mark_complete
UPDATE orchestration_tasks
SET state = 'complete', last_heartbeat = datetime('now'),
    completed_at = datetime('now'),
    report_path = :report_path
WHERE task_id = :task_id AND session_id = :session_id;

-- name: set_error
UPDATE orchestration_tasks
SET state = 'error',
    retry_count = retry_count + 1,
    last_error = :last_error,
    last_heartbeat = datetime('now')
WHERE task_id = :task_id AND session_id = :session_id;

-- name: set_context_warning
UPDATE orchestration_tasks
SET state = 'error', last_heartbeat = datetime('now'),
    last_error = 'context_exhaustion_warning'
WHERE task_id = :task_id AND session_id = :session_id;

-- name: mark_exited
UPDATE orchestration_tasks
SET state = 'exited', last_heartbeat = datetime('now')
WHERE task_id = :task_id AND session_id = :session_id;

-- name: set_escalation
UPDATE orchestration_tasks
SET state = 'error', last_heartbeat = datetime('now'),
    last_error = :last_error
WHERE task_id = :task_id AND session_id = :session_id;

-- name: send_receipt
-- Issue 28: the durable cursor's receipt (scenarios/protocol.sql) is a read as well as a
-- write, so it is fenced like the row writes: a session the conductor replaced (or released,
-- variant `release-stale`) inserts no receipt and reads nothing, instead of consuming the
-- messages sent to its successor (a handoff, an approval) and moving the cursor past them.
-- No row returned is the fenced-out answer. Under `lease-self-check` the receipt also carries
-- the end of the session's lease (`:lease_until`, NULL without the variant): a receipt that
-- runs past it (a session frozen just before it, that wakes past its lease) moves no cursor, so
-- the messages stay for the successor instead of being read by a session that must end at once
-- (sim/actors/lease.rs).
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
SELECT :task_id, :session_id, :message, 'resumption'
WHERE EXISTS (SELECT 1 FROM orchestration_tasks WHERE task_id = :task_id AND session_id = :session_id)
  AND (:lease_until IS NULL OR julianday('now') < julianday(:lease_until))
RETURNING (
    SELECT json_group_array(json_array(m.id, m.message, m.timestamp))
    FROM (SELECT id, message, timestamp
          FROM orchestration_messages
          WHERE task_id = :task_id
            AND from_session = 'task-00'
            AND message_type != 'instruction'
            AND id > :last_processed_message_id
          ORDER BY id) AS m
);

-- name: send_review_request
-- Issue 28: a review request is fenced like the row write that follows it (004 "Request
-- Review": message FIRST, then state change), so a replaced session that wakes into a request
-- learns at its first write that it lost the task, and stops, instead of living on until its
-- `set_needs_review` while its successor claims.
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
SELECT :task_id, :session_id, :message, 'review_request'
WHERE EXISTS (SELECT 1 FROM orchestration_tasks WHERE task_id = :task_id AND session_id = :session_id);

-- name: send_completion
-- Issue 28: fenced like `send_review_request`, for the completion review and the final message.
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
SELECT :task_id, :session_id, :message, 'completion'
WHERE EXISTS (SELECT 1 FROM orchestration_tasks WHERE task_id = :task_id AND session_id = :session_id);

-- name: send_error
-- Issue 28: every message a session sends after its claim is fenced like `send_review_request`
-- (proof-random-faults seeds 432 and 3034: a woken replaced session's unfenced message was its
-- first write, and it went on writing while its successor claimed).
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
SELECT :task_id, :session_id, :message, 'error'
WHERE EXISTS (SELECT 1 FROM orchestration_tasks WHERE task_id = :task_id AND session_id = :session_id);

-- name: send_context_warning
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
SELECT :task_id, :session_id, :message, 'context_warning'
WHERE EXISTS (SELECT 1 FROM orchestration_tasks WHERE task_id = :task_id AND session_id = :session_id);

-- name: send_handoff
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
SELECT :task_id, :session_id, :message, 'handoff'
WHERE EXISTS (SELECT 1 FROM orchestration_tasks WHERE task_id = :task_id AND session_id = :session_id);

-- name: send_resumption
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
SELECT :task_id, :session_id, :message, 'resumption'
WHERE EXISTS (SELECT 1 FROM orchestration_tasks WHERE task_id = :task_id AND session_id = :session_id);
