-- MUTANT conductor-cursor-rereads-last: the conductor reads musician messages with `id >=`, so
-- the last message it read comes back as new on every poll and a review request is counted
-- (and answered) again.
-- Breaks 000 "Message Deduplication": new messages by `id > last_processed_id`, never again.

-- name: read_musician_messages
SELECT id, task_id, from_session, message_type, message
FROM orchestration_messages
WHERE from_session != 'task-00'
  AND id >= :last_id
ORDER BY id;
