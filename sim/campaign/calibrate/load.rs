//! `rehearsal calibrate load SCENARIO`: a real multi-process load of the scenario's shape
//! against a real WAL `comms.db`, its lock waits and SQLITE_BUSY set beside what rehearsal's
//! lock model predicts for the same load.
//!
//! The shape: the scenario is run without lock contention (`write_hold_ms` removed), which
//! gives every statement the protocol executes, with its parameters and its simulated instant.
//! Those statements are replayed on a fresh WAL database, each at its instant divided by the
//! speedup K (the whole run in `--seconds`, by default), each in its own `sqlite3` process
//! (sim/campaign/calibrate/cli.rs), by a pool of `--procs` workers (one process at a time each, as a
//! session's tool runs one call at a time). SQLITE_BUSY is retried 3 times, 1 s / K apart, as
//! the simulated tool layer does (sim/actors/ctx.rs).
//!
//! The prediction: compressing time by K is, for a lock, the same as holding it K times longer
//! at the simulated rates (waits and BUSY depend only on hold and timeout against the gaps
//! between writes). So rehearsal is given `write_hold_ms` fitted to the holds measured in the
//! load, times K, and `busy_timeout_ms` = K × the load's `.timeout`, two ways:
//! - its lock rule (sim/world/write_lock.rs, the world's own) on the load's arrivals: the same
//!   writes at the same instants, each retried as the tool layer does: the model alone;
//! - a run of the scenario with those settings: the model and the protocol's reaction to it
//!   (a write that waits delays the session's next statements; a claim that stays BUSY loses
//!   its session), which the open-loop load does not have.
//!
//! Wait times are divided by K to read as the load's real milliseconds.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::cli::{expand_all, fresh_wal_db, Ending, Shell};
use super::fit;
use super::recorded_run;
use super::statements::quantiles;
use crate::base::dist::Dist;
use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::world::Contention;

pub use super::lock_rules::LockFigures;
use super::lock_rules::{self, resample, Rule, Service, Step};

/// The most processes at once and the longest replay this command allows: it runs on the
/// machine it measures, beside whatever else runs there.
pub const PROCS_MAX: usize = 32;
pub const SECONDS_MAX: u64 = 600;

pub struct LoadOptions {
    pub scenario: PathBuf,
    pub seed: Option<u64>,
    pub procs: Option<usize>,
    pub seconds: u64,
    pub speedup: Option<u32>,
    pub busy_timeout_ms: Option<u64>,
    /// Keep one connection open on the database while the load runs, as the sessions'
    /// comms-link server does (004 Database): no `sqlite3` process is then the last to close,
    /// so none checkpoints and removes the WAL on its way out.
    pub keep_open: bool,
    /// A process and a connection per actor, closed loop (sim/campaign/calibrate/closed_loop.rs).
    pub closed_loop: bool,
    pub out: PathBuf,
    pub force: bool,
    pub sqlite3: PathBuf,
}

pub(super) const OWNED: crate::base::out_folder::Owned = &[
    "load.csv",
    "shape.csv",
    "load.json",
    "scenario.toml",
    "comparison.md",
    "comparison.csv",
    "load.db",
    "load.db-wal",
    "load.db-shm",
    "closed-loop",
];

/// One process of the load, a row of load.csv.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct LoadRow {
    pub(super) index: usize,
    pub(super) statement: String,
    pub(super) writes: bool,
    pub(super) attempt: u32,
    pub(super) due_ms: f64,
    pub(super) late_ms: f64,
    pub(super) wall_ms: f64,
    pub(super) lock_wait_ms: Option<f64>,
    pub(super) hold_ms: Option<f64>,
    pub(super) ending: String,
}

/// A statement of the run as the load planned it, a row of shape.csv: its actor, and its
/// simulated instant / K in µs from the load's start (when it is due, open loop).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Planned {
    pub index: usize,
    pub actor: String,
    pub statement: String,
    pub writes: bool,
    pub due_us: i64,
}

/// The options a load was measured with (load.json), so that `calibrate predict` can set the
/// current model beside it later without measuring again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadRecord {
    /// The scenario's name (its file's stem); the scenario itself is scenario.toml beside it.
    pub scenario: String,
    pub seed: u64,
    pub speedup: u32,
    /// The load's `.timeout` (`sqlite3_busy_timeout`), ms.
    pub busy_timeout_ms: u64,
    pub keep_open: bool,
    pub closed_loop: bool,
    /// Workers (open loop) or processes (one per actor, closed loop); unknown for a folder
    /// completed by `calibrate predict`'s flags.
    pub procs: Option<usize>,
    pub seconds: Option<u64>,
    pub elapsed_s: f64,
    /// Statements in the run (the load replays those due within `seconds`).
    pub statements: usize,
    pub sqlite_version: String,
}

