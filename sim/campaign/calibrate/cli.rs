//! One protocol statement through the `sqlite3` command-line shell, one process per statement,
//! as a musician's Bash tool or the seeds' scripts run it (000 Reference: validate-musician-
//! state.sh, `db_query`: `sqlite3 -separator '|' "$DB_PATH" "$1"`), timed from outside (the
//! process) and inside (the shell's `.timer`).
//!
//! The SQL is the catalog's, its parameters bound by name by SQLite itself and expanded into
//! literals (`sqlite3_expanded_sql`), which is the text a script formats. It goes to the shell
//! on stdin, not as an argument: the shell's `.timer` reports only statements it reads, and the
//! few hundred bytes of a pipe change nothing measurable. A write runs as
//! `BEGIN IMMEDIATE; statement; COMMIT;`: the same single-statement transaction autocommit
//! makes (a write takes the WAL write lock when it starts, BEGIN IMMEDIATE only says when), so
//! the `.timer` of `BEGIN IMMEDIATE` is the wait for the lock. The hold is read from SQLite's
//! own clock just after BEGIN and just after COMMIT (`julianday('now')`, read afresh by each
//! statement): the `.timer`s of the statement and the COMMIT alone would leave out the shell's
//! work between them and any time the process is descheduled while it holds the lock, which
//! on a loaded machine is most of the hold. Both print whole milliseconds: below 1 ms reads 0.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use rusqlite::Connection;

use crate::base::error::{Error, Result};
use crate::input::sql_catalog::Catalog;
use crate::world::db::prepared::Slot;
use crate::world::db::{Recorded, SCHEMA_SQL};

/// The `sqlite3` shell on one database file.
#[derive(Clone, Debug)]
pub struct Shell {
    pub program: PathBuf,
    pub db: PathBuf,
    /// `.timeout`: how long SQLite's busy handler waits for a lock (the shell's default is 0).
    pub busy_timeout_ms: u64,
}

/// How one process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    Ok,
    /// SQLITE_BUSY: "database is locked" (after the busy timeout).
    Busy,
    /// Any other error, as the shell printed it (a constraint, say).
    Failed(String),
}

impl Ending {
    pub fn label(&self) -> &'static str {
        match self {
            Ending::Ok => "ok",
            Ending::Busy => "busy",
            Ending::Failed(_) => "failed",
        }
    }
}

/// What one process measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Timed {
    /// Spawn to exit, as the caller waits for it.
    pub wall_ms: f64,
    /// A write's `BEGIN IMMEDIATE`: the wait for the write lock (None for a read).
    pub lock_wait_ms: Option<f64>,
    /// A write's statement and COMMIT: how long it held the write lock (None for a read, or a
    /// write that never got the lock).
    pub hold_ms: Option<f64>,
    pub ending: Ending,
}

impl Shell {
    /// Whether the program runs at all: its version line, or why not.
    pub fn version(&self) -> Result<String> {
        let out = Command::new(&self.program)
            .arg("--version")
            .output()
            .map_err(|e| Error::input(format!("cannot run `{}` (install sqlite3, or pass --sqlite3 PATH): {e}", self.program.display())))?;
        Ok(String::from_utf8_lossy(&out.stdout).split_whitespace().take(2).collect::<Vec<_>>().join(" "))
    }

