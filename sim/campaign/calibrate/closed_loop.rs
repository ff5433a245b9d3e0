//! `rehearsal calibrate load --closed-loop` (issue 43): the load as real sessions make it. One
//! OS process and one SQLite connection per actor of the run (the conductor, each musician
//! session, each of its watchers: each is its own sequence of tool calls), each running its
//! actor's statements in order, the next one the simulated gap after the previous one ended,
//! compressed by K. A write that waits for the lock so delays that actor's next statements,
//! which the open-loop load (each statement at its simulated instant, sim/campaign/calibrate/load.rs)
//! does not. Each process is this binary (`rehearsal calibrate worker`, hidden) with its
//! bundled SQLite and `sqlite3_busy_timeout`, whose default busy handler is the one
//! sim/world/write_lock.rs models. A write runs as `BEGIN IMMEDIATE; …; COMMIT`: the time
//! `BEGIN IMMEDIATE` takes is its wait for the lock, BEGIN to the end of COMMIT its hold, in µs.
//! SQLITE_BUSY is retried 3 times 1 s / K apart, as the tool layer does (sim/actors/ctx.rs).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::base::error::{Error, Result};
use crate::world::db::Recorded;

/// The most processes a closed-loop load starts (one per actor).
pub const ACTORS_MAX: usize = 1000;

/// One statement for a worker: its index in the run, the real µs to wait after the previous
/// one ended (from the start for the first), and its SQL with the parameters written in.
#[derive(Serialize, Deserialize)]
struct Step {
    index: usize,
    gap_us: i64,
    writes: bool,
    sql: String,
}

/// One attempt of a statement, as a worker reports it.
#[derive(Serialize, Deserialize)]
pub struct Attempt {
    pub index: usize,
    pub attempt: u32,
    /// Since the load's start, µs: when it was due (the previous end plus the gap) and began.
    pub due_us: i64,
    pub began_us: i64,
    pub wall_us: i64,
    pub lock_wait_us: Option<i64>,
    pub hold_us: Option<i64>,
    /// `ok`, `busy` or `failed`.
    pub ending: String,
}

/// The worker's command line (`rehearsal calibrate worker`, hidden).
#[derive(clap::Args)]
pub struct WorkerArgs {
    /// Its steps, JSON lines.
    #[arg(long)]
    steps: PathBuf,
    /// Where to write its attempts, JSON lines (written whole at the end).
    #[arg(long)]
    out: PathBuf,
    /// The load's comms.db (WAL), opened with a connection of the worker's own.
    #[arg(long)]
    db: PathBuf,
    /// SQLite's busy timeout on that connection (`sqlite3_busy_timeout`), ms.
    #[arg(long)]
    busy_timeout_ms: u64,
    /// The compression K: each simulated gap runs as gap / K.
    #[arg(long)]
    speedup: u32,
    /// The load's start, µs since the Unix epoch: every worker counts from it.
    #[arg(long)]
    start_unix_us: i64,
    /// Stop starting statements this many seconds after the start.
    #[arg(long)]
    seconds: u64,
}

fn unix_us() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64)
}

fn sleep_until_us(start_unix_us: i64, at_us: i64) {
    let ahead = start_unix_us + at_us - unix_us();
    if ahead > 0 {
        std::thread::sleep(Duration::from_micros(ahead as u64));
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// Runs a read to its last row.
fn read(conn: &rusqlite::Connection, sql: &str) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query([])?;
    while rows.next()?.is_some() {}
    Ok(())
}

/// One try of a step: its ending, the lock wait and the hold (µs) of a write.
fn try_step(conn: &rusqlite::Connection, step: &Step) -> (&'static str, Option<i64>, Option<i64>) {
    let ending = |e: &rusqlite::Error| if is_busy(e) { "busy" } else { "failed" };
    if !step.writes {
        return match read(conn, &step.sql) {
            Ok(()) => ("ok", None, None),
            Err(e) => (ending(&e), None, None),
        };
    }
    let asked = Instant::now();
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        return (ending(&e), Some(asked.elapsed().as_micros() as i64), None);
    }
    let (wait_us, taken) = (asked.elapsed().as_micros() as i64, Instant::now());
    let done = conn.execute_batch(&step.sql).and_then(|()| conn.execute_batch("COMMIT"));
    let hold_us = taken.elapsed().as_micros() as i64;
    match done {
        Ok(()) => ("ok", Some(wait_us), Some(hold_us)),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            (ending(&e), Some(wait_us), Some(hold_us))
        }
    }
}