pub(super) fn write_record(out: &std::path::Path, record: &LoadRecord) -> Result<()> {
    let text = serde_json::to_string_pretty(record).map_err(|e| Error::harness(e.to_string()))?;
    crate::base::atomic::write_atomically(&out.join("load.json"), format!("{text}\n").as_bytes())
}

pub struct LoadReport {
    pub scenario: String,
    pub seed: u64,
    pub sqlite_version: String,
    pub procs: Option<usize>,
    pub speedup: u32,
    pub keep_open: bool,
    pub closed_loop: bool,
    pub busy_timeout_ms: u64,
    pub sim_busy_timeout_ms: i64,
    pub statements: usize,
    pub replayed: usize,
    pub elapsed: Duration,
    pub late_ms: Option<[f64; 3]>,
    pub hold_ms: Option<[f64; 3]>,
    pub read_busy: u64,
    pub gave_up: u64,
    pub failed: u64,
    pub measured: LockFigures,
    pub predicted: LockFigures,
    /// The lock rule closed loop (None without the actors: an open-loop folder of before).
    pub closed_loop_rule: Option<LockFigures>,
    /// The load the closed-loop prediction drew its holds and service times from, when not this one.
    pub inputs_from: Option<PathBuf>,
    pub own_arrivals: LockFigures,
    pub on_arrivals: LockFigures,
    pub on_arrivals_measured_holds: LockFigures,
    pub predicted_hold: Dist,
    /// At the simulated rates (speedup 1): the scenario as written, and with the measured holds.
    pub as_written: Option<(Dist, Contention, u64)>,
    pub with_measured_holds: (Dist, Contention, u64),
    pub out: PathBuf,
}

pub fn calibrate_load(options: &LoadOptions) -> Result<LoadReport> {
    check_bounds(options)?;
    // Held to the end: dropped at once, the lock would let a second command in (issue 41).
    let _lock = crate::base::out_folder::claim(&options.out, OWNED, options.force)?;
    let scenario_text =
        std::fs::read_to_string(&options.scenario).map_err(|e| Error::input(format!("cannot read {}: {e}", options.scenario.display())))?;
    let scenario = Scenario::load(&options.scenario)?;
    let mut shape_scenario = scenario.clone();
    shape_scenario.faults.write_hold_ms = None;
    let shape = recorded_run(shape_scenario, &options.scenario, options.seed)?;
    let seed = shape.summary.seed;
    let recorded = &shape.recorded;
    let first_ms = recorded.first().map_or(0, |r| r.at_unix_ms);
    let span_ms = recorded.last().map_or(0, |r| r.at_unix_ms) - first_ms;
    let speedup = options.speedup.unwrap_or_else(|| auto_speedup(span_ms, options.seconds));
    let sim_busy_timeout_ms = scenario.faults.busy_timeout_ms.unwrap_or(5_000);
    let busy_timeout_ms = options.busy_timeout_ms.unwrap_or_else(|| (sim_busy_timeout_ms as f64 / f64::from(speedup)).round() as u64);
    let procs = options.procs.unwrap_or((shape.summary.tasks_total + 1).min(PROCS_MAX));
    let shell = Shell { program: options.sqlite3.clone(), db: options.out.join("load.db"), busy_timeout_ms };
    let sqlite_version = shell.version()?;
    fresh_wal_db(&shell, &shell.db)?;
    let sql = expand_all(&shape.catalog, recorded)?;
    let due_ms: Vec<f64> = recorded.iter().map(|r| (r.at_unix_ms - first_ms) as f64 / f64::from(speedup)).collect();
    let held = options.keep_open.then(|| open_and_read(&shell.db)).transpose()?;
    let started = Instant::now();
    let (rows, procs) = if options.closed_loop {
        let work = options.out.join("closed-loop");
        let attempts = super::closed_loop::replay(recorded, &sql, &shell.db, &work, busy_timeout_ms, speedup, options.seconds)?;
        let actors = recorded.iter().map(|r| r.actor.as_str()).collect::<std::collections::BTreeSet<_>>().len();
        (attempts.iter().map(|a| closed_loop_row(recorded, a)).collect(), actors)
    } else {
        (replay(&shell, recorded, &sql, &due_ms, procs, speedup, Duration::from_secs(options.seconds))?, procs)
    };
    let elapsed = started.elapsed();
    drop(held);
    // Everything a later `calibrate predict` needs to set the model beside this load again.
    let planned = planned_of(recorded, speedup);
    let record = LoadRecord {
        scenario: shape.summary.scenario.clone(),
        seed,
        speedup,
        busy_timeout_ms,
        keep_open: options.keep_open,
        closed_loop: options.closed_loop,
        procs: Some(procs),
        seconds: Some(options.seconds),
        elapsed_s: elapsed.as_secs_f64(),
        statements: recorded.len(),
        sqlite_version: if options.closed_loop { rusqlite::version().to_string() } else { sqlite_version },
    };
    crate::base::csv_rows::write_rows(&options.out.join("load.csv"), &rows)?;
    crate::base::csv_rows::write_rows(&options.out.join("shape.csv"), &planned)?;
    crate::base::atomic::write_atomically(&options.out.join("scenario.toml"), scenario_text.as_bytes())?;
    write_record(&options.out, &record)?;
    compare(&Saved { record, scenario, scenario_path: options.scenario.clone(), rows, planned, inputs: None }, &options.out)
}

