.bail on
-- The history recorder of a comms.db (issue 40; README "Judge a real deployment").
-- Install:  sqlite3 comms.db < scenarios/recorder/install.sql   (or `rehearsal record install`)
-- Remove:   sqlite3 comms.db < scenarios/recorder/remove.sql    (or `rehearsal record remove`)
--
-- It adds an append-only table `rehearsal_history` and AFTER triggers on seed 004's two
-- tables. A trigger runs inside the writer's own statement and transaction, so a write that
-- commits has its history row committed with it and a write that rolls back (a constraint, a
-- killed process, SQLITE_BUSY) leaves none: the history is complete by construction. Each row
-- keeps every column of the row before (`old_values`) and after (`new_values`) as JSON,
-- SQLite's own time with milliseconds (`at`: 'now' is the instant of the statement that
-- fired it, https://sqlite.org/lang_datefunc.html) and a sequence number (`seq`,
-- AUTOINCREMENT: never reused, and a rolled-back write rolls its number back too, so the
-- numbers of a whole history run 1, 2, 3, ... with no gap).
--
-- It changes no row of the two tables. Installing twice changes nothing. The first install
-- (and one after `remove`) writes one `SNAPSHOT` row per existing row, so the history starts
-- from the tables as they were. Everything is one IMMEDIATE transaction with a busy timeout:
-- on a live WAL database it waits its turn like any writer (readers are never blocked).
--
-- The writer of each change is recorded only for connections that identify themselves, with
-- this one statement (SESSION = the session id, quotes doubled), run once per connection:
--   CREATE TEMP TRIGGER IF NOT EXISTS rehearsal_writer AFTER INSERT ON main.rehearsal_history
--   BEGIN INSERT OR IGNORE INTO rehearsal_writers (seq, writer) VALUES (new.seq, 'SESSION'); END;
-- (A trigger of the main schema cannot read a connection's TEMP objects, and SQL has no
-- connection id: a TEMP trigger is the only per-connection hook that plain SQL can install.)
PRAGMA busy_timeout = 10000;
BEGIN IMMEDIATE;
-- Seed 004's columns, every one the triggers copy: another schema stops here, before any change.
SELECT task_id, state, instruction_path, session_id, worked_by, started_at, completed_at,
       report_path, retry_count, last_heartbeat, last_error
FROM orchestration_tasks LIMIT 0;
SELECT id, task_id, from_session, message, message_type, timestamp
FROM orchestration_messages LIMIT 0;
CREATE TABLE IF NOT EXISTS rehearsal_history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    tbl TEXT NOT NULL CHECK (tbl IN ('orchestration_tasks', 'orchestration_messages')),
    op TEXT NOT NULL CHECK (op IN ('SNAPSHOT', 'INSERT', 'UPDATE', 'DELETE')),
    old_values TEXT,
    new_values TEXT
);
CREATE TABLE IF NOT EXISTS rehearsal_writers (
    seq INTEGER PRIMARY KEY,
    writer TEXT NOT NULL
);
-- The tables as they are, once per install: only while the recorder's triggers are absent.
INSERT INTO rehearsal_history (at, tbl, op, new_values)
SELECT strftime('%Y-%m-%d %H:%M:%f', 'now'), 'orchestration_tasks', 'SNAPSHOT',
       json_object('task_id', task_id, 'state', state, 'instruction_path', instruction_path,
                   'session_id', session_id, 'worked_by', worked_by, 'started_at', started_at,
                   'completed_at', completed_at, 'report_path', report_path,
                   'retry_count', retry_count, 'last_heartbeat', last_heartbeat, 'last_error', last_error)
FROM orchestration_tasks
WHERE NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'rehearsal_tasks_update')
ORDER BY rowid;
INSERT INTO rehearsal_history (at, tbl, op, new_values)
SELECT strftime('%Y-%m-%d %H:%M:%f', 'now'), 'orchestration_messages', 'SNAPSHOT',
       json_object('id', id, 'task_id', task_id, 'from_session', from_session, 'message', message,
                   'message_type', message_type, 'timestamp', timestamp)
FROM orchestration_messages
WHERE NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'rehearsal_tasks_update')
ORDER BY id;
CREATE TRIGGER IF NOT EXISTS rehearsal_tasks_insert AFTER INSERT ON orchestration_tasks BEGIN
    INSERT INTO rehearsal_history (at, tbl, op, new_values) VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), 'orchestration_tasks', 'INSERT',
        json_object('task_id', new.task_id, 'state', new.state, 'instruction_path', new.instruction_path,
                    'session_id', new.session_id, 'worked_by', new.worked_by, 'started_at', new.started_at,
                    'completed_at', new.completed_at, 'report_path', new.report_path,
                    'retry_count', new.retry_count, 'last_heartbeat', new.last_heartbeat, 'last_error', new.last_error));
