-- The protocol's SQL, taken from the seeds (../shared/seeds/). Each entry starts with
-- `-- name: NAME`; parameters are bound by name (`:task_id`), never formatted in.
-- Where the seeds disagree, this file follows seed 000 (the musician design document) and
-- the variants of docs/protocol.md §3 (D1–D16) override single entries.
-- The engine knows which parameters it supplies to each name (sim/input/sql_catalog.rs); a
-- statement that needs any other parameter is rejected before the run starts.

------------------------------------------------------------------------------------------
-- Conductor (task-00). The conductor's own skill is not in the seeds (docs/protocol.md
-- C1–C11); these statements follow seed 004's state machine and templates.
------------------------------------------------------------------------------------------

-- name: conductor_register
-- 004 state-machine "Conductor States": task-00 is the conductor's own row, `watching`.
INSERT INTO orchestration_tasks (task_id, state, session_id, worked_by, started_at, last_heartbeat)
VALUES ('task-00', 'watching', :session_id, 'conductor', datetime('now'), datetime('now'));

-- name: conductor_resume
-- A conductor session relaunched after a crash takes its row over (docs/protocol.md C35):
-- task-00 is the conductor's own row, `watching` (004 "Conductor States"), and the stop hook
-- finds a session's row by its session_id (004 "Exit Criteria"). The row exists, so
-- `conductor_register`'s INSERT would fail on the key. 004 Heartbeat Rule.
UPDATE orchestration_tasks
SET state = 'watching', session_id = :session_id, last_heartbeat = datetime('now')
WHERE task_id = 'task-00';

