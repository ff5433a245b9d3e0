//! The run's `comms.db`: a real SQLite file with seed 004's exact schema, opened through the
//! clock VFS, executing the catalog's named statements with bound parameters.

use std::path::{Path, PathBuf};

use rusqlite::{ffi, Connection, OpenFlags};

pub mod outcome;
pub mod prepared;
pub mod random;
pub mod result_rows;
pub mod rows_image;
pub mod schema_guard;
pub mod step_limit;
pub mod typed;

pub use outcome::{Params, SqlOutcome};
pub use result_rows::ResultRows;

use super::read_replay::{BaseRun, ReadReplay};
use crate::base::clock::{ClockVfs, SimClock};
use crate::base::error::{Error, Result};
use crate::input::sql_catalog::Catalog;
use crate::vocab::{Stmt, TaskState};
use prepared::Prepared;

/// Seed 004 "Database", both `CREATE TABLE` statements verbatim ("template follow=exact").
pub const SCHEMA_SQL: &str = include_str!("../../scenarios/schema.sql");

/// A task row as the harness sees it around a write.
#[derive(Clone, Debug, PartialEq)]
pub struct RowSnapshot {
    pub state: TaskState,
    pub session_id: String,
    pub retry_count: i64,
    /// Seconds since `last_heartbeat`, on the simulated clock (`None`: never beat).
    pub heartbeat_age_s: Option<f64>,
}

/// What the harness saw around one write: the task row before and after, and for a message
/// insert its (id, task_id, message_type).
#[derive(Clone, Debug, Default)]
pub struct Observed {
    pub before: Option<RowSnapshot>,
    pub after: Option<RowSnapshot>,
    /// The first message the write inserted.
    pub message: Option<(i64, String, String)>,
    /// Every further message it inserted, in order (an `INSERT … SELECT` of several rows).
    pub more_messages: Vec<(i64, String, String)>,
    /// Other task rows it inserted or updated (not its own `:task_id`'s), by task id.
    pub other_rows: Vec<String>,
}

/// A row the write changed, as SQLite's update hook names it (deletes are not kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Changed {
    Task(i64),
    Message(i64),
}

/// The rows changed since the last write began: SQLite calls the hook once per row, so a
/// multi-row INSERT or UPDATE is seen whole (issue 26), not only through `last_insert_rowid`.
type ChangeLog = std::sync::Arc<std::sync::Mutex<Vec<Changed>>>;

/// The task state in column `col` of the harness's own row read: the schema's CHECK
/// constraint allows only the eleven, so other text is the harness's error.
fn state_column(row: &rusqlite::Row, col: usize) -> rusqlite::Result<TaskState> {
    let text: String = row.get(col)?;
    text.parse().map_err(|e| rusqlite::Error::FromSqlConversionFailure(col, rusqlite::types::Type::Text, Box::new(e)))
}

/// Counters of what the run asked of SQLite.
#[derive(Clone, Copy, Debug, Default)]
pub struct DbStats {
    /// Protocol statements executed on behalf of actors.
    pub statements: u64,
    /// Reads the harness itself made to observe the database (trace "state after").
    pub observer_reads: u64,
    /// Of `statements`, the reads answered from a base run's rows (sim/world/read_replay.rs).
    pub reads_replayed: u64,
}

/// One protocol statement as executed: its catalog name, bound parameters and simulated
/// instant, for `rehearsal bench --overhead` to replay through bare prepared statements on the
/// same clock (sim/campaign/overhead.rs).
#[derive(Clone, Debug)]
pub struct Recorded {
    pub stmt: Stmt,
    pub params: Params,
    /// What `datetime('now')` read when it ran: the floor must read the same, or its time
    /// comparisons (staleness, ages) would match other rows and do other work.
    pub at_unix_ms: i64,
    /// The actor that ran it, as the trace names it (`rehearsal calibrate load --closed-loop`
    /// replays each actor's statements in order); set by the world after the statement.
    pub actor: String,
}

pub struct CommsDb {
    // Field order matters: the connection must close before its VFS is unregistered.
    prepared: Prepared,
    pub stats: DbStats,
    /// `Some` while recording: every protocol statement executed, in order.
    pub recorded: Option<Vec<Recorded>>,
    path: PathBuf,
    changes: ChangeLog,
    /// The budget of each protocol statement in SQLite steps (`run.sql_steps_max`).
    steps: step_limit::StepLimit,
    /// Each statement's catalog entry, `name (file:line)`, by `Stmt` index: what an error names.
    entries: Vec<String>,
    /// The SHA-256 of the catalog's statements (`Catalog::identity`): with `entries`, which
    /// catalog the connection's statements were prepared from (`fits`).
    sql_sha256: String,
    /// The stream behind `random()`, reseeded for each run of a kept connection.
    random: random::Stream,
    /// Whether a statement of the catalog names `random`: its reads may not be replayed.
    draws_random: bool,
    /// Whether a statement of the catalog reads the connection's own state (`changes()`,
    /// `total_changes()`, `last_insert_rowid()`, a `PRAGMA`) or ends a transaction's
    /// autocommit (`BEGIN`, `SAVEPOINT`): what a kept connection does not reset, so such a
    /// catalog's connection is never kept (`keepable`). The shipped SQL has none.
    reads_connection_state: bool,
    /// `Some` while recording every statement for runs that follow this one (`record_base`).
    base: Option<BaseRun>,
    /// `Some` while answering reads from a base run's (`set_replay`).
    replay: Option<ReadReplay>,
    /// The history recorder is installed (sim/world/recorder.rs, `record_history`).
    history: bool,
    _vfs: ClockVfs,
}

