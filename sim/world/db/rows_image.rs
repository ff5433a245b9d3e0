//! Every row of `comms.db` at an instant, and the same rows put back into another run's
//! connection: what `explore crashes` forks an explored run from (issue 47, sim/run/fork.rs).
//!
//! Rows, not pages: seed 004's two tables are all a run's database holds (the schema guard,
//! sim/world/db/schema_guard.rs, refuses any statement that would change the schema), so a
//! database with the same rows under the same rowids answers every statement as the one they
//! were read from — the argument a kept connection already rests on (sim/world/db_pool.rs: only
//! the pages differ, which no statement reads). Putting rows back leaves every prepared
//! statement as it is; copying pages (SQLite's backup API, `sqlite3_deserialize`) resets the
//! connection's schema, and each statement is then prepared again on its next run.
//! Values go back as they were read: a column's affinity already applied to them, it
//! changes nothing the second time.

use rusqlite::types::Value;
use rusqlite::Connection;

/// Seed 004's task row, every column, with its rowid (the table has no integer key).
const TASK_COLUMNS: &str =
    "rowid, task_id, state, instruction_path, session_id, worked_by, started_at, completed_at, report_path, retry_count, last_heartbeat, last_error";
/// Seed 004's message row, every column (`id` is the rowid).
const MESSAGE_COLUMNS: &str = "id, task_id, from_session, message, message_type, timestamp";

/// The two tables' rows, in rowid order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowsImage {
    tasks: Vec<Vec<Value>>,
    messages: Vec<Vec<Value>>,
}

impl RowsImage {
    /// Reads every row of `conn`'s database.
    pub fn take(conn: &Connection) -> rusqlite::Result<RowsImage> {
        Ok(RowsImage {
            tasks: rows(conn, "orchestration_tasks", TASK_COLUMNS)?,
            messages: rows(conn, "orchestration_messages", MESSAGE_COLUMNS)?,
        })
    }

    /// Makes `conn`'s database hold these rows and no other, in one transaction.
    pub fn put_back(&self, conn: &Connection) -> rusqlite::Result<()> {
        conn.execute_batch("BEGIN; DELETE FROM orchestration_messages; DELETE FROM orchestration_tasks;")?;
        let filled = insert(conn, "orchestration_tasks", TASK_COLUMNS, &self.tasks)
            .and_then(|()| insert(conn, "orchestration_messages", MESSAGE_COLUMNS, &self.messages));
        match filled {
            Ok(()) => conn.execute_batch("COMMIT"),
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Rows held, of both tables.
    pub fn len(&self) -> usize {
        self.tasks.len() + self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn rows(conn: &Connection, table: &str, columns: &str) -> rusqlite::Result<Vec<Vec<Value>>> {
    let width = columns.split(',').count();
    let mut statement = conn.prepare_cached(&format!("SELECT {columns} FROM {table} ORDER BY rowid"))?;
    let mut out = Vec::new();
    let mut found = statement.raw_query();
    while let Some(row) = found.next()? {
        out.push((0..width).map(|col| row.get::<_, Value>(col)).collect::<rusqlite::Result<Vec<Value>>>()?);
    }
    Ok(out)
}

fn insert(conn: &Connection, table: &str, columns: &str, rows: &[Vec<Value>]) -> rusqlite::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let width = columns.split(',').count();
    let marks: Vec<String> = (1..=width).map(|i| format!("?{i}")).collect();
    let mut statement = conn.prepare_cached(&format!("INSERT INTO {table} ({columns}) VALUES ({})", marks.join(", ")))?;
    for row in rows {
        statement.execute(rusqlite::params_from_iter(row.iter()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::world::db::SCHEMA_SQL).unwrap();
        conn
    }

    #[test]
    fn rows_put_back_read_as_the_rows_taken_whatever_the_database_held() {
        let source = database();
        source
            .execute_batch(
                "INSERT INTO orchestration_tasks (task_id, state, retry_count, last_heartbeat) VALUES ('task-01', 'working', 2, '2026-01-01 00:00:05'), ('task-02', 'watching', 0, NULL);
                 DELETE FROM orchestration_tasks WHERE task_id = 'task-01';
                 INSERT INTO orchestration_tasks (task_id, state) VALUES ('task-03', 'complete');
                 INSERT INTO orchestration_messages (task_id, from_session, message, message_type) VALUES ('task-02', 'S1', 'hello', 'handoff'), ('task-03', 'S2', x'00ff', NULL);
                 DELETE FROM orchestration_messages WHERE id = 1;",
            )
            .unwrap();
        let image = RowsImage::take(&source).unwrap();
        assert_eq!(image.len(), 3);
        let target = database();
        target.execute_batch("INSERT INTO orchestration_tasks (task_id, state) VALUES ('task-09', 'error');").unwrap();
        image.put_back(&target).unwrap();
        assert_eq!(RowsImage::take(&target).unwrap(), image);
        // The next rows get the rowids they get in the source: the same statements, the same ids.
        let next = "INSERT INTO orchestration_tasks (task_id, state) VALUES ('task-04', 'working');
                    INSERT INTO orchestration_messages (task_id, from_session, message) VALUES ('task-04', 'S3', 'next');";
        source.execute_batch(next).unwrap();
        target.execute_batch(next).unwrap();
        assert_eq!(RowsImage::take(&target).unwrap(), RowsImage::take(&source).unwrap());
        let ids = "SELECT group_concat(rowid) FROM (SELECT rowid FROM orchestration_tasks ORDER BY rowid)";
        let of = |conn: &Connection| conn.query_row(ids, [], |r| r.get::<_, String>(0)).unwrap();
        assert_eq!(of(&target), "2,3,4");
        assert!(target.is_autocommit(), "the transaction is closed");
    }
}
