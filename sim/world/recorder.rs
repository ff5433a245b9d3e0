//! The history recorder of a comms.db (issue 40): scenarios/recorder/install.sql and
//! remove.sql, installed into a real deployment's file (`rehearsal record install DB`) or into
//! a simulated run's (`Execution::record_history`), and the writer identity each connection
//! gives itself (`identity_statement`). `rehearsal judge --db` reads what it records
//! (sim/campaign/history.rs).

use std::path::Path;

use rusqlite::Connection;

use crate::base::error::{Error, Result};

/// The shipped install script, as `sqlite3 DB < file` runs it.
pub const INSTALL_FILE: &str = include_str!("../../scenarios/recorder/install.sql");
/// The shipped remove script.
pub const REMOVE_FILE: &str = include_str!("../../scenarios/recorder/remove.sql");

/// The recorder's history table and its writer table.
pub const HISTORY_TABLE: &str = "rehearsal_history";
pub const WRITERS_TABLE: &str = "rehearsal_writers";

/// The six triggers that record; `remove` drops them (the append-only guards stay).
pub const RECORDING_TRIGGERS: [&str; 6] = [
    "rehearsal_tasks_insert",
    "rehearsal_tasks_update",
    "rehearsal_tasks_delete",
    "rehearsal_messages_insert",
    "rehearsal_messages_update",
    "rehearsal_messages_delete",
];

/// How long `record install`/`remove` wait for a live database's write lock.
const BUSY_TIMEOUT_MS: u64 = 10_000;

/// A script's SQL without the sqlite3 CLI's dot-commands (`.bail on`), for a library connection.
pub fn sql_of(file: &str) -> String {
    file.lines().filter(|line| !line.trim_start().starts_with('.')).collect::<Vec<_>>().join("\n")
}

/// The one statement a session's connection runs to name itself as the writer of everything it
/// changes from then on (README "Judge a real deployment"): a TEMP trigger, because a trigger of
/// the main schema cannot read a connection's TEMP objects and SQL has no connection id. It lasts
/// as long as the connection; running it again on the same connection changes nothing (`IF NOT
/// EXISTS`): a connection names one writer.
pub fn identity_statement(session_id: &str) -> String {
    let quoted = session_id.replace('\'', "''");
    format!(
        "CREATE TEMP TRIGGER IF NOT EXISTS rehearsal_writer AFTER INSERT ON main.{HISTORY_TABLE} BEGIN INSERT OR IGNORE INTO {WRITERS_TABLE} (seq, writer) VALUES (new.seq, '{quoted}'); END;"
    )
}

/// What `record install` or `remove` found and did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The triggers were created (or dropped).
    Done,
    /// They were already there (or already gone): nothing changed.
    AlreadyThat,
}

/// The recording triggers present in `conn`'s main schema.
pub fn triggers_present(conn: &Connection) -> rusqlite::Result<usize> {
    let mut n = 0;
    for name in RECORDING_TRIGGERS {
        let found: i64 =
            conn.query_row("SELECT count(*) FROM main.sqlite_master WHERE type = 'trigger' AND name = ?1", [name], |r| r.get(0))?;
        n += found as usize;
    }
    Ok(n)
}

/// Opens an existing comms.db for the recorder, checking that it is one: an SQLite file with
/// seed 004's two tables.
pub fn open_existing(path: &Path) -> Result<Connection> {
    if !path.is_file() {
        return Err(Error::input(format!("{}: no such file", path.display())));
    }
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| Error::input(format!("{}: cannot open: {e}", path.display())))?;
    conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))?;
    check_tables(&conn, path)?;
    Ok(conn)
}

/// The file is SQLite and holds seed 004's two tables with their columns.
pub fn check_tables(conn: &Connection, path: &Path) -> Result<()> {
    let not_sqlite = |e: rusqlite::Error| Error::input(format!("{}: not an SQLite database ({e})", path.display()));
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name IN ('orchestration_tasks', 'orchestration_messages')",
            [],
            |r| r.get(0),
        )
        .map_err(not_sqlite)?;
    if tables != 2 {
        return Err(Error::input(format!(
            "{}: not a comms.db: it lacks orchestration_tasks or orchestration_messages (seed 004's schema)",
            path.display()
        )));
    }
    for probe in [
        "SELECT task_id, state, instruction_path, session_id, worked_by, started_at, completed_at, report_path, retry_count, last_heartbeat, last_error FROM orchestration_tasks LIMIT 0",
        "SELECT id, task_id, from_session, message, message_type, timestamp FROM orchestration_messages LIMIT 0",
    ] {
        conn.prepare(probe).map_err(|e| Error::input(format!("{}: another schema than seed 004's: {e}", path.display())))?;
    }
    Ok(())
}

