-- MUTANT cursor-skips-next: new conductor messages are read with
-- `id > last_processed_message_id + 1`, so the message right after the last processed one is
-- never seen (an off-by-one the other way).
-- Breaks 000 "Message Deduplication": "Query for messages where `id > last_processed_message_id`"
-- and "Message IDs are guaranteed unique and monotonically increasing, making
-- `id > last_processed_id` reliable for deduplication" (000 Design Rationale).

-- name: read_new_conductor_messages
SELECT id, message, timestamp FROM orchestration_messages
WHERE task_id = :task_id
  AND from_session = 'task-00'
  AND id > :last_processed_message_id + 1
ORDER BY id;
