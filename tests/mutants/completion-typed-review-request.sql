-- MUTANT completion-typed-review-request: the completion report and the final message are
-- inserted as `review_request`, so the conductor takes the completion for one more checkpoint
-- and the final message for a new review request.
-- Breaks 000 "Execution Queries 8. Completion Report" and 004 "Mark Complete":
-- `… VALUES ('task-{NN}', '{session_id}', …, 'completion')`.

-- name: send_completion
INSERT INTO orchestration_messages (task_id, from_session, message, message_type)
VALUES (:task_id, :session_id, :message, 'review_request');
