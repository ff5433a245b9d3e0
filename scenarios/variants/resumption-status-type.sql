-- docs/protocol.md D8: the text of 000/003 calls the message "resumption_status",
-- which the CHECK constraint of seed 004 does not allow.
-- name: send_resumption
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (:task_id, :session_id, :message, 'resumption_status');