/// Each statement of the run as the load plans it: due at the sum of its actor's gaps so far,
/// each compressed by K in whole µs as the closed-loop workers compute them
/// (sim/campaign/calibrate/closed_loop.rs), so that shape.csv and the workers' steps agree to
/// the µs (each gap is truncated to the µs: a statement is due up to a µs per earlier statement
/// of its actor before its simulated instant / K).
fn planned_of(recorded: &[crate::world::db::Recorded], speedup: u32) -> Vec<Planned> {
    let first_ms = recorded.first().map_or(0, |r| r.at_unix_ms);
    let mut last: std::collections::BTreeMap<&str, (i64, i64)> = std::collections::BTreeMap::new();
    let mut planned = Vec::with_capacity(recorded.len());
    for (index, r) in recorded.iter().enumerate() {
        let (previous_ms, previous_due_us) = last.get(r.actor.as_str()).copied().unwrap_or((first_ms, 0));
        let due_us = previous_due_us + (r.at_unix_ms - previous_ms) * 1000 / i64::from(speedup.max(1));
        last.insert(r.actor.as_str(), (r.at_unix_ms, due_us));
        let (statement, writes) = (r.stmt.name().to_string(), r.stmt.writes());
        planned.push(Planned { index, actor: r.actor.clone(), statement, writes, due_us });
    }
    planned
}

/// What a load folder holds: its options, its scenario, what it measured and what it replayed.
pub struct Saved {
    pub record: LoadRecord,
    pub scenario: Scenario,
    pub scenario_path: PathBuf,
    pub(super) rows: Vec<LoadRow>,
    pub(super) planned: Vec<Planned>,
    /// Another load of the same scenario and options (`calibrate predict --inputs-from`): the
    /// closed-loop prediction draws its holds and service times from its rows instead of this
    /// load's, so it is not fitted on the measurement it is set beside.
    pub(super) inputs: Option<(PathBuf, Vec<LoadRow>)>,
}

/// rehearsal's predictions for a measured load, set beside the measurement: comparison.md and
/// comparison.csv in `out`.
pub(super) fn compare(saved: &Saved, out: &std::path::Path) -> Result<LoadReport> {
    let (record, scenario, rows) = (&saved.record, &saved.scenario, &saved.rows);
    let (seed, speedup, busy_timeout_ms) = (record.seed, record.speedup, record.busy_timeout_ms);
    let sim_busy_timeout_ms = scenario.faults.busy_timeout_ms.unwrap_or(5_000);
    let measured = measured_figures(rows);
    let holds: Vec<f64> = rows.iter().filter(|r| r.ending == "ok").filter_map(|r| r.hold_ms).collect();
    let scaled: Vec<f64> = holds.iter().map(|h| h * f64::from(speedup)).collect();
    let predicted_hold = fit::best(&scaled).map_or(Dist::Const(0), |f| f.dist);
    let k = f64::from(speedup);
    let sim_timeout = (busy_timeout_ms as f64 * k).round() as i64;
    let (contention, writes) = predict(scenario, &saved.scenario_path, seed, predicted_hold.clone(), sim_timeout, speedup)?;
    let rules = rule_columns(saved, &predicted_hold);
    let predicted = LockFigures {
        writes,
        lock_waits: contention.lock_waits,
        wait_ms_total: contention.lock_wait_ms_total as f64 / k,
        busy: contention.busy_writes,
    };
    let as_written = match scenario.faults.write_hold_ms.clone() {
        Some(hold) => {
            let (c, w) = predict(scenario, &saved.scenario_path, seed, hold.clone(), sim_busy_timeout_ms, 1)?;
            Some((hold, c, w))
        }
        None => None,
    };
    let real_hold = fit::best(&holds).map_or(Dist::Const(0), |f| f.dist);
    let (c, w) = predict(scenario, &saved.scenario_path, seed, real_hold.clone(), sim_busy_timeout_ms, 1)?;
    let replayed = rows.iter().map(|r| r.index).collect::<std::collections::BTreeSet<_>>().len();
    let report = LoadReport {
        scenario: record.scenario.clone(),
        seed,
        sqlite_version: record.sqlite_version.clone(),
        procs: record.procs,
        speedup,
        keep_open: record.keep_open,
        closed_loop: record.closed_loop,
        busy_timeout_ms,
        sim_busy_timeout_ms,
        statements: record.statements,
        replayed,
        elapsed: Duration::from_secs_f64(record.elapsed_s.max(0.0)),
        late_ms: quantiles(&rows.iter().filter(|r| r.attempt == 1).map(|r| r.late_ms).collect::<Vec<_>>()),
        hold_ms: quantiles(&holds),
        read_busy: rows.iter().filter(|r| !r.writes && r.ending == "busy").count() as u64,
        gave_up: rows.iter().filter(|r| r.attempt == 4 && r.ending == "busy").count() as u64,
        failed: rows.iter().filter(|r| r.ending == "failed").count() as u64,
        measured,
        predicted,
        closed_loop_rule: rules.closed_loop,
        inputs_from: saved.inputs.as_ref().map(|(dir, _)| dir.clone()),
        own_arrivals: rules.own_arrivals,
        on_arrivals: rules.on_arrivals_fitted,
        on_arrivals_measured_holds: rules.on_arrivals_measured,
        predicted_hold,
        as_written,
        with_measured_holds: (real_hold, c, w),
        out: out.to_path_buf(),
    };
    crate::base::atomic::write_atomically(&out.join("comparison.md"), report.markdown().as_bytes())?;
    crate::base::atomic::write_atomically(&out.join("comparison.csv"), report.comparison_csv().as_bytes())?;
    Ok(report)
}

