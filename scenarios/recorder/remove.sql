.bail on
-- Removes the history recorder's triggers (scenarios/recorder/install.sql). The history and
-- writer tables stay: they are what `rehearsal judge --db` reads. No row of seed 004's two
-- tables changes. Installing again later writes a new SNAPSHOT of the tables, and the judge
-- says which rows changed while nothing was recorded.
PRAGMA busy_timeout = 10000;
BEGIN IMMEDIATE;
DROP TRIGGER IF EXISTS rehearsal_tasks_insert;
DROP TRIGGER IF EXISTS rehearsal_tasks_update;
DROP TRIGGER IF EXISTS rehearsal_tasks_delete;
DROP TRIGGER IF EXISTS rehearsal_messages_insert;
DROP TRIGGER IF EXISTS rehearsal_messages_update;
DROP TRIGGER IF EXISTS rehearsal_messages_delete;
COMMIT;