/// The worker: one connection, its steps in order, each the gap after the previous ended.
pub fn worker(args: &WorkerArgs) -> Result<()> {
    const BUSY_RETRIES: u32 = 3;
    let text = std::fs::read_to_string(&args.steps).map_err(|e| Error::input(format!("{}: {e}", args.steps.display())))?;
    let steps: Vec<Step> = text
        .lines()
        .enumerate()
        .map(|(i, line)| serde_json::from_str(line).map_err(|e| Error::input(format!("{}:{}: {e}", args.steps.display(), i + 1))))
        .collect::<Result<_>>()?;
    let conn = rusqlite::Connection::open(&args.db)?;
    conn.busy_timeout(Duration::from_millis(args.busy_timeout_ms))?;
    let retry_gap_us = 1_000_000 / i64::from(args.speedup.max(1));
    let cap_us = args.seconds as i64 * 1_000_000;
    let mut attempts = Vec::new();
    let mut ended_us = 0;
    for step in &steps {
        let due_us = ended_us + step.gap_us;
        if due_us > cap_us {
            break;
        }
        sleep_until_us(args.start_unix_us, due_us);
        for attempt in 1..=BUSY_RETRIES + 1 {
            let began_us = unix_us() - args.start_unix_us;
            let (ending, lock_wait_us, hold_us) = try_step(&conn, step);
            ended_us = unix_us() - args.start_unix_us;
            let wall_us = ended_us - began_us;
            attempts.push(Attempt { index: step.index, attempt, due_us, began_us, wall_us, lock_wait_us, hold_us, ending: ending.into() });
            if ending != "busy" || attempt > BUSY_RETRIES {
                break;
            }
            std::thread::sleep(Duration::from_micros(retry_gap_us as u64));
        }
    }
    let mut out = String::new();
    for a in &attempts {
        out.push_str(&serde_json::to_string(a).map_err(|e| Error::harness(e.to_string()))?);
        out.push('\n');
    }
    crate::base::atomic::write_atomically(&args.out, out.as_bytes())
}

/// Each actor's steps: its statements in order, with the real gaps between them.
fn steps_by_actor(recorded: &[Recorded], sql: &[String], speedup: u32) -> Vec<(String, Vec<Step>)> {
    let first_ms = recorded.first().map_or(0, |r| r.at_unix_ms);
    let mut by_actor: std::collections::BTreeMap<&str, Vec<Step>> = std::collections::BTreeMap::new();
    let mut last_ms: std::collections::BTreeMap<&str, i64> = std::collections::BTreeMap::new();
    for (index, r) in recorded.iter().enumerate() {
        let previous_ms = last_ms.insert(r.actor.as_str(), r.at_unix_ms).unwrap_or(first_ms);
        let gap_us = (r.at_unix_ms - previous_ms) * 1000 / i64::from(speedup.max(1));
        by_actor.entry(r.actor.as_str()).or_default().push(Step { index, gap_us, writes: r.stmt.writes(), sql: sql[index].clone() });
    }
    by_actor.into_iter().map(|(actor, steps)| (actor.to_string(), steps)).collect()
}

/// Each actor's statements as a closed-loop load folder's `closed-loop/actor-N.jsonl` gave
/// them to its workers: (actor, index, writes, due µs if nothing waited: the sum of the gaps).
/// For a folder written before the load saved shape.csv (`calibrate predict`).
pub fn planned_from_work(work: &Path) -> Result<Vec<(String, usize, bool, i64)>> {
    let mut planned = Vec::new();
    for n in 0.. {
        let path = work.join(format!("actor-{n}.jsonl"));
        if !path.is_file() {
            break;
        }
        let text = std::fs::read_to_string(&path)?;
        let mut due_us = 0;
        for (i, line) in text.lines().enumerate() {
            let step: Step = serde_json::from_str(line).map_err(|e| Error::input(format!("{}:{}: {e}", path.display(), i + 1)))?;
            due_us += step.gap_us;
            planned.push((format!("actor-{n}"), step.index, step.writes, due_us));
        }
    }
    planned.sort_by_key(|p| p.1);
    Ok(planned)
}