END;
CREATE TRIGGER IF NOT EXISTS rehearsal_tasks_update AFTER UPDATE ON orchestration_tasks BEGIN
    INSERT INTO rehearsal_history (at, tbl, op, old_values, new_values) VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), 'orchestration_tasks', 'UPDATE',
        json_object('task_id', old.task_id, 'state', old.state, 'instruction_path', old.instruction_path,
                    'session_id', old.session_id, 'worked_by', old.worked_by, 'started_at', old.started_at,
                    'completed_at', old.completed_at, 'report_path', old.report_path,
                    'retry_count', old.retry_count, 'last_heartbeat', old.last_heartbeat, 'last_error', old.last_error),
        json_object('task_id', new.task_id, 'state', new.state, 'instruction_path', new.instruction_path,
                    'session_id', new.session_id, 'worked_by', new.worked_by, 'started_at', new.started_at,
                    'completed_at', new.completed_at, 'report_path', new.report_path,
                    'retry_count', new.retry_count, 'last_heartbeat', new.last_heartbeat, 'last_error', new.last_error));
END;
CREATE TRIGGER IF NOT EXISTS rehearsal_tasks_delete AFTER DELETE ON orchestration_tasks BEGIN
    INSERT INTO rehearsal_history (at, tbl, op, old_values) VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), 'orchestration_tasks', 'DELETE',
        json_object('task_id', old.task_id, 'state', old.state, 'instruction_path', old.instruction_path,
                    'session_id', old.session_id, 'worked_by', old.worked_by, 'started_at', old.started_at,
                    'completed_at', old.completed_at, 'report_path', old.report_path,
                    'retry_count', old.retry_count, 'last_heartbeat', old.last_heartbeat, 'last_error', old.last_error));
END;
CREATE TRIGGER IF NOT EXISTS rehearsal_messages_insert AFTER INSERT ON orchestration_messages BEGIN
    INSERT INTO rehearsal_history (at, tbl, op, new_values) VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), 'orchestration_messages', 'INSERT',
        json_object('id', new.id, 'task_id', new.task_id, 'from_session', new.from_session, 'message', new.message,
                    'message_type', new.message_type, 'timestamp', new.timestamp));
END;
CREATE TRIGGER IF NOT EXISTS rehearsal_messages_update AFTER UPDATE ON orchestration_messages BEGIN
    INSERT INTO rehearsal_history (at, tbl, op, old_values, new_values) VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), 'orchestration_messages', 'UPDATE',
        json_object('id', old.id, 'task_id', old.task_id, 'from_session', old.from_session, 'message', old.message,
                    'message_type', old.message_type, 'timestamp', old.timestamp),
        json_object('id', new.id, 'task_id', new.task_id, 'from_session', new.from_session, 'message', new.message,
                    'message_type', new.message_type, 'timestamp', new.timestamp));
END;
CREATE TRIGGER IF NOT EXISTS rehearsal_messages_delete AFTER DELETE ON orchestration_messages BEGIN
    INSERT INTO rehearsal_history (at, tbl, op, old_values) VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), 'orchestration_messages', 'DELETE',
        json_object('id', old.id, 'task_id', old.task_id, 'from_session', old.from_session, 'message', old.message,
                    'message_type', old.message_type, 'timestamp', old.timestamp));
END;
-- Append-only: SQL cannot change or delete what was recorded (only `remove.sql`'s DROP of
-- these guards could, and then the judge's checks of the sequence and of each row's chain of
-- values name what was changed).
CREATE TRIGGER IF NOT EXISTS rehearsal_history_no_update BEFORE UPDATE ON rehearsal_history BEGIN
    SELECT RAISE(ABORT, 'rehearsal_history is append-only');
END;
CREATE TRIGGER IF NOT EXISTS rehearsal_history_no_delete BEFORE DELETE ON rehearsal_history BEGIN
    SELECT RAISE(ABORT, 'rehearsal_history is append-only');
END;
CREATE TRIGGER IF NOT EXISTS rehearsal_writers_no_update BEFORE UPDATE ON rehearsal_writers BEGIN
    SELECT RAISE(ABORT, 'rehearsal_writers is append-only');
END;
CREATE TRIGGER IF NOT EXISTS rehearsal_writers_no_delete BEFORE DELETE ON rehearsal_writers BEGIN
    SELECT RAISE(ABORT, 'rehearsal_writers is append-only');
END;
COMMIT;
