-- name: send_instruction
-- A broken conductor: its instruction INSERT writes no row, so no session finds the
-- instruction message 000 "6. Read Task Instructions" queries.
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
SELECT :task_id, 'task-00', :message, 'instruction' WHERE 0;
