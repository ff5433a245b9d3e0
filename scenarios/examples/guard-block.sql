-- name: create_task
-- A broken conductor: it creates the task already `working`, which the claim guard of
-- 000 Bootstrap 3 refuses.
INSERT INTO orchestration_tasks (task_id, state, instruction_path)
VALUES (:task_id, 'working', :instruction_path);