impl CommsDb {
    /// Creates a fresh `comms.db` at `path` (removing an old one and its WAL), applies the
    /// schema and prepares every statement of `catalog`.
    pub fn create(path: &Path, clock: SimClock, sqlite_seed: u64, catalog: Catalog) -> Result<CommsDb> {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let file = PathBuf::from(format!("{}{suffix}", path.display()));
            match std::fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::harness(format!("cannot remove {}: {e}", file.display()))),
            }
        }
        let vfs = ClockVfs::register(clock).map_err(Error::harness)?;
        seed_sqlite_prng(sqlite_seed);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags_and_vfs(path, flags, vfs.name())
            .map_err(|e| Error::harness(format!("cannot create {}: {e}", path.display())))?;
        // The simulator is the only process that touches the file while a run lasts (sessions
        // are actors; lock contention is modelled in virtual time), so it holds the lock for
        // the whole run. Set before the first WAL access, this keeps the WAL index in heap
        // memory: no shared-memory file and no fcntl lock calls per transaction, which were
        // most of a statement's cost (issue 7). The bytes written are the same.
        conn.query_row("PRAGMA locking_mode = EXCLUSIVE", [], |r| r.get::<_, String>(0))?;
        set_query_planner_stability(&conn)?;
        // WAL: the journal mode of a deployment with readers beside a writer. Seed 004
        // "Database" does not ask for it: its "WAL isolation: comms-link cannot see changes
        // made by external sqlite3 and vice versa" says what sessions (comms-link) and the stop
        // hook (sqlite3) see of each other's writes, two connections where this run has one:
        // every statement commits at its instant, so a read here at a hook check's instant is
        // the snapshot the hook's own connection would take (docs/protocol.md C53, C140).
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if mode != "wal" {
            return Err(Error::harness(format!("{} refused WAL mode (got {mode})", path.display())));
        }
        // NORMAL is what WAL users run with; it is per connection, so it is set here.
        // One connection serves every simulated session, so its page cache may hold the whole
        // file (up to 64 MiB, taken only as pages are read): with SQLite's default 2 MiB, a
        // day's fleet (2.2 MB) re-read evicted pages from the OS at every turn. A speed
        // setting only: results and bytes are the same (golden hashes unchanged); the floor
        // (sim/campaign/overhead.rs) uses it too.
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536;")?;
        // Lock waits are modelled in virtual time; a real wait would stall the whole
        // simulation thread (docs/protocol.md C13, docs/calibration.md).
        conn.busy_timeout(std::time::Duration::ZERO)?;
        conn.execute_batch(SCHEMA_SQL).map_err(|e| Error::harness(format!("schema: {e}")))?;
        // The protocol's `random()` draws from this run's stream, not the process's PRNG.
        let random = random::register(&conn, sqlite_seed)?;
        let changes = watch_changes(&mut conn)?;
        let steps = step_limit::StepLimit::install(&mut conn)?;
        let entries = entries_of(&catalog);
        let sql_sha256 = catalog.identity().sha256;
        let code: Vec<String> = Stmt::ALL.iter().map(|s| sql_code(&catalog.get(s.name()).sql)).collect();
        let names_any = |words: &[&str]| code.iter().any(|sql| words.iter().any(|w| sql.contains(w)));
        let draws_random = names_any(&["random"]);
        let reads_connection_state = names_any(CONNECTION_STATE_WORDS);
        // Each statement is prepared once, checked and kept by handle.
        let mut prepared = Prepared::new(conn, &catalog)?;
        check_write_flags(&mut prepared, &catalog)?;
        Ok(CommsDb {
            prepared,
            stats: DbStats::default(),
            recorded: None,
            path: path.to_path_buf(),
            changes,
            steps,
            entries,
            sql_sha256,
            random,
            draws_random,
            reads_connection_state,
            base: None,
            replay: None,
            history: false,
            _vfs: vfs,
        })
    }

    /// Whether this connection's statements are `catalog`'s (the same SQL, named from the
    /// same files and lines): a kept connection serves only a run of the same catalog.
    pub fn fits(&self, catalog: &Catalog, sql_sha256: &str) -> bool {
        self.sql_sha256 == sql_sha256 && self.entries == entries_of(catalog)
    }

    /// Makes this connection what `create` gives a new run with this catalog: empty tables,
    /// the clock at `epoch_unix_ms`, `random()` and SQLite's PRNG seeded with `sqlite_seed`,
    /// nothing recorded or counted. What differs from a new file is physical only (pages
    /// freed and reused, the WAL's frames and salts), which no statement reads: rowids restart
    /// at 1 in an emptied table (no AUTOINCREMENT in seed 004's schema), and plans do not
    /// depend on the data (no ANALYZE statistics; `set_query_planner_stability`). Statements
    /// stay prepared: that, with the schema and pragmas, is what keeping saves
    /// (sim/world/db_pool.rs).
    pub fn restart(&mut self, epoch_unix_ms: i64, sqlite_seed: u64) -> Result<()> {
        self._vfs.clock().restart(epoch_unix_ms);
        seed_sqlite_prng(sqlite_seed);
        self.random.reseed(sqlite_seed);
        // A DELETE without WHERE on a table with no trigger is SQLite's truncate: a handful of
        // steps, far below any run's budget (`run.sql_steps_max`, which `arm` sets again).
        self.prepared.conn().execute_batch(EMPTY_TABLES_SQL).map_err(|e| Error::harness(format!("emptying a kept comms.db: {e}")))?;
        self.steps.set_max(step_limit::DEFAULT_STEPS_MAX);
        self.steps.refill();
        self.changes.lock().expect("the hook never panics").clear();
        self.stats = DbStats::default();
        self.recorded = None;
        self.base = None;
        self.replay = None;
        Ok(())
    }

    /// Records every statement from now on, for runs that follow this one (`take_base`).
    pub fn record_base(&mut self) {
        self.base = Some(BaseRun::default());
    }

    /// The statements recorded since `record_base`.
    pub fn take_base(&mut self) -> Option<BaseRun> {
        self.base.take()
    }

    /// Answers reads from `base`'s rows while this run matches it (sim/world/read_replay.rs);
    /// not when the catalog's SQL draws from `random()`.
    pub fn set_replay(&mut self, base: std::sync::Arc<BaseRun>) {
        // A statement that reads the connection's state or controls a transaction counts as
        // a read to SQLite (`BEGIN`, `ROLLBACK TO` return no rows): skipping it would change
        // the database, so such a catalog never replays, as one that draws `random()`.
        if !self.draws_random && !self.reads_connection_state {
            self.replay = Some(ReadReplay::new(base));
        }
    }

    /// Whether a run on this connection can be forked from a snapshot of another's rows and
    /// brought to it on that run's replies (sim/run/fork.rs): what makes its reads replayable
    /// (`set_replay`: no `random()`, no connection state, which rows alone do not carry), and
    /// no history recorder (its tables are not a snapshot's).
    pub fn forkable(&self) -> bool {
        !self.draws_random && !self.reads_connection_state && !self.history
    }

    /// Every row of the database now (sim/world/db/rows_image.rs).
    pub fn rows_image(&self) -> Result<rows_image::RowsImage> {
        self.prepared.unguarded(rows_image::RowsImage::take).map_err(|e| Error::harness(format!("reading a snapshot of comms.db: {e}")))
    }

    /// Makes this run's database the one `image` was taken of, with that run's counters
    /// `stats`, and its reads answered from that run's record from its statement `next` on
    /// (a forked run at its snapshot, sim/run/fork.rs).
    pub fn fork_from(&mut self, image: &rows_image::RowsImage, stats: DbStats, next: usize) -> Result<()> {
        let put = self.prepared.unguarded(|conn| image.put_back(conn));
        put.map_err(|e| Error::harness(format!("putting a snapshot's rows into comms.db: {e}")))?;
        self.changes.lock().expect("the hook never panics").clear();
        self.stats = stats;
        if let Some(replay) = &mut self.replay {
            replay.resume_at(next);
        }
        Ok(())
    }

    /// Whether this connection, its run finished, can stand for a new file in the next run
    /// (sim/world/db_pool.rs): its catalog reads none of the connection's own state, and no
    /// transaction was left open.
    pub fn keepable(&self) -> bool {
        !self.history && !self.reads_connection_state && self.prepared.conn().is_autocommit()
    }

    /// Installs the history recorder (issue 40) in this run's database, with the simulator's
    /// writer identity: every write from now on is recorded as a deployment's would be.
    pub fn record_history(&mut self) -> Result<()> {
        self.prepared
            .unguarded(crate::world::recorder::install_for_simulation)
            .map_err(|e| Error::harness(format!("installing the recorder: {e}")))?;
        self.history = true;
        Ok(())
    }

    /// Whether the history recorder is installed.
    pub fn records_history(&self) -> bool {
        self.history
    }

    /// Names the session whose statement runs next, for the history's writer column.
    pub fn set_writer(&mut self, session_id: &str) -> rusqlite::Result<()> {
        crate::world::recorder::set_writer(self.prepared.conn(), session_id)
    }

    /// The clock this connection's SQL reads (`datetime('now')`): the run's clock.
    pub fn clock(&self) -> &SimClock {
        self._vfs.clock()
    }

    /// Each protocol statement may run at most `max` SQLite steps (`run.sql_steps_max`).
    pub fn set_steps_max(&mut self, max: u64) {
        self.steps.set_max(max);
    }

    /// Bounds the run's bytes (issue 41: a heartbeat writing `hex(zeroblob(400000000))` ran
    /// past 120 s at 3.9 GB of memory and a 3.2 GB database): no string or blob over
    /// `value_bytes_max` (`SQLITE_LIMIT_LENGTH`, "string or blob too big"), no database over
    /// `db_bytes_max` (`PRAGMA max_page_count`, "database or disk is full"). A statement that
    /// meets either is named by `bytes_spent`.
    pub fn set_bytes_max(&mut self, db_bytes_max: u64, value_bytes_max: u64) -> Result<()> {
        let value = i32::try_from(value_bytes_max).unwrap_or(i32::MAX);
        // SAFETY: the handle is this live connection's; sqlite3_limit only sets a number.
        unsafe { rusqlite::ffi::sqlite3_limit(self.prepared.conn().handle(), rusqlite::ffi::SQLITE_LIMIT_LENGTH, value) };
        let set = |conn: &rusqlite::Connection| -> rusqlite::Result<()> {
            let page: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
            let pages = (db_bytes_max as i64 / page.max(1)).max(1);
            conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))
        };
        self.prepared.unguarded(set).map_err(|e| Error::harness(format!("setting the run's byte bounds: {e}")))
    }

    /// When `e` is a statement that met the run's byte bounds (`set_bytes_max`), what to
    /// report: the statement named by its catalog entry, and the bound.
    pub fn bytes_spent(&self, stmt: Stmt, e: &rusqlite::Error) -> Option<String> {
        let entry = &self.entries[prepared::index(stmt)];
        match e.sqlite_error_code()? {
            rusqlite::ErrorCode::TooBig => Some(format!(
                "statement {entry} made a string or blob over run.value_bytes_max and was stopped; raise run.value_bytes_max if it must"
            )),
            rusqlite::ErrorCode::DiskFull if self.at_page_bound() => {
                Some(format!("statement {entry} grew comms.db past run.db_bytes_max and was stopped; raise run.db_bytes_max if it must"))
            }
            _ => None,
        }
    }

    /// Whether "database or disk is full" was the run's bound and not the disk: the statement
    /// was rolled back, so the pages it wanted are not counted any more; the disk is known
    /// full when its folder has less than 64 MiB free.
    fn at_page_bound(&self) -> bool {
        let Some(dir) = self.path.parent() else { return true };
        let Ok(c_dir) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else { return true };
        // SAFETY: an all-zero statvfs is a valid value for statvfs(3) to fill; the path is a C string.
        let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(c_dir.as_ptr(), &mut stat) } != 0 {
            return true;
        }
        (stat.f_bavail as u128) * (stat.f_frsize as u128) >= 64 << 20
    }

    /// When `e` is a statement stopped by `run.sql_steps_max`, what to report: the statement
    /// named by its catalog entry.
    pub fn steps_spent(&self, stmt: Stmt, e: &rusqlite::Error) -> Option<String> {
        self.steps.spent_by(e).then(|| self.steps.message(&self.entries[prepared::index(stmt)]))
    }

    /// Executes one named protocol statement with the parameters the engine supplies.
    /// Parameters the statement does not use are skipped (a variant may drop one).
    pub fn execute(&mut self, stmt: Stmt, params: &Params) -> rusqlite::Result<SqlOutcome> {
        let at_unix_ms = self._vfs.clock().now_unix_ms();
        if let Some(outcome) = self.replay.as_mut().and_then(|replay| replay.answer(stmt, params, at_unix_ms)) {
            self.stats.statements += 1;
            self.stats.reads_replayed += 1;
            return Ok(outcome);
        }
        self.steps.arm();
        let outcome = self.execute_armed(stmt, params, at_unix_ms);
        self.steps.refill();
        if let Some(base) = &mut self.base {
            base.push(stmt, params, at_unix_ms, &outcome);
        }
        if let Some(replay) = &mut self.replay {
            replay.confirm(&outcome);
        }
        outcome
    }

    /// `execute`, within the budget `arm` gave.
    fn execute_armed(&mut self, stmt: Stmt, params: &Params, at_unix_ms: i64) -> rusqlite::Result<SqlOutcome> {
        let total_before = self.prepared.conn().total_changes();
        let slot = self.prepared.slot(stmt);
        slot.bind(params)?;
        // SQLite places its progress-handler calls by the statement's running total of steps,
        // which outlives a reset: without this, where `run.sql_steps_max` stops a statement
        // would depend on how often it ran before (in this run, or on a kept connection in
        // runs before it, sim/world/db_pool.rs, or not at all for reads a run answered from
        // a base run's, sim/world/read_replay.rs). Counted from zero, it depends on this
        // execution alone.
        slot.statement.reset_status(rusqlite::StatementStatus::VmStep);
        self.stats.statements += 1;
        if let Some(recorded) = &mut self.recorded {
            recorded.push(Recorded { stmt, params: params.clone(), at_unix_ms, actor: String::new() });
        }
        let (readonly, column_count) = (slot.readonly, slot.column_count);
        if column_count == 0 {
            let rows_affected = slot.statement.raw_execute()?;
            return Ok(SqlOutcome { rows_affected, rows: ResultRows::default(), readonly });
        }
        let mut rows_out = ResultRows::with_width(column_count);
        let mut rows = slot.statement.raw_query();
        while let Some(row) = rows.next()? {
            rows_out.push_row(row)?;
        }
        drop(rows);
        let rows_affected = if readonly { 0 } else { self.changes_since(total_before) };
        Ok(SqlOutcome { rows_affected, rows: rows_out, readonly })
    }

    /// What a write that returns rows (`INSERT … RETURNING`: `send_receipt`) changed, once its
    /// rows are stepped through (SQLite counts them when the statement completes): the change
    /// count, as `raw_execute` reports a write without rows. Only if the connection changed any
    /// row since `total_before`: `changes()` keeps the count of the last completed INSERT,
    /// UPDATE or DELETE, so a writing statement of another kind would otherwise report that
    /// one's. A fenced-out receipt inserts nothing and counts 0, which coverage's `zero-rows`
    /// item and the trace's row count then show.
    fn changes_since(&self, total_before: u64) -> usize {
        let conn = self.prepared.conn();
        let changed = conn.total_changes() != total_before;
        if changed {
            conn.changes() as usize
        } else {
            0
        }
    }

    /// The harness's own look at a task row (not a protocol statement).
    pub fn snapshot(&mut self, task_id: &str) -> rusqlite::Result<Option<RowSnapshot>> {
        Ok(self.snapshot_with_rowid(task_id)?.map(|(row, _)| row))
    }

    /// `snapshot`, with the row's rowid.
    fn snapshot_with_rowid(&mut self, task_id: &str) -> rusqlite::Result<Option<(RowSnapshot, i64)>> {
        self.stats.observer_reads += 1;
        let stmt = self.prepared.snapshot();
        stmt.raw_bind_parameter(1, task_id)?;
        let mut rows = stmt.raw_query();
        match rows.next()? {
            Some(row) => Ok(Some((
                RowSnapshot {
                    state: state_column(row, 0)?,
                    session_id: row.get(1)?,
                    retry_count: row.get(2)?,
                    heartbeat_age_s: row.get(3)?,
                },
                row.get(4)?,
            ))),
            None => Ok(None),
        }
    }

    /// Executes a statement; for a write, also snapshots `task_id`'s row before and after,
    /// reads back every message it inserted, and names every other task row it changed.
    pub fn execute_observed(&mut self, stmt: Stmt, params: &Params, task_id: &str) -> rusqlite::Result<(SqlOutcome, Observed)> {
        if !stmt.writes() {
            return Ok((self.execute(stmt, params)?, Observed::default()));
        }
        let before = self.snapshot_with_rowid(task_id)?;
        self.changes.lock().expect("the hook never panics").clear();
        let outcome = self.execute(stmt, params)?;
        let changed = std::mem::take(&mut *self.changes.lock().expect("the hook never panics"));
        let after = self.snapshot_with_rowid(task_id)?;
        let own_rowid = after.as_ref().or(before.as_ref()).map(|(_, rowid)| *rowid);
        let mut observed = Observed { before: before.map(|(row, _)| row), after: after.map(|(row, _)| row), ..Observed::default() };
        for change in changed {
            match change {
                Changed::Message(id) => {
                    self.stats.observer_reads += 1;
                    let Some(message) = read_message(self.prepared.message(), id).ok().flatten() else { continue };
                    match observed.message {
                        None => observed.message = Some(message),
                        Some(_) => observed.more_messages.push(message),
                    }
                }
                Changed::Task(rowid) if Some(rowid) != own_rowid => {
                    self.stats.observer_reads += 1;
                    let task: Option<String> = self.prepared.conn().query_row(TASK_OF_ROWID_SQL, [rowid], |r| r.get(0)).ok();
                    if let Some(task) = task.filter(|t| !observed.other_rows.contains(t)) {
                        observed.other_rows.push(task);
                    }
                }
                Changed::Task(_) => {}
            }
        }
        Ok((outcome, observed))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn connection(&self) -> &Connection {
        self.prepared.conn()
    }

    /// Checkpoints the WAL into the main file and closes, so `comms.db` alone holds the run.
    /// A close that fails leaves the connection open, and so its VFS registered (`ClockVfs`'s
    /// drop sees the open log).
    pub fn close(self) -> Result<()> {
        let CommsDb { prepared, _vfs, path, .. } = self;
        let conn = prepared.into_connection();
        // The WAL is in memory (sim/base/wal_memory.rs): this is where the run's last writes reach
        // the file, so a full disk shows here, and the error names the file.
        let checkpoint = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
        checkpoint.map_err(|e| Error::harness(format!("writing {}: {e}", path.display())))?;
        conn.close().map_err(|(_, e)| Error::harness(format!("closing {}: {e}", path.display())))?;
        drop(_vfs);
        Ok(())
    }

    /// When this connection closes, its WAL is discarded, not folded into the file: for a
    /// connection kept between hash-only runs (sim/world/db_pool.rs), whose file is deleted.
    pub fn discard_on_close(&self) -> Result<()> {
        self.prepared.conn().set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        Ok(())
    }
}

