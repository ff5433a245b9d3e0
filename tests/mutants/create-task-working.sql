-- MUTANT create-task-working: the conductor creates task rows already `working`, so every
-- claim's guard refuses and no task is ever worked (the broken conductor of the guard-block
-- example, applied to every task).
-- Breaks 004 state machine "Initial State": rows are created by the conductor in `watching`.

-- name: create_task
INSERT INTO orchestration_tasks (task_id, state, instruction_path)
VALUES (:task_id, 'working', :instruction_path);