/// Installs the recorder into `conn` (scenarios/recorder/install.sql): idempotent, changes no
/// row of the two tables.
pub fn install(conn: &Connection) -> rusqlite::Result<Change> {
    let before = triggers_present(conn)?;
    conn.execute_batch(&sql_of(INSTALL_FILE))?;
    Ok(if before == RECORDING_TRIGGERS.len() { Change::AlreadyThat } else { Change::Done })
}

/// Drops the recording triggers (scenarios/recorder/remove.sql); the history stays.
pub fn remove(conn: &Connection) -> rusqlite::Result<Change> {
    let before = triggers_present(conn)?;
    conn.execute_batch(&sql_of(REMOVE_FILE))?;
    Ok(if before == 0 { Change::AlreadyThat } else { Change::Done })
}

/// `rehearsal record install DB`.
pub fn install_at(path: &Path) -> Result<Change> {
    let conn = open_existing(path)?;
    install(&conn).map_err(|e| Error::harness(format!("{}: installing the recorder: {e}", path.display())))
}

/// `rehearsal record remove DB`.
pub fn remove_at(path: &Path) -> Result<Change> {
    let conn = open_existing(path)?;
    remove(&conn).map_err(|e| Error::harness(format!("{}: removing the recorder: {e}", path.display())))
}

/// The simulator's writer identity: one connection serves every simulated session, so instead
/// of `identity_statement`'s literal its TEMP trigger reads the writer from a TEMP table the
/// world sets before each write (`set_writer`). The rows it records are those a deployment's
/// identified connections record.
const SIM_WRITER_SQL: &str = "CREATE TEMP TABLE rehearsal_me (writer TEXT NOT NULL); INSERT INTO temp.rehearsal_me VALUES ('');
CREATE TEMP TRIGGER rehearsal_writer AFTER INSERT ON main.rehearsal_history WHEN (SELECT writer FROM temp.rehearsal_me) != ''
BEGIN INSERT OR IGNORE INTO rehearsal_writers (seq, writer) VALUES (new.seq, (SELECT writer FROM temp.rehearsal_me)); END;";

/// Installs the recorder and the simulator's writer identity on a run's connection.
pub fn install_for_simulation(conn: &Connection) -> rusqlite::Result<()> {
    install(conn)?;
    conn.execute_batch(SIM_WRITER_SQL)
}

/// Names the session whose statement runs next on a simulated run's connection.
pub fn set_writer(conn: &Connection, session_id: &str) -> rusqlite::Result<()> {
    conn.execute("UPDATE temp.rehearsal_me SET writer = ?1", [session_id]).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comms_db(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("comms.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(crate::world::db::SCHEMA_SQL).unwrap();
        conn.execute_batch("INSERT INTO orchestration_tasks (task_id, state) VALUES ('task-01', 'watching');").unwrap();
        path
    }

    fn count(conn: &Connection, sql: &str) -> i64 {
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn installing_twice_snapshots_once_and_removing_keeps_the_history() {
        let dir = tempfile::tempdir().unwrap();
        let path = comms_db(dir.path());
        assert_eq!(install_at(&path).unwrap(), Change::Done);
        assert_eq!(install_at(&path).unwrap(), Change::AlreadyThat);
        let conn = Connection::open(&path).unwrap();
        assert_eq!(count(&conn, "SELECT count(*) FROM rehearsal_history WHERE op = 'SNAPSHOT'"), 1);
        conn.execute_batch(&identity_statement("it's-S1")).unwrap();
        conn.execute_batch("UPDATE orchestration_tasks SET state = 'working', session_id = 'S1'").unwrap();
        assert_eq!(count(&conn, "SELECT count(*) FROM rehearsal_writers WHERE writer = 'it''s-S1' AND seq = 2"), 1);
        assert!(conn.execute_batch("DELETE FROM rehearsal_history").is_err(), "append-only");
        assert_eq!(remove_at(&path).unwrap(), Change::Done);
        assert_eq!(remove_at(&path).unwrap(), Change::AlreadyThat);
        conn.execute_batch("UPDATE orchestration_tasks SET state = 'needs_review'").unwrap();
        assert_eq!(count(&conn, "SELECT count(*) FROM rehearsal_history"), 2, "nothing recorded once removed, nothing lost");
    }

    #[test]
    fn a_file_that_is_not_a_comms_db_is_refused_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.db");
        std::fs::write(&text, "not a database at all, just some text that is long enough").unwrap();
        let e = install_at(&text).unwrap_err().to_string();
        assert!(e.contains("not an SQLite database"), "{e}");
        let other = dir.path().join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE orchestration_tasks (task_id TEXT, state TEXT); CREATE TABLE orchestration_messages (id INTEGER);")
            .unwrap();
        let e = install_at(&other).unwrap_err().to_string();
        assert!(e.contains("another schema than seed 004's"), "{e}");
        assert_eq!(count(&Connection::open(&other).unwrap(), "SELECT count(*) FROM sqlite_master WHERE name LIKE 'rehearsal%'"), 0);
        assert!(install_at(&dir.path().join("none.db")).unwrap_err().to_string().contains("no such file"));
    }
}
