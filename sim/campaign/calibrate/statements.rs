//! `rehearsal calibrate statements`: what the protocol's own statements cost on this machine,
//! as the seeds' scripts run them, fitted into `statement_ms` and `write_hold_ms`.
//!
//! A run of the scenario gives the statements (the catalog's SQL with the parameters the run
//! bound, in the proportions the protocol runs them). They are run again in order on a fresh
//! WAL database on the output folder's file system (a tmpfs would hide the fsync of every
//! commit), so it holds the rows the run had at each point and ends at the size the run's
//! `comms.db` had; evenly spaced ones go through their own `sqlite3` process each, timed, one
//! after another (no contention), the rest through a connection kept open (`replay_timing`).
//! Seeded from the run this way, a write changes the row it changed in the run: timed on the
//! run's final database, most guarded UPDATEs would match no row and commit nothing. The
//! seeds set no PRAGMA (004 "Database"'s "WAL isolation" is about what comms-link and the
//! stop hook's sqlite3 see of each other's writes, not a journal mode to set: docs/protocol.md
//! C53); the run's file is WAL, so `synchronous` is the shell's default, read back and reported. Wall-clock time is measured here and never feeds
//! a run (ARCHITECTURE.md, invariant "nothing reads the wall clock").

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use std::collections::BTreeSet;

use rusqlite::Connection;

use super::cli::{bound, expand_all, fresh_wal_db, Shell, Slots, Timed};
use super::fit::{self, Fit};
use super::{recorded_run, RecordedRun};
use crate::base::error::{Error, Result};
use crate::input::sql_catalog::Catalog;
use crate::world::db::Recorded;

pub struct StatementsOptions {
    pub scenario: PathBuf,
    pub seed: Option<u64>,
    pub samples: usize,
    pub max_seconds: u64,
    pub out: PathBuf,
    pub force: bool,
    pub sqlite3: PathBuf,
}

/// The files this command writes into its output folder.
const OWNED: crate::base::out_folder::Owned =
    &["statements.csv", "calibration.toml", "calibration.db", "calibration.db-wal", "calibration.db-shm"];

/// One raw sample, a row of statements.csv.
#[derive(Serialize)]
struct SampleRow {
    /// The statement's position in the run.
    index: usize,
    statement: String,
    /// Whether the sample counts for `statement_ms` (the run's mix) or for `write_hold_ms`
    /// (the writes alone); one process may count for both.
    for_statement_ms: bool,
    for_write_hold_ms: bool,
    writes: bool,
    wall_ms: f64,
    lock_wait_ms: Option<f64>,
    hold_ms: Option<f64>,
    ending: &'static str,
}

pub struct StatementsReport {
    pub scenario: String,
    pub seed: u64,
    pub sqlite_version: String,
    pub synchronous: String,
    pub journal_mode: String,
    pub db_bytes: u64,
    pub planned: usize,
    pub rows: usize,
    pub failed: usize,
    pub statement_fits: Vec<Fit>,
    pub hold_fits: Vec<Fit>,
    /// The holds themselves as an `empirical` distribution, to paste with their tail.
    pub hold_empirical: Option<crate::base::dist::Dist>,
    pub statement_quantiles: Option<[f64; 3]>,
    pub hold_quantiles: Option<[f64; 3]>,
    pub writes: usize,
    pub elapsed: Duration,
    pub out: PathBuf,
}

pub fn calibrate_statements(options: &StatementsOptions) -> Result<StatementsReport> {
    if options.samples == 0 {
        return Err(Error::input("--samples must be at least 1"));
    }
    // Held to the end: dropped at once, the lock would let a second command in (issue 41).
    let _lock = crate::base::out_folder::claim(&options.out, OWNED, options.force)?;
    let db = options.out.join("calibration.db");
    let shell = Shell { program: options.sqlite3.clone(), db: db.clone(), busy_timeout_ms: 0 };
    let sqlite_version = shell.version()?;
    let run = recorded_run(crate::input::scenario::Scenario::load(&options.scenario)?, &options.scenario, options.seed)?;
    // The database is timed until statements.csv is written: a Ctrl-C before that (which
    // exits at once) removes it, as a run's unfinished database is (issue 41).
    let companions = ["", "-wal", "-shm", "-journal"].map(|suffix| PathBuf::from(format!("{}{suffix}", db.display())));
    let live = crate::base::live_files::track(companions);
    fresh_wal_db(&shell, &db)?;
    let journal_mode = shell.run_script("PRAGMA journal_mode;\n")?.trim().to_string();
    let synchronous = synchronous_name(shell.run_script("PRAGMA synchronous;\n")?.trim());
    let picks = picks(&run.recorded, options.samples);
    let started = Instant::now();
    let rows = replay_timing(&shell, &run, &picks, Duration::from_secs(options.max_seconds))?;
    let db_bytes = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    crate::base::csv_rows::write_rows(&options.out.join("statements.csv"), &rows)?;
    drop(live);
    let ok = |r: &&SampleRow| r.ending == "ok";
    let walls: Vec<f64> = rows.iter().filter(ok).filter(|r| r.for_statement_ms).map(|r| r.wall_ms).collect();
    let holds: Vec<f64> = rows.iter().filter(ok).filter(|r| r.for_write_hold_ms).filter_map(|r| r.hold_ms).collect();
    let report = StatementsReport {
        scenario: run.summary.scenario.clone(),
        seed: run.summary.seed,
        sqlite_version,
        synchronous,
        journal_mode,
        db_bytes,
        planned: picks.iter().filter(|p| p.for_statement_ms || p.for_write_hold_ms).count(),
        rows: rows.len(),
        failed: rows.iter().filter(|r| r.ending != "ok").count(),
        statement_fits: fit::candidates(&walls),
        hold_fits: fit::candidates(&holds),
        hold_empirical: fit::empirical(&holds, 200),
        statement_quantiles: quantiles(&walls),
        hold_quantiles: quantiles(&holds),
        writes: holds.len(),
        elapsed: started.elapsed(),
        out: options.out.clone(),
    };
    crate::base::atomic::write_atomically(&options.out.join("calibration.toml"), report.toml().as_bytes())?;
    Ok(report)
}

