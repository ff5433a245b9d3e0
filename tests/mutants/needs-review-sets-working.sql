-- MUTANT needs-review-sets-working: the review request's state change writes `working`, so the
-- conductor never sees the task waiting for a review.
-- Breaks 000 "Execution Queries 5. Review Request (Checkpoint)": "update the task state to
-- `needs_review` and send a message to the conductor", and 004 "Request Review"
-- (`SET state = 'needs_review'`).

-- name: set_needs_review
UPDATE orchestration_tasks
SET state = 'working',
    last_heartbeat = datetime('now')
WHERE task_id = :task_id;
