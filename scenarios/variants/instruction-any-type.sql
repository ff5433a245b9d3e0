-- docs/protocol.md D4: 000 Bootstrap step 6 reads the first conductor message
-- without a message_type filter.
-- name: read_instruction
SELECT id, message FROM orchestration_messages
WHERE task_id = :task_id AND from_session = 'task-00'
ORDER BY timestamp ASC LIMIT 1;