/// The database `fresh_wal_db` made, opened without SQLite's create flag and read once, both
/// through the registry of what a Ctrl-C removes (sim/base/live_files.rs): the first read opens
/// its `-wal` and `-shm` files (making them if missing), which the connection then keeps open,
/// so after a Ctrl-C removed them this connection makes none of them again.
fn open_made(db: &Path) -> Result<Connection> {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    crate::base::live_files::make(|| {
        let conn = Connection::open_with_flags(db, flags)?;
        conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get::<_, i64>(0))?;
        Ok::<_, Error>(conn)
    })
}

fn row(pick: &Pick, statement: &str, writes: bool, timed: &Timed) -> SampleRow {
    SampleRow {
        index: pick.index,
        statement: statement.to_string(),
        for_statement_ms: pick.for_statement_ms,
        for_write_hold_ms: pick.for_write_hold_ms,
        writes,
        wall_ms: round3(timed.wall_ms),
        lock_wait_ms: timed.lock_wait_ms.map(round3),
        hold_ms: timed.hold_ms.map(round3),
        ending: timed.ending.label(),
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// A statement of the run to time, and what its sample is for.
#[derive(Clone, Debug, PartialEq)]
pub struct Pick {
    pub index: usize,
    pub for_statement_ms: bool,
    pub for_write_hold_ms: bool,
}

/// `samples` statements spread evenly over the run (its mix of reads and writes, for
/// `statement_ms`) and `samples` writes spread evenly over its writes (for `write_hold_ms`: a
/// read-heavy protocol would leave few), in the run's order.
pub fn picks(recorded: &[Recorded], samples: usize) -> Vec<Pick> {
    let writes: Vec<usize> = (0..recorded.len()).filter(|&i| recorded[i].stmt.writes()).collect();
    let for_statement: BTreeSet<usize> = evenly_spaced(recorded.len(), samples).into_iter().collect();
    let for_hold: BTreeSet<usize> = evenly_spaced(writes.len(), samples).into_iter().map(|k| writes[k]).collect();
    for_statement
        .union(&for_hold)
        .map(|&index| Pick { index, for_statement_ms: for_statement.contains(&index), for_write_hold_ms: for_hold.contains(&index) })
        .collect()
}

/// Runs the whole run's statements in order on the WAL database: the picked ones through the
/// shell, timed, the others on one connection kept open meanwhile (as the sessions' comms-link
/// connections are; not timed, synchronous OFF for speed, which binds only that connection).
/// Every sample thus finds the rows and the size the run had at that point. Stops timing at
/// `cap`.
fn replay_timing(shell: &Shell, run: &RecordedRun, picks: &[Pick], cap: Duration) -> Result<Vec<SampleRow>> {
    let conn = open_made(&shell.db)?;
    conn.execute_batch("PRAGMA synchronous = OFF;")?;
    let expanded = expand_all(&run.catalog, &picks.iter().map(|p| run.recorded[p.index].clone()).collect::<Vec<_>>())?;
    let mut slots = Slots::new();
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut done = 0;
    for (pick, sql) in picks.iter().zip(&expanded) {
        if started.elapsed() >= cap {
            break;
        }
        for recorded in &run.recorded[done..pick.index] {
            apply(&conn, &mut slots, &run.catalog, recorded)?;
        }
        let stmt = run.recorded[pick.index].stmt;
        let timed = shell.time_statement(sql, stmt.writes())?;
        rows.push(row(pick, stmt.name(), stmt.writes(), &timed));
        done = pick.index + 1;
    }
    Ok(rows)
}

/// Executes one recorded statement on `conn`, reading every row of a query. What SQLite
/// refuses (a constraint the run met too) is the protocol's and is passed over.
fn apply<'c>(conn: &'c Connection, slots: &mut Slots<'c>, catalog: &Catalog, recorded: &Recorded) -> Result<()> {
    let slot = bound(conn, slots, catalog, recorded)?;
    let result = if slot.column_count == 0 {
        slot.statement.raw_execute().map(|_| ())
    } else {
        let mut rows = slot.statement.raw_query();
        loop {
            match rows.next() {
                Ok(Some(_)) => {}
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        }
    };
    match result {
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::ConstraintViolation => Ok(()),
        other => Ok(other?),
    }
}

/// `count` indexes spread evenly over `0..len` (all of them when `count >= len`): the
/// statements in the proportions the run ran them, from its start to its end.
pub fn evenly_spaced(len: usize, count: usize) -> Vec<usize> {
    if count >= len {
        return (0..len).collect();
    }
    (0..count).map(|k| k * len / count).collect()
}

/// p50, p95 and max.
pub fn quantiles(samples: &[f64]) -> Option<[f64; 3]> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    (!sorted.is_empty()).then(|| [fit::quantile(&sorted, 0.5), fit::quantile(&sorted, 0.95), sorted[sorted.len() - 1]])
}

/// `PRAGMA synchronous` answers a number.
fn synchronous_name(value: &str) -> String {
    let name = match value {
        "0" => "OFF",
        "1" => "NORMAL",
        "2" => "FULL",
        "3" => "EXTRA",
        _ => "?",
    };
    format!("{name} ({value})")
}

fn show(q: Option<[f64; 3]>) -> String {
    q.map_or("no samples".to_string(), |[p50, p95, max]| format!("p50 {p50:.1} ms, p95 {p95:.1} ms, max {max:.1} ms"))
}

impl StatementsReport {
    /// calibration.toml: the two settings ready to paste, with where they came from.
    pub fn toml(&self) -> String {
        let mut out = String::new();
        out.push_str("# Written by `rehearsal calibrate statements` (docs/calibration.md).\n");
        out.push_str(&format!(
            "# {} samples of the statements of {} seed {}, one `sqlite3` process each ({}), journal_mode {}, synchronous {}, on a comms.db replayed to {} bytes.\n",
            self.rows, self.scenario, self.seed, self.sqlite_version, self.journal_mode, self.synchronous, self.db_bytes
        ));
        out.push_str("# statement_ms here is the database's part alone (process start, SQL, commit, exit): a session's\n");
        out.push_str("# round trip adds its tool call and the model's turn, so this is a floor, not a replacement\n");
        out.push_str("# for the default uniform(500..=3000). write_hold_ms is realistic as it is.\n\n");
        out.push_str(&format!("[timing]\n# {}\n", show(self.statement_quantiles)));
        out.push_str(&fit::toml_setting("statement_ms", &self.statement_fits));
        out.push_str(&format!("\n[faults]\n# {} writes: {}\n", self.writes, show(self.hold_quantiles)));
        out.push_str(&fit::toml_setting("write_hold_ms", &self.hold_fits));
        if let Some(sample) = &self.hold_empirical {
            // The measurement itself, tail included (the tail makes SQLITE_BUSY, docs/calibration.md).
            out.push_str(&format!("# write_hold_ms = {}  # the measured holds themselves\n", fit::toml_value(sample)));
        }
        out
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "scenario      {} seed {} (its statements, replayed into a {} byte comms.db)\n",
            self.scenario, self.seed, self.db_bytes
        ));
        out.push_str(&format!(
            "sqlite3       {}, journal_mode {}, synchronous {}\n",
            self.sqlite_version, self.journal_mode, self.synchronous
        ));
        let cut = if self.rows < self.planned { format!(" (of {} planned: the time cap)", self.planned) } else { String::new() };
        out.push_str(&format!("samples       {}{cut}, {} failed, in {:.1} s\n", self.rows, self.failed, self.elapsed.as_secs_f64()));
        out.push_str(&format!("statement     {}\n", show(self.statement_quantiles)));
        out.push_str(&format!("write hold    {} ({} writes)\n", show(self.hold_quantiles), self.writes));
        if let Some(best) = self.statement_fits.first() {
            out.push_str(&format!("statement_ms  = {}\n", fit::toml_value(&best.dist)));
        }
        if let Some(best) = self.hold_fits.first() {
            out.push_str(&format!("write_hold_ms = {}\n", fit::toml_value(&best.dist)));
        }
        out.push_str(&format!(
            "written       {} and {}\n",
            self.out.join("calibration.toml").display(),
            self.out.join("statements.csv").display()
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_spread_over_the_whole_run() {
        assert_eq!(evenly_spaced(10, 3), vec![0, 3, 6]);
        assert_eq!(evenly_spaced(3, 10), vec![0, 1, 2]);
        assert_eq!(quantiles(&[3.0, 1.0, 2.0]), Some([2.0, 2.9, 3.0]));
        assert_eq!(synchronous_name("2"), "FULL (2)");
    }
}