/// The lock rule's columns (sim/campaign/calibrate/lock_rules.rs), in the load's real µs.
struct RuleColumns {
    /// The prediction: each actor's statements closed loop, the measured holds and service times.
    closed_loop: Option<LockFigures>,
    /// The diagnosis: each write at its measured first try, with its own measured hold.
    own_arrivals: LockFigures,
    /// Open loop at the simulated instants / K, the measured holds drawn at random.
    on_arrivals_measured: LockFigures,
    /// The same with holds from the fitted distribution.
    on_arrivals_fitted: LockFigures,
}

fn rule_columns(saved: &Saved, fitted_hold: &Dist) -> RuleColumns {
    let (record, rows) = (&saved.record, &saved.rows);
    let rule = Rule::of_load(record.busy_timeout_ms, record.speedup, record.seed);
    let us = |ms: f64| (ms * 1000.0).round() as i64;
    let replayed: std::collections::BTreeSet<usize> = rows.iter().map(|r| r.index).collect();
    let planned: Vec<&Planned> = saved.planned.iter().filter(|p| replayed.contains(&p.index)).collect();
    // The measured holds (µs) to draw from, and each write's own (the attempt that committed).
    let holds_us: Vec<i64> = rows.iter().filter(|r| r.ending == "ok").filter_map(|r| r.hold_ms).map(us).collect();
    let own_hold_us: std::collections::BTreeMap<usize, i64> =
        rows.iter().filter(|r| r.writes && r.ending == "ok").filter_map(|r| Some((r.index, us(r.hold_ms?)))).collect();
    let mut measured_hold = |_: usize, rng: &mut rand_chacha::ChaCha8Rng| resample(&holds_us, rng);
    // The fit is in simulated ms (holds × K): back to real µs.
    let k = f64::from(record.speedup);
    let mut fitted = |_: usize, rng: &mut rand_chacha::ChaCha8Rng| (fitted_hold.sample(rng) as f64 * 1000.0 / k).round() as i64;
    let planned_writes: Vec<(i64, usize)> = planned.iter().filter(|p| p.writes).map(|p| (p.due_us, p.index)).collect();
    let on_arrivals_measured = lock_rules::open_loop(&planned_writes, &rule, &mut measured_hold);
    let on_arrivals_fitted = lock_rules::open_loop(&planned_writes, &rule, &mut fitted);
    // The load's own arrivals: each write's first try as measured (due + how late it began).
    let first_tries: Vec<(i64, usize)> =
        rows.iter().filter(|r| r.writes && r.attempt == 1).map(|r| (us(r.due_ms + r.late_ms), r.index)).collect();
    let mut own =
        |index: usize, rng: &mut rand_chacha::ChaCha8Rng| own_hold_us.get(&index).copied().unwrap_or_else(|| resample(&holds_us, rng));
    let own_arrivals = lock_rules::open_loop(&first_tries, &rule, &mut own);
    // The prediction's inputs: another load's holds and service times when given, else this one's.
    let input_rows = saved.inputs.as_ref().map_or(rows.as_slice(), |(_, other)| other.as_slice());
    let input_holds_us: Vec<i64> = input_rows.iter().filter(|r| r.ending == "ok").filter_map(|r| r.hold_ms).map(us).collect();
    let mut input_hold = |_: usize, rng: &mut rand_chacha::ChaCha8Rng| resample(&input_holds_us, rng);
    let closed_loop = (!planned.is_empty() && planned.iter().all(|p| !p.actor.is_empty()))
        .then(|| lock_rules::closed_loop(&actor_steps(&planned), &rule, &service_of(input_rows), &mut input_hold));
    RuleColumns { closed_loop, own_arrivals, on_arrivals_measured, on_arrivals_fitted }
}