/// Words of SQL that read or change the connection's own state, which `restart` does not
/// reset (`CommsDb::keepable`).
const CONNECTION_STATE_WORDS: &[&str] = &["changes(", "last_insert_rowid", "pragma", "begin", "savepoint", "commit", "rollback", "release"];

/// `sql` lower-cased without its comments and string literals, and with no blank between
/// words: what SQLite runs, for `CONNECTION_STATE_WORDS` and `random` (a comment may say
/// "release", a message "begin"; `changes ()` is `changes()`). Without blanks a word may
/// also be found across two (`… begin`) or inside a name (`beginning`): either way the
/// answer errs on the safe side, a connection not kept, reads not replayed.
fn sql_code(sql: &str) -> String {
    let mut code = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(c) = rest.chars().next() {
        let skipped = |from: usize, end: &str| rest[from..].find(end).map_or(rest.len(), |i| from + i + end.len());
        let taken = if c == '\'' {
            skipped(1, "'")
        } else if let Some(close) = match c {
            '"' => Some("\""),
            '`' => Some("`"),
            '[' => Some("]"),
            _ => None,
        } {
            // A quoted identifier is a name, not code: kept as one, so a quote or a dash in
            // it starts nothing.
            let end = skipped(1, close);
            code.push_str(&rest[..end].to_ascii_lowercase());
            rest = &rest[end..];
            continue;
        } else if rest.starts_with("--") {
            skipped(2, "\n")
        } else if rest.starts_with("/*") {
            skipped(2, "*/")
        } else {
            code.push(c.to_ascii_lowercase());
            rest = &rest[c.len_utf8()..];
            continue;
        };
        rest = &rest[taken..];
    }
    code.retain(|c| !c.is_whitespace());
    code
}