    /// Runs `script` (shell lines) and returns its stdout, failing on any error: for set-up.
    pub fn run_script(&self, script: &str) -> Result<String> {
        let out = self.spawn(script)?;
        if !out.status.success() {
            return Err(Error::harness(format!("sqlite3 on {}: {}", self.db.display(), String::from_utf8_lossy(&out.stderr).trim())));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs one statement (expanded SQL) in its own process and times it.
    pub fn time_statement(&self, sql: &str, writes: bool) -> Result<Timed> {
        let body = if writes {
            format!("BEGIN IMMEDIATE;\nSELECT '{MARK}', {NOW_MS};\n{sql};\nCOMMIT;\nSELECT '{MARK}', {NOW_MS};\n")
        } else {
            format!("{sql};\n")
        };
        let script = format!(".timeout {}\n.timer on\n{body}", self.busy_timeout_ms);
        let started = Instant::now();
        let out = self.spawn(&script)?;
        let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let timers = run_times_ms(&stdout);
        let marks = marks_ms(&stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ending = if out.status.success() {
            Ending::Ok
        } else if stderr.contains("database is locked") || stderr.contains("(5)") {
            Ending::Busy
        } else {
            Ending::Failed(stderr.trim().to_string())
        };
        let (lock_wait_ms, hold_ms) = if writes {
            // A write that got the lock and committed printed both marks; one refused at
            // BEGIN printed none.
            let hold = (ending == Ending::Ok && marks.len() == 2).then(|| marks[1] - marks[0]);
            (timers.first().copied(), hold)
        } else {
            (None, None)
        };
        Ok(Timed { wall_ms, lock_wait_ms, hold_ms, ending })
    }

    fn spawn(&self, script: &str) -> Result<std::process::Output> {
        let mut command = Command::new(&self.program);
        command.args(["-bail", "-batch"]).arg(&self.db).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // Started and tracked in one step, and none after a Ctrl-C began: the interrupt kills
        // it and waits for it to end before the database it writes is removed
        // (sim/base/live_files.rs).
        let (mut child, _live) = crate::base::live_files::spawn(&mut command)
            .map_err(|e| Error::input(format!("cannot run `{}` (install sqlite3, or pass --sqlite3 PATH): {e}", self.program.display())))?;
        let mut stdin = child.stdin.take().expect("piped");
        stdin.write_all(script.as_bytes()).map_err(|e| Error::harness(format!("writing to sqlite3: {e}")))?;
        drop(stdin);
        child.wait_with_output().map_err(|e| Error::harness(format!("waiting for sqlite3: {e}")))
    }
}

/// What marks the clock readings among a statement's own rows.
const MARK: &str = "calibrate-clock-ms";
/// SQLite's clock in ms since the Unix epoch (`julianday` keeps whole ms).
const NOW_MS: &str = "CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)";

/// The clock readings (ms) of the `MARK` rows, in order.
pub fn marks_ms(stdout: &str) -> Vec<f64> {
    stdout.lines().filter_map(|line| line.strip_prefix(MARK)?.strip_prefix('|')?.trim().parse::<f64>().ok()).collect()
}

/// The `real` seconds of every `Run Time:` line the shell's `.timer` printed, in ms.
pub fn run_times_ms(stdout: &str) -> Vec<f64> {
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix("Run Time: real "))
        .filter_map(|rest| rest.split_whitespace().next()?.parse::<f64>().ok())
        .map(|s| s * 1000.0)
        .collect()
}

/// Each recorded statement as the text a script would run: the catalog's SQL with its
/// parameters bound by name and expanded into literals by SQLite.
pub fn expand_all(catalog: &Catalog, recorded: &[Recorded]) -> Result<Vec<String>> {
    let conn = Connection::open_in_memory()?;
    conn.execute_batch(SCHEMA_SQL)?;
    let mut slots = Slots::new();
    let mut out = Vec::with_capacity(recorded.len());
    for r in recorded {
        let slot = bound(&conn, &mut slots, catalog, r)?;
        let sql = slot.statement.expanded_sql().ok_or_else(|| Error::harness(format!("cannot expand `{}`", r.stmt)))?;
        out.push(sql.trim().trim_end_matches(';').to_string());
    }
    Ok(out)
}

/// Statements prepared on one connection, by name.
pub type Slots<'c> = std::collections::BTreeMap<crate::vocab::Stmt, Slot<'c>>;

/// `recorded`'s statement, prepared once per connection (kept in `slots`), its parameters bound.
pub fn bound<'s, 'c>(conn: &'c Connection, slots: &'s mut Slots<'c>, catalog: &Catalog, recorded: &Recorded) -> Result<&'s mut Slot<'c>> {
    let slot = match slots.entry(recorded.stmt) {
        std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::btree_map::Entry::Vacant(e) => {
            e.insert(Slot::prepare(conn, recorded.stmt, &catalog.get(recorded.stmt.name()).sql)?)
        }
    };
    slot.bind(&recorded.params)?;
    Ok(slot)
}

/// A fresh WAL database with seed 004's schema at `path` (its -wal and -shm files removed),
/// made through the shell as a project's set-up would.
pub fn fresh_wal_db(shell: &Shell, path: &Path) -> Result<()> {
    remove_db(path)?;
    shell.run_script(&format!("PRAGMA journal_mode = WAL;\n{SCHEMA_SQL}\n"))?;
    Ok(())
}

/// Removes a database file and its WAL companions.
pub fn remove_db(path: &Path) -> Result<()> {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::harness(format!("cannot remove {}: {e}", file.display()))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Stmt;
    use rusqlite::types::Value;

    #[test]
    fn run_times_are_read_in_ms_and_rows_are_skipped() {
        let out = "task-01|working\nRun Time: real 0.015 user 0.000568 sys 0.000000\nRun Time: real 0.000 user 0.0 sys 0.0\n";
        assert_eq!(run_times_ms(out), vec![15.0, 0.0]);
        let marked = "calibrate-clock-ms|1764080367123\n3\ncalibrate-clock-ms|1764080367140\n";
        assert_eq!(marks_ms(marked), vec![1_764_080_367_123.0, 1_764_080_367_140.0]);
    }

    #[test]
    fn parameters_are_bound_by_name_and_expanded_as_literals() {
        let catalog = Catalog::default_protocol();
        let recorded = [Recorded {
            stmt: Stmt::SetTaskState,
            params: vec![(":task_id", Value::Text("task-0'1".into())), (":state", Value::Text("working".into()))],
            at_unix_ms: 0,
            actor: String::new(),
        }];
        let sql = &expand_all(&catalog, &recorded).unwrap()[0];
        assert!(sql.contains("task_id = 'task-0''1'") && sql.contains("SET state = 'working'"), "{sql}");
        assert!(!sql.contains(':'), "{sql}");
    }
}