/// Runs the closed-loop load: a worker process per actor, all from one start; their attempts.
pub fn replay(
    recorded: &[Recorded],
    sql: &[String],
    db: &Path,
    work: &Path,
    busy_timeout_ms: u64,
    speedup: u32,
    seconds: u64,
) -> Result<Vec<Attempt>> {
    let actors = steps_by_actor(recorded, sql, speedup);
    if actors.len() > ACTORS_MAX {
        return Err(Error::input(format!("--closed-loop starts a process per actor: {} actors, at most {ACTORS_MAX}", actors.len())));
    }
    crate::base::live_files::create_dir_all(work)?;
    let exe = std::env::current_exe()?;
    // A second from now: time for every process to start and open its connection.
    let start_unix_us = unix_us() + 1_000_000 + 20_000 * actors.len() as i64;
    let mut children = Vec::new();
    for (n, (_, steps)) in actors.iter().enumerate() {
        let (steps_path, out_path) = (work.join(format!("actor-{n}.jsonl")), work.join(format!("actor-{n}.out.jsonl")));
        let mut file = std::fs::File::create(&steps_path)?;
        for step in steps {
            writeln!(file, "{}", serde_json::to_string(step).map_err(|e| Error::harness(e.to_string()))?)?;
        }
        let child = std::process::Command::new(&exe)
            .args(["calibrate", "worker", "--steps"])
            .arg(&steps_path)
            .arg("--out")
            .arg(&out_path)
            .arg("--db")
            .arg(db)
            .args(["--busy-timeout-ms", &busy_timeout_ms.to_string(), "--speedup", &speedup.to_string()])
            .args(["--start-unix-us", &start_unix_us.to_string(), "--seconds", &seconds.to_string()])
            .spawn()
            .map_err(|e| Error::harness(format!("cannot start a worker ({}): {e}", exe.display())))?;
        children.push((child, out_path));
    }
    let mut attempts = Vec::new();
    for (mut child, out_path) in children {
        let status = child.wait()?;
        if !status.success() {
            return Err(Error::harness(format!("a closed-loop worker failed ({status}): {}", out_path.display())));
        }
        let text = std::fs::read_to_string(&out_path)?;
        for line in text.lines() {
            attempts.push(serde_json::from_str::<Attempt>(line).map_err(|e| Error::harness(format!("{}: {e}", out_path.display())))?);
        }
    }
    attempts.sort_by_key(|a| (a.index, a.attempt));
    Ok(attempts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Stmt;

    #[test]
    fn each_actor_gets_its_statements_in_order_with_the_gaps_between_them_compressed() {
        let rec = |actor: &str, at_unix_ms: i64, stmt: Stmt| Recorded { stmt, params: Vec::new(), at_unix_ms, actor: actor.into() };
        let recorded = [
            rec("conductor", 1000, Stmt::ConductorHeartbeat),
            rec("task-01.S1", 3000, Stmt::PollTasks),
            rec("conductor", 11_000, Stmt::PollTasks),
            rec("task-01.S1", 4000, Stmt::ConductorHeartbeat),
        ];
        let sql: Vec<String> = (0..4).map(|i| format!("SELECT {i}")).collect();
        let actors = steps_by_actor(&recorded, &sql, 10);
        type Shape = Vec<(String, Vec<(usize, i64, bool)>)>;
        let shape: Shape =
            actors.into_iter().map(|(a, steps)| (a, steps.iter().map(|s| (s.index, s.gap_us, s.writes)).collect())).collect();
        assert_eq!(
            shape,
            vec![
                ("conductor".to_string(), vec![(0, 0, true), (2, 1_000_000, false)]),
                ("task-01.S1".to_string(), vec![(1, 200_000, false), (3, 100_000, true)]),
            ]
        );
    }
}
