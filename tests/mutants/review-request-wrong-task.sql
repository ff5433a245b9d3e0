-- MUTANT review-request-wrong-task: the review request is filed under the conductor's task
-- id instead of the musician's own, so the request names the wrong task.
-- Breaks 000 "Execution Queries 5. Review Request (Checkpoint)" and 004 "Request Review":
-- `INSERT INTO orchestration_messages (task_id, …) VALUES ('task-{NN}', '{session_id}', …,
-- 'review_request')`.

-- name: send_review_request
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES ('task-00', :session_id, :message, 'review_request');