/// Empties every table of seed 004's schema (scenarios/schema.sql), for `CommsDb::restart`.
const EMPTY_TABLES_SQL: &str = "DELETE FROM orchestration_messages; DELETE FROM orchestration_tasks;";

/// Each statement's catalog entry, `name (file:line)`, by `Stmt` index.
fn entries_of(catalog: &Catalog) -> Vec<String> {
    Stmt::ALL.iter().map(|s| format!("`{s}` ({})", catalog.get(s.name()).origin)).collect()
}

/// The task id of a row another task's statement changed (rare: a multi-row UPDATE).
const TASK_OF_ROWID_SQL: &str = "SELECT task_id FROM orchestration_tasks WHERE rowid = ?1";

/// Registers the update hook that logs every task and message row a statement inserts or
/// updates; the write's observation reads the log (`execute_observed`).
fn watch_changes(conn: &mut Connection) -> Result<ChangeLog> {
    let changes = ChangeLog::default();
    let log = changes.clone();
    conn.update_hook(Some(move |action: rusqlite::hooks::Action, _db: &str, table: &str, rowid: i64| {
        if action == rusqlite::hooks::Action::SQLITE_DELETE {
            return;
        }
        let change = match table {
            "orchestration_tasks" => Changed::Task(rowid),
            "orchestration_messages" => Changed::Message(rowid),
            _ => return,
        };
        if let Ok(mut log) = log.lock() {
            log.push(change);
        }
    }))?;
    Ok(changes)
}

