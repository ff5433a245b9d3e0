-- MUTANT approvals-to-missing-task: the conductor's approvals are filed under `task-99`, a
-- task with no row, instead of the task they answer; every other message goes where it should.
-- The musician still resumes on the `review_approved` state, so nothing stalls.
-- Breaks 004 "Database" (a message's task_id names its task) and 000 "Background Watcher
-- Prompt Template" (a session reads only messages `WHERE task_id = '[task-id]'`).

-- name: send_conductor_message
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (CASE WHEN :message_type = 'approval' THEN 'task-99' ELSE :task_id END, 'task-00', :message, :message_type);
