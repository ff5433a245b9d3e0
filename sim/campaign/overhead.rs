//! `rehearsal bench --overhead`: how far a run is from the SQLite floor.
//!
//! A run is recorded (every protocol statement with its bound parameters), then timed again
//! without recording; the recorded statements are replayed through bare prepared statements
//! on a fresh database with the same settings (WAL, synchronous=NORMAL, seed 004's schema,
//! the same catalog). The replay is the floor: what SQLite alone needs for the statements
//! the run executed. Everything above it is the simulator: the executor, the oracles' reads,
//! the trace, temp/ files. Wall-clock time is measured here and only here; it never feeds
//! back into a run (ARCHITECTURE.md, invariant "nothing reads the wall clock").
//!
//! The runs and the floor are made in one scratch folder, on /dev/shm where it exists
//! (sim/base/scratch.rs), else in the system's temp folder: creating and deleting a run's ~600
//! files and its trace on a disk file system was ~7 % of the command, none of it the
//! simulator's, and both sides live on the same file system so the comparison stays fair.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use crate::base::clock::{ClockVfs, SimClock};

use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::input::sql_catalog::Catalog;
use crate::run::{catalog_for, execute, run_scenario, Execution, RunOptions};
use crate::world::db::prepared::{index, prepare_all};
use crate::world::db::{Recorded, SCHEMA_SQL};

pub struct OverheadReport {
    pub scenario: String,
    pub seed: u64,
    pub statements: usize,
    pub observer_reads: u64,
    pub events: u64,
    pub makespan_ms: i64,
    /// Fastest of the repeats, whole run (database creation to the renamed trace).
    pub run: Duration,
    /// Fastest of the repeats, bare replay (database creation to the final checkpoint).
    pub floor: Duration,
    pub repeats: usize,
}

impl OverheadReport {
    pub fn ratio(&self) -> f64 {
        self.run.as_secs_f64() / self.floor.as_secs_f64().max(1e-9)
    }