/// A message row by id, as `query_row` read it (any error, like no row, is no message).
fn read_message(stmt: &mut rusqlite::Statement<'_>, rowid: i64) -> rusqlite::Result<Option<(i64, String, String)>> {
    stmt.raw_bind_parameter(1, rowid)?;
    let mut rows = stmt.raw_query();
    let Some(row) = rows.next()? else { return Ok(None) };
    Ok(Some((row.get(0)?, row.get(1)?, row.get(2)?)))
}

/// Every statement must keep the vocabulary's write flag (`Stmt::writes`): the oracles snapshot
/// the row around writes only, so an override that turned a write into a read, or the other way
/// round, would silently change what is observed. Checked on the prepared form, before the run.
fn check_write_flags(prepared: &mut Prepared, catalog: &Catalog) -> Result<()> {
    for stmt in Stmt::ALL {
        let statement = catalog.get(stmt.name());
        let writes = !prepared.slot(stmt).readonly;
        if writes != stmt.writes() {
            let (is, should) = if writes { ("writes", "only read") } else { ("only reads", "write") };
            return Err(Error::input(format!("statement `{stmt}` ({}) {is}, but `{stmt}` must {should}", statement.origin)));
        }
    }
    Ok(())
}

/// Refuses a `comms.db` that another process holds a lock on (a conductor or sqlite3 shell
/// still attached to an old run): replacing it would pull the file from under them.
pub fn ensure_not_locked(path: &Path) -> Result<()> {
    let Ok(conn) = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE) else { return Ok(()) };
    conn.busy_timeout(std::time::Duration::ZERO)?;
    match conn.execute_batch("BEGIN EXCLUSIVE; ROLLBACK;") {
        Ok(()) => Ok(()),
        Err(e) if matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)) => {
            Err(Error::input(format!(
                "{} is locked by another process ({e}); close whatever has it open, or choose another --out",
                path.display()
            )))
        }
        // Not a database at all (a truncated file, say): nobody is using it; `--force` replaces it.
        Err(_) => Ok(()),
    }
}