/// Each actor's statements in order, with the gaps between their planned instants.
fn actor_steps(planned: &[&Planned]) -> Vec<Vec<Step>> {
    let mut by_actor: std::collections::BTreeMap<&str, Vec<Step>> = std::collections::BTreeMap::new();
    let mut last_us: std::collections::BTreeMap<&str, i64> = std::collections::BTreeMap::new();
    let mut ordered: Vec<&&Planned> = planned.iter().collect();
    ordered.sort_by_key(|p| p.index);
    for p in ordered {
        let previous_us = last_us.insert(p.actor.as_str(), p.due_us).unwrap_or(0);
        let step = Step { index: p.index, statement: p.statement.clone(), writes: p.writes, gap_us: (p.due_us - previous_us).max(0) };
        by_actor.entry(p.actor.as_str()).or_default().push(step);
    }
    // In the order of their first statements, whatever the actors are called (a folder of
    // before names them actor-N).
    let mut actors: Vec<Vec<Step>> = by_actor.into_values().collect();
    actors.sort_by_key(|steps| steps.first().map_or(usize::MAX, |s| s.index));
    actors
}

/// What the load measured to draw from (µs): per statement, a read's whole time or a write's
/// time outside the lock, of the attempts that succeeded; and how late first attempts began.
fn service_of(rows: &[LoadRow]) -> Service {
    let us = |ms: f64| (ms * 1000.0).round() as i64;
    let mut service = Service::default();
    for r in rows.iter().filter(|r| r.ending == "ok") {
        let outside_ms = if r.writes { r.wall_ms - r.lock_wait_ms.unwrap_or(0.0) - r.hold_ms.unwrap_or(0.0) } else { r.wall_ms };
        service.by_statement_us.entry(r.statement.clone()).or_default().push(us(outside_ms).max(0));
    }
    service.late_us = rows.iter().filter(|r| r.attempt == 1).map(|r| us(r.late_ms).max(0)).collect();
    service
}

/// A connection that has read the database, so it holds the WAL open until dropped.
fn open_and_read(db: &std::path::Path) -> Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open(db)?;
    conn.query_row("SELECT count(*) FROM orchestration_tasks", [], |r| r.get::<_, i64>(0))?;
    Ok(conn)
}

fn check_bounds(options: &LoadOptions) -> Result<()> {
    if let Some(procs) = options.procs {
        if !(1..=PROCS_MAX).contains(&procs) {
            return Err(Error::input(format!("--procs must be between 1 and {PROCS_MAX}, got {procs}")));
        }
    }
    if !(1..=SECONDS_MAX).contains(&options.seconds) {
        return Err(Error::input(format!("--seconds must be between 1 and {SECONDS_MAX}, got {}", options.seconds)));
    }
    if options.speedup == Some(0) {
        return Err(Error::input("--speedup must be at least 1"));
    }
    Ok(())
}

/// The smallest whole speedup that fits `span_ms` of simulated time into `seconds`.
pub fn auto_speedup(span_ms: i64, seconds: u64) -> u32 {
    let budget_ms = seconds.max(1) as i64 * 1000;
    u32::try_from(((span_ms + budget_ms - 1) / budget_ms).max(1)).unwrap_or(u32::MAX)
}

