-- MUTANT messages-of-every-task: a session's new-message query has no task filter, so it takes
-- other tasks' review answers for its own.
-- Breaks 000 "Background Watcher" query (`WHERE task_id = 'task-{NN}' AND from_session =
-- 'task-00' AND id > {last_processed_message_id}`) and 000 "Emergency Messages" (separate
-- messages per task).

-- name: read_new_conductor_messages
SELECT id, message, timestamp FROM orchestration_messages
WHERE from_session = 'task-00'
  AND message_type != 'instruction'
  AND id > :last_processed_message_id
ORDER BY id;