/// The query planner stability guarantee: plans do not depend on bound values. Without it,
/// this build (STAT4) marks a statement with a range on a bound parameter (`id > :last`) as
/// expiring on every rebind, and every execution starts from cleared bindings
/// (`prepared::Slot::bind`), so such a statement was parsed again every time it ran. Plans are the same either
/// way (no ANALYZE statistics exist); used by the run and by the floor it is compared to.
pub fn set_query_planner_stability(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

/// Seeds SQLite's PRNG (WAL salts, temp names) so database bytes are reproducible
/// (ARCHITECTURE.md, invariant "byte-identical `trace.csv`"). The PRNG is process-wide; the final `comms.db` does not depend
/// on it because the WAL is checkpointed and removed on close.
fn seed_sqlite_prng(seed: u64) {
    // SAFETY: SQLITE_TESTCTRL_PRNG_SEED takes (int seed, sqlite3 *db); a NULL db means "use
    // the seed as given".
    unsafe {
        ffi::sqlite3_test_control(ffi::SQLITE_TESTCTRL_PRNG_SEED, (seed as u32) as std::ffi::c_int, std::ptr::null_mut::<ffi::sqlite3>());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::Value;
    use std::ffi::CString;

    /// `catalog` with `text` (one `-- name:` entry or more) in place of its entries.
    fn created_with(text: &str) -> Result<CommsDb> {
        let dir = tempfile::tempdir().expect("temp");
        let mut catalog = Catalog::default_protocol();
        catalog.override_with(text, "test.sql")?;
        CommsDb::create(&dir.path().join("comms.db"), SimClock::new(0), 1, catalog)
    }

    fn input_error(text: &str) -> String {
        let err = created_with(text).err().expect("refused");
        assert_eq!(err.exit_code(), 2, "{err}");
        err.to_string()
    }

    #[test]
    fn a_state_column_reads_as_a_state_and_other_text_does_not() {
        let outcome = SqlOutcome {
            rows: ResultRows::from_values(vec![vec![Value::Text("working".into()), Value::Text("finished".into()), Value::Null]]),
            ..SqlOutcome::default()
        };
        assert_eq!(outcome.state(0, 0), Some(TaskState::Working));
        assert_eq!(outcome.state(0, 1), None);
        assert_eq!(outcome.state(0, 2), None);
        let conn = Connection::open_in_memory().unwrap();
        assert_eq!(conn.query_row("SELECT 'exit_requested'", [], |r| state_column(r, 0)).unwrap(), TaskState::ExitRequested);
        let refused = conn.query_row("SELECT 'finished'", [], |r| state_column(r, 0)).unwrap_err().to_string();
        assert!(refused.contains("unknown task state `finished`"), "{refused}");
    }

    /// The WAL lives in memory (sim/base/wal_memory.rs): `close` folds it into `comms.db`, while
    /// a connection set to `discard_on_close` drops what it held when it is dropped. Either way
    /// no `-wal` file is left and the file opens as a database; only the first holds the run's
    /// writes.
    #[test]
    fn closing_keeps_the_writes_and_dropping_after_discard_on_close_drops_them_leaving_a_sound_file() {
        let dir = tempfile::tempdir().expect("temp");
        let rows_after = |name: &str, discard: bool| -> Option<i64> {
            let path = dir.path().join(name);
            let mut db = CommsDb::create(&path, SimClock::new(0), 1, Catalog::default_protocol()).expect("created");
            let params: Params = vec![(":session_id", Value::Text("S1".into()))];
            assert_eq!(db.execute(Stmt::ConductorRegister, &params).expect("runs").rows_affected, 1);
            if discard {
                db.discard_on_close().expect("set");
                drop(db);
            } else {
                db.close().expect("closed");
            }
            assert!(!PathBuf::from(format!("{}-wal", path.display())).exists(), "the WAL never reaches the disk");
            let conn = Connection::open(&path).expect("reopened");
            conn.query_row("SELECT count(*) FROM orchestration_tasks", [], |r| r.get(0)).ok()
        };
        assert_eq!(rows_after("kept.db", false), Some(1));
        assert_eq!(rows_after("discarded.db", true), None, "the schema itself was only in the WAL");
    }

    /// A kept connection restarted reads as a new one: empty tables whose rowids start at 1,
    /// the new epoch on the clock SQL reads, `random()` drawn from the new seed's stream.
    #[test]
    fn a_restarted_connection_reads_as_a_new_one() {
        let dir = tempfile::tempdir().expect("temp");
        let register: Params = vec![(":session_id", Value::Text("S1".into()))];
        let reads = |db: &mut CommsDb| -> (i64, i64, String, i64) {
            assert_eq!(db.execute(Stmt::ConductorRegister, &register).expect("runs").rows_affected, 1);
            let conn = db.connection();
            let tasks: i64 = conn.query_row("SELECT count(*) FROM orchestration_tasks", [], |r| r.get(0)).unwrap();
            let rowid: i64 = conn.query_row("SELECT max(rowid) FROM orchestration_tasks", [], |r| r.get(0)).unwrap();
            let now: String = conn.query_row("SELECT datetime('now')", [], |r| r.get(0)).unwrap();
            let random: i64 = conn.query_row("SELECT random()", [], |r| r.get(0)).unwrap();
            let messages: i64 = conn.query_row("SELECT count(*) FROM orchestration_messages", [], |r| r.get(0)).unwrap();
            (tasks + messages, rowid, now, random)
        };
        let mut fresh = CommsDb::create(&dir.path().join("fresh.db"), SimClock::new(86_400_000), 7, Catalog::default_protocol()).unwrap();
        let expected = reads(&mut fresh);
        let mut kept = CommsDb::create(&dir.path().join("kept.db"), SimClock::new(0), 1, Catalog::default_protocol()).unwrap();
        kept.clock().advance_to(5_000_000);
        reads(&mut kept);
        let more = "INSERT INTO orchestration_tasks (task_id, state) VALUES ('task-01', 'working'), ('task-02', 'working');
                    INSERT INTO orchestration_messages (task_id, from_session, message) VALUES ('task-01', 'S2', 'hello');";
        kept.connection().execute_batch(more).unwrap();
        kept.restart(86_400_000, 7).expect("restarted");
        assert_eq!((kept.stats.statements, kept.clock().now_unix_ms()), (0, 86_400_000));
        assert_eq!(reads(&mut kept), expected);
        assert_eq!(expected.0, 1, "one row after the first statement");
    }

    #[test]
    fn the_code_of_sql_leaves_out_comments_and_literals() {
        let sql = "-- release the row\nUPDATE t SET a = 'BEGIN' /* commit */ WHERE b = 1; SELECT Changes ()";
        assert_eq!(sql_code(sql), "updatetseta=whereb=1;selectchanges()");
        assert_eq!(sql_code("SELECT 'it''s'"), "select");
        assert_eq!(sql_code("SELECT 1 -- unterminated"), "select1");
        // A quote or a dash inside a quoted name hides nothing after it.
        assert_eq!(sql_code("SELECT \"a'b\", [c--d], `e/*f`, random() FROM t"), "select\"a'b\",[c--d],`e/*f`,random()fromt");
    }

    /// A connection whose catalog reads the connection's own state, or that was left in a
    /// transaction, is not kept; the shipped catalogs' connections are, words in their
    /// comments ("release-stale") notwithstanding.
    #[test]
    fn only_a_connection_that_can_stand_for_a_new_file_is_keepable() {
        assert!(created_with("").expect("created").keepable(), "the shipped SQL");
        let quickstart = crate::input::scenario::Scenario::load(std::path::Path::new("scenarios/quickstart.toml")).unwrap();
        let dir = tempfile::tempdir().expect("temp");
        let mut variants = 0;
        for variant in crate::vocab::variant_name::VARIANT_NAMES {
            let Ok(with) = crate::input::variant::with_variants(&quickstart, &[variant.to_string()]) else { continue };
            let catalog = crate::plan::catalog_for(&with).unwrap();
            let db = CommsDb::create(&dir.path().join(format!("{variant}.db")), SimClock::new(0), 1, catalog).unwrap();
            assert!(db.keepable() && !db.draws_random, "{variant}: its words in comments and messages are not code");
            variants += 1;
        }
        assert!(variants > 10, "{variants} variants checked");
        let counting = "-- name: read_task_state\nSELECT state, changes() AS retry_count, last_heartbeat, 0.0 AS seconds_stale FROM orchestration_tasks WHERE task_id = :task_id;\n";
        assert!(!created_with(counting).expect("created").keepable());
        let db = created_with("").expect("created");
        db.connection().execute_batch("BEGIN").unwrap();
        assert!(!db.keepable(), "a transaction left open");
    }

    /// `run.sql_steps_max` stops a statement by its own steps in one execution, never by
    /// steps it took before (in this run, or in runs before on a kept connection, or not at
    /// all when a base run's rows answered it): a short read runs however often it ran.
    #[test]
    fn a_statement_s_step_budget_does_not_depend_on_how_often_it_ran_before() {
        let mut db = created_with("").expect("created");
        db.set_steps_max(1);
        let params: Params = vec![(":task_id", Value::Text("task-01".into()))];
        for run in 0..300 {
            db.execute(Stmt::ReadTaskState, &params).unwrap_or_else(|e| panic!("execution {run}: {e}"));
        }
    }

    /// A catalog whose reads draw `random()` or touch the connection's state (a `SAVEPOINT`
    /// counts as a read) never answers reads from a base run's (sim/world/read_replay.rs).
    #[test]
    fn only_a_catalog_whose_reads_are_pure_replays_them() {
        let replaying = |text: &str| {
            let mut db = created_with(text).expect("created");
            db.set_replay(std::sync::Arc::new(BaseRun::default()));
            db.replay.is_some()
        };
        assert!(replaying(""), "the shipped SQL");
        assert!(!replaying("-- name: read_task_state\nSELECT state, random() AS retry_count, last_heartbeat, 0.0 AS seconds_stale FROM orchestration_tasks WHERE task_id = :task_id;\n"));
        assert!(!replaying(
            "-- name: read_task_state\nSELECT state, total_changes () AS retry_count, last_heartbeat, 0.0 AS seconds_stale FROM orchestration_tasks WHERE task_id = :task_id;\n"
        ));
    }

    /// Issue 30: a close that fails (here: a statement left unfinalized) is an error, and the
    /// connection it leaves open keeps its VFS: SQLite can still find it, nothing is freed
    /// under the connection.
    #[test]
    fn a_failed_close_is_an_error_and_keeps_the_vfs_registered() {
        let db = created_with("").expect("created");
        let name = CString::new(db._vfs.name()).expect("a name");
        // SAFETY: the raw handle is used only on this thread, while the connection lives.
        let handle = unsafe { db.connection().handle() };
        let mut stmt: *mut ffi::sqlite3_stmt = std::ptr::null_mut();
        // SAFETY: the connection's own handle, on its thread; the statement is finalized below.
        let rc = unsafe { ffi::sqlite3_prepare_v2(handle, c"SELECT 1".as_ptr(), -1, &mut stmt, std::ptr::null_mut()) };
        assert_eq!(rc, ffi::SQLITE_OK);
        let err = db.close().expect_err("an unfinalized statement keeps the connection open");
        assert!(err.to_string().contains("closing"), "{err}");
        // SAFETY: looking a VFS up by name; then the test's own statement and connection.
        unsafe {
            assert!(!ffi::sqlite3_vfs_find(name.as_ptr()).is_null(), "the VFS is still registered");
            assert_eq!(ffi::sqlite3_finalize(stmt), ffi::SQLITE_OK);
            assert_eq!(ffi::sqlite3_close(handle), ffi::SQLITE_OK, "the connection was still open, and now closes");
        }
    }

    /// A write that returns rows counts the rows it changed (issue 28: `send_receipt`, an
    /// INSERT … RETURNING, under `durable-cursor`): an inserted receipt is 1 and a fenced-out
    /// one 0, so the trace and coverage's `zero-rows send_receipt` tell them apart; a read
    /// after it still counts none.
    #[test]
    fn a_write_returning_rows_counts_the_rows_it_changed() {
        let mut db = created_with(include_str!("../../scenarios/variants/fencing.sql")).expect("created");
        let text = |t: &str| Value::Text(t.to_string());
        let task: Params = vec![(":task_id", text("task-01")), (":instruction_path", text("docs/x.md"))];
        db.execute(Stmt::CreateTask, &task).expect("created");
        let claim: Params = vec![(":task_id", text("task-01")), (":session_id", text("s-1")), (":worked_by", text("S1"))];
        assert_eq!(db.execute(Stmt::ClaimTask, &claim).expect("claimed").rows_affected, 1);
        let receipt = |session: &str| -> Params {
            vec![
                (":task_id", text("task-01")),
                (":session_id", text(session)),
                (":message", text("RECEIPT: conductor messages after #0")),
                (":last_processed_message_id", Value::Integer(0)),
            ]
        };
        let own = db.execute(Stmt::SendReceipt, &receipt("s-1")).expect("inserted");
        assert_eq!((own.rows.len(), own.rows_affected, own.readonly), (1, 1, false));
        let fenced = db.execute(Stmt::SendReceipt, &receipt("s-0")).expect("ran");
        assert_eq!((fenced.rows.len(), fenced.rows_affected), (0, 0));
        db.execute(Stmt::SendReceipt, &receipt("s-1")).expect("inserted");
        let read = db.execute(Stmt::PollTasks, &Vec::new()).expect("read");
        assert_eq!((read.rows.len(), read.rows_affected), (1, 0));
    }

    /// Issue 26: a statement that inserts two messages and one that updates every task row
    /// are observed whole — every message read back, every other task row named.
    #[test]
    fn a_write_names_every_message_it_inserted_and_every_other_task_row_it_changed() {
        let twice = "-- name: send_conductor_message\nINSERT INTO orchestration_messages (task_id, from_session, message, message_type)\nSELECT :task_id, 'task-00', :message, :message_type FROM (SELECT 1 UNION ALL SELECT 2);\n";
        let every_row = "-- name: set_task_state\nUPDATE orchestration_tasks SET state = :state, last_heartbeat = datetime('now');\n";
        let mut db = created_with(&format!("{twice}{every_row}")).expect("created");
        let text = |t: &str| Value::Text(t.to_string());
        for task in ["task-01", "task-02", "task-03"] {
            let params: Params = vec![(":task_id", text(task)), (":instruction_path", text("docs/x.md"))];
            db.execute_observed(Stmt::CreateTask, &params, task).expect("created");
        }
        let params: Params = vec![(":task_id", text("task-02")), (":message", text("ok")), (":message_type", text("approval"))];
        let (outcome, observed) = db.execute_observed(Stmt::SendConductorMessage, &params, "task-02").expect("inserted");
        assert_eq!(outcome.rows_affected, 2);
        let approval = |id: i64| (id, "task-02".to_string(), "approval".to_string());
        assert_eq!(observed.message, Some(approval(1)));
        assert_eq!(observed.more_messages, [approval(2)]);
        assert!(observed.other_rows.is_empty(), "{:?}", observed.other_rows);
        let params: Params = vec![(":task_id", text("task-02")), (":state", text("fix_proposed"))];
        let (_, observed) = db.execute_observed(Stmt::SetTaskState, &params, "task-02").expect("updated");
        assert_eq!(observed.after.expect("its own row").state, TaskState::FixProposed);
        assert_eq!(observed.other_rows, ["task-01", "task-03"]);
        assert!(observed.message.is_none() && observed.more_messages.is_empty());
    }

    #[test]
    fn the_default_protocol_prepares_and_runs() {
        let mut db = created_with("").expect("created");
        let params: Params = vec![(":task_id", Value::Text("task-01".into()))];
        assert!(db.execute(Stmt::ReadTaskState, &params).expect("runs").rows.is_empty());
    }

    /// Statements are prepared once, in the order of their names, and the first problem is
    /// the one named: as when every statement was prepared apart for each check.
    #[test]
    fn a_bad_statement_is_named_by_the_first_check_it_fails_in_the_order_of_names() {
        let no_sql = "-- name: heartbeat\nUPDATE nowhere SET x = 1;\n";
        assert!(input_error(no_sql).contains("statement `heartbeat` (test.sql:1) does not prepare: no such table: nowhere"));
        let unsupplied = "-- name: heartbeat\nUPDATE orchestration_tasks SET state = :state WHERE task_id = :tsk;\n";
        assert!(input_error(unsupplied).contains("statement `heartbeat` (test.sql:1) uses parameter :state"));
        // `conductor_register` sorts before `heartbeat`: its failure is the one named.
        let both = format!("{unsupplied}-- name: conductor_register\nSELECT * FROM nowhere;\n");
        assert!(input_error(&both).contains("statement `conductor_register` (test.sql:3) does not prepare"));
        let read = "-- name: heartbeat\nSELECT :task_id, :session_id;\n";
        assert!(input_error(read).contains("statement `heartbeat` (test.sql:1) only reads, but `heartbeat` must write"));
    }
}