/// Replays the statements with `procs` workers, each taking the next statement in order,
/// waiting for its due instant, and running it (with the tool layer's retries). Statements
/// due after `cap` are not started.
fn replay(
    shell: &Shell,
    recorded: &[crate::world::db::Recorded],
    sql: &[String],
    due_ms: &[f64],
    procs: usize,
    speedup: u32,
    cap: Duration,
) -> Result<Vec<LoadRow>> {
    const BUSY_RETRIES: u32 = 3;
    let next = AtomicUsize::new(0);
    let rows = Mutex::new(Vec::new());
    let failure = Mutex::new(None);
    let retry_gap = Duration::from_secs_f64(1.0 / f64::from(speedup));
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..procs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= sql.len() || due_ms[i] > cap.as_secs_f64() * 1000.0 || failure.lock().expect("lock").is_some() {
                    return;
                }
                let due = Duration::from_secs_f64(due_ms[i] / 1000.0);
                if let Some(ahead) = due.checked_sub(started.elapsed()) {
                    std::thread::sleep(ahead);
                }
                let late_ms = started.elapsed().as_secs_f64() * 1000.0 - due_ms[i];
                let stmt = recorded[i].stmt;
                for attempt in 1..=BUSY_RETRIES + 1 {
                    let timed = match shell.time_statement(&sql[i], stmt.writes()) {
                        Ok(timed) => timed,
                        Err(e) => {
                            *failure.lock().expect("lock") = Some(e);
                            return;
                        }
                    };
                    let busy = timed.ending == Ending::Busy;
                    rows.lock().expect("lock").push(LoadRow {
                        index: i,
                        statement: stmt.name().to_string(),
                        writes: stmt.writes(),
                        attempt,
                        due_ms: due_ms[i],
                        late_ms,
                        wall_ms: timed.wall_ms,
                        lock_wait_ms: timed.lock_wait_ms,
                        hold_ms: timed.hold_ms,
                        ending: timed.ending.label().to_string(),
                    });
                    if !busy {
                        break;
                    }
                    std::thread::sleep(retry_gap);
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().expect("lock") {
        return Err(e);
    }
    let mut rows = rows.into_inner().expect("lock");
    rows.sort_by_key(|r| (r.index, r.attempt));
    Ok(rows)
}

/// A closed-loop attempt as a row of load.csv (µs to ms).
fn closed_loop_row(recorded: &[crate::world::db::Recorded], a: &super::closed_loop::Attempt) -> LoadRow {
    let ms = |us: i64| us as f64 / 1000.0;
    let stmt = recorded[a.index].stmt;
    let ending = match a.ending.as_str() {
        "ok" => "ok",
        "busy" => "busy",
        _ => "failed",
    }
    .to_string();
    LoadRow {
        index: a.index,
        statement: stmt.name().to_string(),
        writes: stmt.writes(),
        attempt: a.attempt,
        due_ms: ms(a.due_us),
        late_ms: ms(a.began_us - a.due_us),
        wall_ms: ms(a.wall_us),
        lock_wait_ms: a.lock_wait_us.map(ms),
        hold_ms: a.hold_us.map(ms),
        ending,
    }
}

/// A wait is a write attempt whose `BEGIN IMMEDIATE` took 1 ms or more (uncontended it reads
/// 0: `.timer` prints whole ms); BUSY, any write attempt refused, as rehearsal counts them.
fn measured_figures(rows: &[LoadRow]) -> LockFigures {
    // Per write (issue 43: the share of writes that wait, and that get SQLITE_BUSY): a write
    // counts once however many of its attempts waited or were refused.
    let (mut waited, mut refused) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
    let mut figures = LockFigures::default();
    for row in rows.iter().filter(|r| r.writes) {
        if row.attempt == 1 {
            figures.writes += 1;
        }
        if row.ending == "busy" {
            refused.insert(row.index);
        } else if let Some(wait) = row.lock_wait_ms.filter(|w| *w >= 1.0) {
            waited.insert(row.index);
            figures.wait_ms_total += wait;
        }
    }
    (figures.lock_waits, figures.busy) = (waited.len() as u64, refused.len() as u64);
    figures
}

/// rehearsal's lock model on the scenario with `hold` and `busy_timeout_ms`: its contention
/// and the writes it executed.
fn predict(scenario: &Scenario, path: &std::path::Path, seed: u64, hold: Dist, busy_timeout_ms: i64, k: u32) -> Result<(Contention, u64)> {
    let mut with_hold = scenario.clone();
    with_hold.faults.write_hold_ms = Some(hold);
    with_hold.faults.busy_timeout_ms = Some(busy_timeout_ms);
    // The load's busy handler sleeps real ms: K simulated ms each (sim/world/write_lock.rs).
    with_hold.faults.busy_sleep_scale = Some(i64::from(k));
    let run = recorded_run(with_hold, path, Some(seed))?;
    let writes = run.recorded.iter().filter(|r| r.stmt.writes()).count() as u64;
    Ok((run.summary.contention, writes))
}

/// Issue 43's bound: a predicted share (percent) within ±25 % of the measured one, relative, or
/// within ±2 points where the measured share is under 8 %.
pub fn within(predicted_pct: f64, measured_pct: f64) -> bool {
    if measured_pct < 8.0 {
        (predicted_pct - measured_pct).abs() <= 2.0
    } else {
        (predicted_pct - measured_pct).abs() <= 0.25 * measured_pct
    }
}

fn pct(part: u64, whole: u64) -> String {
    format!("{:.1} %", 100.0 * part as f64 / whole.max(1) as f64)
}

fn mean_wait(f: &LockFigures) -> String {
    if f.lock_waits == 0 {
        "-".to_string()
    } else {
        format!("{:.1} ms", f.wait_ms_total / f.lock_waits as f64)
    }
}

fn show(q: Option<[f64; 3]>) -> String {
    q.map_or("-".to_string(), |[p50, p95, max]| format!("p50 {p50:.1} ms, p95 {p95:.1} ms, max {max:.1} ms"))
}

impl LoadReport {
    /// The predictions beside the measurement, in the order of the table: (column heading,
    /// comparison.csv's name for it, its figures; None where it cannot be made).
    fn sides(&self) -> [(&'static str, &'static str, Option<&LockFigures>); 5] {
        [
            (
                "the prediction: lock rule closed loop, measured holds",
                "closed-loop lock rule on measured holds",
                self.closed_loop_rule.as_ref(),
            ),
            (
                "lock rule, the load's own arrivals and holds (a diagnosis)",
                "lock rule on the load's own arrivals",
                Some(&self.own_arrivals),
            ),
            ("lock rule, simulated instants, measured holds", "lock rule on measured holds", Some(&self.on_arrivals_measured_holds)),
            ("lock rule, simulated instants, fitted holds", "lock rule on fitted holds", Some(&self.on_arrivals)),
            ("rehearsal run, fitted holds", "rehearsal run on fitted holds", Some(&self.predicted)),
        ]
    }

    /// The predicted-vs-measured table (Markdown), the same on stdout and in comparison.md.
    pub fn table(&self) -> String {
        let mut sides: Vec<(&str, Option<&LockFigures>)> = self.sides().iter().map(|&(head, _, f)| (head, f)).collect();
        let measured = if self.closed_loop { "measured (a process per actor, closed loop)" } else { "measured (sqlite3 processes)" };
        sides.push((measured, Some(&self.measured)));
        let mut out = format!(
            "| figure | {} |\n|---|{}\n",
            sides.iter().map(|(head, _)| *head).collect::<Vec<_>>().join(" | "),
            "---|".repeat(sides.len())
        );
        let row = |label: &str, cell: &dyn Fn(&LockFigures) -> String| {
            let cells: Vec<String> = sides.iter().map(|(_, f)| f.map_or("-".to_string(), cell)).collect();
            format!("| {label} | {} |\n", cells.join(" | "))
        };
        out.push_str(&row("writes", &|f| f.writes.to_string()));
        out.push_str(&row("lock waits (share of writes)", &|f| format!("{} ({})", f.lock_waits, pct(f.lock_waits, f.writes))));
        out.push_str(&row("mean lock wait (real ms)", &mean_wait));
        out.push_str(&row("SQLITE_BUSY (share of writes)", &|f| format!("{} ({})", f.busy, pct(f.busy, f.writes))));
        out
    }

    /// comparison.csv (issue 43): one row per figure and prediction, `figure,predicted,measured,within`,
    /// shares in percent of writes; `within` is the bound of docs/calibration.md. The first
    /// prediction (the closed-loop lock rule) is the one the bound is judged on.
    pub fn comparison_csv(&self) -> String {
        let mut out = String::from("figure,predicted,measured,within\n");
        let share = |part: u64, whole: u64| if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 };
        let m = &self.measured;
        for (_, how, f) in self.sides() {
            let Some(f) = f else { continue };
            for (figure, predicted, measured) in [
                ("lock waits (% of writes)", share(f.lock_waits, f.writes), share(m.lock_waits, m.writes)),
                ("SQLITE_BUSY (% of writes)", share(f.busy, f.writes), share(m.busy, m.writes)),
            ] {
                out.push_str(&format!("{figure} {how},{predicted:.1},{measured:.1},{}\n", within(predicted, measured)));
            }
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!("# Contention: {} seed {}, rehearsal against real SQLite\n\n", self.scenario, self.seed));
        out.push_str("Written by `rehearsal calibrate load` (docs/calibration.md).\n\n");
        out.push_str(&self.setup());
        out.push('\n');
        out.push_str(&self.table());
        out.push('\n');
        out.push_str(&self.at_simulated_rates());
        out
    }

    fn setup(&self) -> String {
        let mut out = String::new();
        if self.closed_loop {
            out.push_str(&format!(
                "- load: {} of {} statements of the run (without contention) replayed closed loop at {}x speed in {:.1} s by {} processes, one per actor, each with one connection (rehearsal's bundled SQLite {})\n",
                self.replayed,
                self.statements,
                self.speedup,
                self.elapsed.as_secs_f64(),
                self.procs.map_or("?".to_string(), |n| n.to_string()),
                self.sqlite_version
            ));
        } else {
            out.push_str(&format!(
                "- load: {} of {} statements of the run (without contention) replayed at {}x speed in {:.1} s by {} workers, one `{}` process per statement\n",
                self.replayed,
                self.statements,
                self.speedup,
                self.elapsed.as_secs_f64(),
                self.procs.map_or("?".to_string(), |n| n.to_string()),
                self.sqlite_version
            ));
        }
        let held = if self.keep_open {
            "one connection held open meanwhile (as comms-link would)"
        } else {
            "no other connection open (each process may be the last to close)"
        };
        out.push_str(&format!("- {held}\n"));
        out.push_str(&format!(
            "- busy timeout: `.timeout {}` ms in the load; rehearsal {} ms (the scenario's {} ms)\n",
            self.busy_timeout_ms,
            self.busy_timeout_ms * u64::from(self.speedup),
            self.sim_busy_timeout_ms
        ));
        out.push_str(&format!(
            "- write hold measured: {}; rehearsal given `write_hold_ms = {}` (the fit, times {})\n",
            show(self.hold_ms),
            fit::toml_value(&self.predicted_hold),
            self.speedup
        ));
        out.push_str(&format!("- how late the workers started statements: {}\n", show(self.late_ms)));
        if let Some(other) = &self.inputs_from {
            out.push_str(&format!(
                "- the prediction (closed loop) drew its holds and service times from another load, {}, not from this one\n",
                other.display()
            ));
        }
        out.push_str(&format!(
            "- besides: {} reads got SQLITE_BUSY (rehearsal's reads never do), {} writes gave up after 3 retries, {} statements failed otherwise\n",
            self.read_busy, self.gave_up, self.failed
        ));
        out
    }

    fn at_simulated_rates(&self) -> String {
        let mut out = String::from("At the simulated rates (speedup 1), rehearsal predicts:\n\n");
        let line = |label: &str, hold: &Dist, c: &Contention, writes: u64| {
            format!(
                "- {label} `write_hold_ms = {}`: {} lock waits ({}), {} writes got SQLITE_BUSY ({}) in {} writes\n",
                fit::toml_value(hold),
                c.lock_waits,
                pct(c.lock_waits, writes),
                c.busy_writes,
                pct(c.busy_writes, writes),
                writes
            )
        };
        if let Some((hold, c, writes)) = &self.as_written {
            out.push_str(&line("as the scenario is written,", hold, c, *writes));
        }
        let (hold, c, writes) = &self.with_measured_holds;
        out.push_str(&line("with the holds measured here,", hold, c, *writes));
        out
    }

    pub fn render(&self) -> String {
        let mut out = self.setup();
        out.push('\n');
        out.push_str(&self.table());
        out.push('\n');
        out.push_str(&self.at_simulated_rates());
        out.push_str(&format!("\nwritten {} and {}\n", self.out.join("comparison.md").display(), self.out.join("load.csv").display()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(writes: bool, attempt: u32, wait: Option<f64>, ending: &'static str) -> LoadRow {
        LoadRow {
            index: 0,
            statement: "x".to_string(),
            writes,
            attempt,
            due_ms: 0.0,
            late_ms: 0.0,
            wall_ms: 5.0,
            lock_wait_ms: wait,
            hold_ms: None,
            ending: ending.to_string(),
        }
    }

    #[test]
    fn waits_of_a_millisecond_or_more_and_busy_answers_are_counted_once_per_write() {
        let at = |index: usize, row: LoadRow| LoadRow { index, ..row };
        let rows = [
            at(0, row(true, 1, Some(0.0), "ok")),
            at(1, row(true, 1, Some(3.0), "ok")),
            at(2, row(true, 1, Some(8.0), "busy")),
            at(2, row(true, 2, Some(8.0), "busy")),
            at(2, row(true, 3, Some(2.0), "ok")),
            at(3, row(false, 1, None, "busy")),
        ];
        assert_eq!(measured_figures(&rows), LockFigures { writes: 3, lock_waits: 2, wait_ms_total: 5.0, busy: 1 });
    }

    #[test]
    fn the_bound_is_a_quarter_relative_or_two_points_under_eight_percent() {
        assert!(within(31.0, 25.0) && !within(31.5, 25.0) && within(19.0, 25.0) && !within(18.5, 25.0));
        assert!(within(0.0, 2.0) && within(9.9, 7.9) && !within(10.1, 7.9) && !within(0.0, 8.0));
    }

    #[test]
    fn the_speedup_fits_the_run_into_the_seconds_given() {
        assert_eq!(auto_speedup(7_222_426, 60), 121);
        assert_eq!(auto_speedup(30_000, 60), 1);
        assert_eq!(auto_speedup(60_001, 60), 2);
    }
}