    pub fn render(&self) -> String {
        let per = |d: Duration| d.as_secs_f64() * 1e6 / self.statements.max(1) as f64;
        let mut out = String::new();
        out.push_str(&format!("scenario     {}\n", self.scenario));
        out.push_str(&format!("seed         {}\n", self.seed));
        out.push_str(&format!(
            "workload     {} statements (+{} oracle reads), {} events, {} simulated\n",
            self.statements,
            self.observer_reads,
            self.events,
            crate::run::human_ms(self.makespan_ms)
        ));
        out.push_str(&format!("run          {:.2} ms ({:.1} µs/statement), fastest of {}\n", ms(self.run), per(self.run), self.repeats));
        out.push_str(&format!(
            "floor        {:.2} ms ({:.1} µs/statement): the same statements through bare prepared statements\n",
            ms(self.floor),
            per(self.floor)
        ));
        out.push_str(&format!("ratio        {:.2}x (run / floor)\n", self.ratio()));
        let speed = self.makespan_ms as f64 / ms(self.run).max(1e-9);
        out.push_str(&format!("speed        {speed:.0}x faster than real time\n"));
        out
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn overhead(
    scenario_path: &Path,
    seed: Option<u64>,
    protocol: Option<&str>,
    variants: &[String],
    sql: Option<&Path>,
    repeats: usize,
) -> Result<OverheadReport> {
    let load = || Scenario::load(scenario_path)?.with_sql(sql).with_profile(protocol);
    let scenario = crate::input::variant::with_variants(&load()?, variants)?;
    let catalog = catalog_for(&scenario)?;
    let scratch = crate::base::scratch::scratch_folder("rehearsal-overhead-", None, &std::env::temp_dir())?;
    let options = |name: &str| RunOptions {
        scenario_path: scenario_path.to_path_buf(),
        seed,
        out_dir: Some(scratch.path().join(name)),
        variants: variants.to_vec(),
    };
    let executed = execute(options("recorded").plan(&load()?)?, Execution { record: true, ..Execution::default() })?;
    let (summary, recorded) = (executed.summary, executed.recorded);
    let run_db_sha256 = file_sha256(&summary.out_dir.join("comms.db"))?;
    let mut run_best = Duration::MAX;
    let mut floor_best = Duration::MAX;
    // Interleaved so that a slow moment of the machine hits both sides alike.
    for i in 0..repeats.max(1) {
        let name = format!("run-{i}");
        let scenario = load()?;
        let started = Instant::now();
        let again = run_scenario(scenario, &options(&name))?;
        run_best = run_best.min(started.elapsed());
        if again.trace_hash != summary.trace_hash {
            return Err(Error::harness(format!("run {i} of seed {} differs from the recorded run (nondeterminism)", summary.seed)));
        }
        let _ = std::fs::remove_dir_all(scratch.path().join(&name));
        let floor_db = scratch.path().join(format!("floor-{i}.db"));
        floor_best = floor_best.min(replay_floor(&floor_db, &catalog, &recorded, summary.seed)?);
        // The referee's proof that the floor did the run's work: the same database, byte for byte.
        if file_sha256(&floor_db)? != run_db_sha256 {
            return Err(Error::harness(format!(
                "the floor's database differs from the run's comms.db (seed {}): the replay did other work than the run",
                summary.seed
            )));
        }
        let _ = std::fs::remove_file(&floor_db);
    }
    Ok(OverheadReport {
        scenario: summary.scenario,
        seed: summary.seed,
        statements: recorded.len(),
        observer_reads: summary.observer_reads,
        events: summary.events,
        makespan_ms: summary.makespan_ms,
        run: run_best,
        floor: floor_best,
        repeats: repeats.max(1),
    })
}

/// Executes `recorded` through bare prepared statements on a fresh database at `path` with
/// the run's settings, and returns the time from creating the file to the final checkpoint.
/// Statements are prepared once and bound as the run binds them (`Slot`): what is about
/// using SQLite well belongs to the floor too, so the ratio measures only the simulator.
/// SQLite's clock reads each statement's simulated instant, as in the run: on the machine's
/// clock every heartbeat would look fresh, the stale-session queries would match nothing and
/// the floor would do less work than the run (so the two databases would differ; `overhead`
/// checks they do not). The file is left at `path` for the caller to compare.
pub fn replay_floor(path: &Path, catalog: &Catalog, recorded: &[Recorded], seed: u64) -> Result<Duration> {
    let _ = std::fs::remove_file(path);
    let clock = SimClock::new(recorded.first().map_or(0, |r| r.at_unix_ms));
    let vfs = ClockVfs::register(clock.clone()).map_err(Error::harness)?;
    let started = Instant::now();
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags_and_vfs(path, flags, vfs.name())?;
    conn.query_row("PRAGMA locking_mode = EXCLUSIVE", [], |r| r.get::<_, String>(0))?;
    crate::world::db::set_query_planner_stability(&conn)?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))?;
    // The run's page cache (sim/world/db.rs), so neither side re-reads pages from the OS.
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536;")?;
    conn.execute_batch(SCHEMA_SQL)?;
    // The run's `random()` (sim/world/db/random.rs), so SQL that draws does the run's work.
    crate::world::db::random::register(&conn, seed)?;
    let mut slots = prepare_all(&conn, catalog)?;
    for statement in recorded {
        clock.advance_to(statement.at_unix_ms);
        let slot = &mut slots[index(statement.stmt)];
        slot.bind(&statement.params)?;
        if slot.column_count == 0 {
            slot.statement.raw_execute()?;
        } else {
            let mut rows = slot.statement.raw_query();
            while let Some(row) = rows.next()? {
                // Read every column, as the simulator does, without keeping it.
                for col in 0..slot.column_count {
                    std::hint::black_box(row.get_ref(col)?);
                }
            }
        }
    }
    // Finalized before closing: SQLite refuses to close with statements left.
    drop(slots);
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
    conn.close().map_err(|(_, e)| Error::harness(format!("closing {}: {e}", path.display())))?;
    let elapsed = started.elapsed();
    drop(vfs);
    Ok(elapsed)
}

/// The SHA-256 of a file's bytes, in hex.
fn file_sha256(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(path).map_err(|e| Error::harness(format!("cannot read {}: {e}", path.display())))?;
    Ok(Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded run of the quickstart scenario: its comms.db's hash and its statements.
    fn recorded_quickstart(dir: &Path) -> (String, Catalog, Vec<Recorded>) {
        let path = Path::new("scenarios/quickstart.toml");
        let options = RunOptions { scenario_path: path.to_path_buf(), seed: None, out_dir: Some(dir.join("run")), variants: Vec::new() };
        let scenario = Scenario::load(path).unwrap();
        let catalog = catalog_for(&scenario).unwrap();
        let executed = execute(options.plan(&scenario).unwrap(), Execution { record: true, ..Execution::default() }).unwrap();
        let (summary, recorded) = (executed.summary, executed.recorded);
        (file_sha256(&summary.out_dir.join("comms.db")).unwrap(), catalog, recorded)
    }

    #[test]
    fn the_floor_on_the_runs_clock_rebuilds_the_runs_database_and_a_frozen_clock_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let (run_db, catalog, mut recorded) = recorded_quickstart(dir.path());
        let floor_db = dir.path().join("floor.db");
        replay_floor(&floor_db, &catalog, &recorded, 42).unwrap();
        assert_eq!(file_sha256(&floor_db).unwrap(), run_db, "same statements at the same instants: the same bytes");
        // Near miss: the same statements with SQLite's clock stopped at the first one.
        let first = recorded[0].at_unix_ms;
        assert!(recorded.iter().any(|r| r.at_unix_ms > first), "the run spans simulated time");
        recorded.iter_mut().for_each(|r| r.at_unix_ms = first);
        replay_floor(&floor_db, &catalog, &recorded, 42).unwrap();
        assert_ne!(file_sha256(&floor_db).unwrap(), run_db, "a floor on another clock writes other timestamps");
    }
}