-- name: read_conductor_messages
-- What the conductor wrote before a crash, by id (000 Message Deduplication): which tasks
-- have their instruction, which requests were answered (000 "Terminal Write Atomicity": "the
-- message serves as a recovery record if the state update fails"), the hand-overs and the
-- emergencies sent (docs/protocol.md C35).
SELECT id, task_id, message_type, message
FROM orchestration_messages
WHERE from_session = 'task-00'
ORDER BY id;

-- name: create_task
-- 004 state-machine "Initial State": rows are created by the conductor before launch.
INSERT INTO orchestration_tasks (task_id, state, instruction_path)
VALUES (:task_id, 'watching', :instruction_path);

-- name: send_instruction
-- 000 Bootstrap 1a: one `instruction` message per task carries the instruction path.
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (:task_id, 'task-00', :message, 'instruction');

-- name: conductor_heartbeat
-- 000 Pause Watcher: musicians judge the conductor alive by task-00's heartbeat.
UPDATE orchestration_tasks
SET last_heartbeat = datetime('now')
WHERE task_id = 'task-00';

-- name: conductor_set_state
-- 004 Heartbeat Rule: every UPDATE that changes state also sets last_heartbeat.
UPDATE orchestration_tasks
SET state = :state,
    last_heartbeat = datetime('now')
WHERE task_id = 'task-00';

-- name: poll_tasks
-- 000 Parallel Awareness Queries 11/12: states, heartbeats and staleness of every task.
SELECT task_id, state, last_heartbeat,
       (julianday('now') - julianday(last_heartbeat)) * 86400 AS seconds_stale,
       session_id, retry_count
FROM orchestration_tasks
WHERE task_id != 'task-00' AND task_id NOT LIKE 'fallback-%'
ORDER BY task_id;

-- name: read_musician_messages
-- 000 Message Deduplication: new messages by id, never by timestamp.
SELECT id, task_id, from_session, message_type, message
FROM orchestration_messages
WHERE from_session != 'task-00'
  AND id > :last_id
ORDER BY id;

-- name: send_conductor_message
-- 000 Review Request Flow 4: the musician reads the new state *and* the latest message, so
-- the conductor writes its message before it changes the state.
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (:task_id, 'task-00', :message, :message_type);

-- name: set_task_state
-- 004 Heartbeat Rule: every UPDATE that changes state also sets last_heartbeat.
UPDATE orchestration_tasks
SET state = :state,
    last_heartbeat = datetime('now')
WHERE task_id = :task_id;

------------------------------------------------------------------------------------------
-- Musician session (task-01+).
------------------------------------------------------------------------------------------

-- name: claim_task
-- 000 Bootstrap 3 / Bootstrap Queries 1; guard of 000 and 002 "Guard Clause Rules".
UPDATE orchestration_tasks
SET state = 'working',
    session_id = :session_id,
    worked_by = :worked_by,
    started_at = datetime('now'),
    last_heartbeat = datetime('now'),
    retry_count = 0
WHERE task_id = :task_id
  AND state IN ('watching', 'fix_proposed', 'exit_requested');

-- name: insert_fallback_row
-- 000 Bootstrap 4: no guard, must always succeed, lets the stop hook end the session.
INSERT INTO orchestration_tasks (task_id, state, session_id, last_heartbeat)
VALUES ('fallback-' || :session_id, 'exited', :session_id, datetime('now'));

-- name: send_claim_blocked
-- 000 Bootstrap 4 / Message Format Standards "Claim Blocked".
INSERT INTO orchestration_messages (task_id, from_session, message_type, message)
VALUES (:task_id, :session_id, 'claim_blocked', :message);

-- name: read_instruction
-- 000 Bootstrap Queries 3 (with the message_type filter of the launch prompt, 000 1a).
-- `id` is selected besides `message` so the session can start its watcher's
-- last_processed_message_id past the instruction (000 Message Deduplication).
SELECT id, message FROM orchestration_messages
WHERE task_id = :task_id AND from_session = 'task-00'
  AND message_type = 'instruction'
ORDER BY timestamp ASC LIMIT 1;

-- name: heartbeat
-- 000 Execution Queries 4 / Heartbeat Protocol: step start, step end, watcher refresh.
UPDATE orchestration_tasks
SET last_heartbeat = datetime('now')
WHERE task_id = :task_id;

-- name: read_task_state
-- 004 "Check Task State", with the heartbeat age of 000 Execution Queries 12 so a watcher
-- can decide on a refresh (000 Heartbeat Refresh) from the same read.
SELECT state, retry_count, last_heartbeat,
       (julianday('now') - julianday(last_heartbeat)) * 86400 AS seconds_stale
FROM orchestration_tasks
WHERE task_id = :task_id;

-- name: read_new_conductor_messages
-- 000 Background Watcher query: new conductor messages by id.
SELECT id, message, timestamp FROM orchestration_messages
WHERE task_id = :task_id
  AND from_session = 'task-00'
  AND id > :last_processed_message_id
ORDER BY id;

-- name: send_review_request
-- 004 "Request Review": message FIRST, then state change.
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (:task_id, :session_id, :message, 'review_request');

-- name: set_needs_review
-- 004 "Request Review" / 000 Execution Queries 5 and 8.
UPDATE orchestration_tasks
SET state = 'needs_review',
    last_heartbeat = datetime('now')
WHERE task_id = :task_id;

-- name: resume_working
-- 004 "After Approval (Resume Working)".
UPDATE orchestration_tasks
SET state = 'working',
    last_heartbeat = datetime('now')
WHERE task_id = :task_id;

-- name: send_completion
-- 000 Execution Queries 8 (completion review) and 004 "Mark Complete" (final message).
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (:task_id, :session_id, :message, 'completion');

-- name: mark_complete
-- 000 Execution Queries 9: the TERMINAL WRITE, the absolute last database write.
UPDATE orchestration_tasks
SET state = 'complete', last_heartbeat = datetime('now'),
    completed_at = datetime('now'),
    report_path = :report_path
WHERE task_id = :task_id;

-- name: stop_hook_state
-- 000 Implementation-Hook Integration: the stop hook finds the session's row by session_id.
SELECT task_id, state FROM orchestration_tasks
WHERE session_id = :session_id
ORDER BY task_id;

-- name: send_error
-- 004 "Report Error": the ERROR message first.
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (:task_id, :session_id, :message, 'error');

-- name: set_error
-- 004 "Report Error" / 000 Execution Queries 7: each error report counts a retry.
UPDATE orchestration_tasks
SET state = 'error',
    retry_count = retry_count + 1,
    last_error = :last_error,
    last_heartbeat = datetime('now')
WHERE task_id = :task_id;

-- name: send_context_warning
-- 000 Execution Queries 6 (message first, as 004 orders every message/state pair).
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (:task_id, :session_id, :message, 'context_warning');

-- name: set_context_warning
-- 000 Execution Queries 6: context escalation is an error state.
UPDATE orchestration_tasks
SET state = 'error', last_heartbeat = datetime('now'),
    last_error = 'context_exhaustion_warning'
WHERE task_id = :task_id;

-- name: set_escalation
-- 000 "Deviations & Escalation Thresholds" (REF-6: deviations past the threshold trigger
-- escalation to the conductor) and 003 "State Reconciliation" (Contradictory: escalate to
-- the conductor immediately). Like context escalation (000 Execution Queries 6) it is an
-- error state, sent after its `error` message; not a failure, so retry_count stays.
UPDATE orchestration_tasks
SET state = 'error', last_heartbeat = datetime('now'),
    last_error = :last_error
WHERE task_id = :task_id;

-- name: send_handoff
-- 000 Execution Queries 10: the EXITED message before the terminal write.
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (:task_id, :session_id, :message, 'handoff');

-- name: mark_exited
-- 000 Execution Queries 10 / 004 "Terminal Failure (5th retry)": the TERMINAL WRITE.
UPDATE orchestration_tasks
SET state = 'exited', last_heartbeat = datetime('now')
WHERE task_id = :task_id;

-- name: send_resumption
-- 003 "Verbose Resumption Status" (the CHECK allows `resumption`, not `resumption_status`).
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (:task_id, :session_id, :message, 'resumption');

-- name: conductor_health
-- 000 Execution Queries 12, used by the pause watcher after its timeout.
SELECT state, last_heartbeat,
       (julianday('now') - julianday(last_heartbeat)) * 86400 as seconds_stale
FROM orchestration_tasks
WHERE task_id = 'task-00';

-- name: read_latest_conductor_message
-- 004 "Check for Conductor Messages": the newest conductor message by timestamp (used by
-- the detect-by-timestamp variant, docs/protocol.md D6). `id` is selected for the
-- oracle's bookkeeping only; the musician compares timestamps.
SELECT id, message, timestamp
FROM orchestration_messages
WHERE task_id = :task_id
  AND from_session = 'task-00'
ORDER BY timestamp DESC
LIMIT 1;

-- name: read_task_record
-- 000 "Example: Mid-Session Resumption" Step 3: a successor queries the task record before
-- its claim. The claim overwrites session_id, worked_by and started_at, which name the
-- session that held the task immediately before (003 "Resumption Decision Tree": is the
-- HANDOFF that session's?).
SELECT state, session_id, worked_by, started_at
FROM orchestration_tasks
WHERE task_id = :task_id;

-- name: read_task_messages
-- 003 "State Reconciliation": the task's messages and their timestamps (not their text), to
-- reconcile the HANDOFF against what the database shows happened since it was written.
SELECT id, from_session, message_type, timestamp
FROM orchestration_messages
WHERE task_id = :task_id
ORDER BY id;

-- name: read_sibling_states
-- 000 "Database Queries for Parallel Awareness": "Check sibling task states (optional,
-- on-demand)", the seed's query with this task's id; a successor runs it for 000
-- "Mid-Session Resumption Protocol" 5's ">2 tasks in `working` state" (docs/protocol.md C42).
SELECT task_id, state, last_heartbeat,
       (julianday('now') - julianday(last_heartbeat)) * 86400 AS seconds_stale
FROM orchestration_tasks
WHERE task_id != 'task-00' AND task_id != :task_id AND task_id NOT LIKE 'fallback-%'
ORDER BY task_id;

-- name: send_receipt
-- Not a seed statement: the seeds' musician keeps last_processed_message_id in memory only
-- (000 "Message Deduplication") and never runs this. The variant `durable-cursor` (issue 28)
-- reads its new conductor messages with it instead of `read_new_conductor_messages`: one
-- INSERT of a receipt (a `resumption` message from the session, text `RECEIPT: …`) that
-- returns, in the same statement, every conductor message after the cursor. Reading and
-- recording are one atomic write, so no crash falls between them, and the receipt's own id is
-- the durable cursor: every conductor message below it was read by the session that wrote it.
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (:task_id, :session_id, :message, 'resumption')
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

-- name: release_task
-- Not a seed statement: run only under the variant `release-stale` (issue 28). The conductor's
-- hand-over of a session that went silent (000 Bootstrap 5 "Session Handoff") sets the state
-- and clears the row's session_id, so a fenced write of the replaced session (variant
-- `fencing`, docs/protocol.md D11) changes nothing from here on: a session that only hung is
-- fenced out at its first row write after it wakes, before its successor's claim names it.
-- It runs before the handoff message, and only while the heartbeat is still older than
-- :stale_after_s (NULL: no condition): a session that woke and beat since the conductor read
-- its heartbeat keeps its task (no-false-stale), and no handoff is sent for it. A message the
-- session wrote within :stale_after_s is a sign of life as good as a heartbeat: a hung session
-- that wakes writes first what it hung before, often a message (a receipt, a request), and
-- beats only later (proof-random-faults seed 2948).
-- 004 Heartbeat Rule: every UPDATE that changes state also sets last_heartbeat.
UPDATE orchestration_tasks
SET state = :state,
    session_id = NULL,
    last_heartbeat = datetime('now')
WHERE task_id = :task_id
  AND (:stale_after_s IS NULL
       OR (COALESCE((julianday('now') - julianday(last_heartbeat)) * 86400, 1e18) > :stale_after_s
           AND NOT EXISTS (SELECT 1 FROM orchestration_messages AS m
                           WHERE m.task_id = :task_id
                             AND m.from_session = orchestration_tasks.session_id
                             AND (julianday('now') - julianday(m.timestamp)) * 86400 <= :stale_after_s)));
