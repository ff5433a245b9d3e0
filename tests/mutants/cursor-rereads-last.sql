-- MUTANT cursor-rereads-last: new conductor messages are read with `id >=` instead of `id >`,
-- so the last processed message comes back as new on every poll.
-- Breaks 000 "Message Deduplication": "Query for messages where `id > last_processed_message_id`"
-- (000 Background Watcher: `AND id > {last_processed_message_id}`).

-- name: read_new_conductor_messages
SELECT id, message, timestamp FROM orchestration_messages
WHERE task_id = :task_id
  AND from_session = 'task-00'
  AND id >= :last_processed_message_id
ORDER BY id;
