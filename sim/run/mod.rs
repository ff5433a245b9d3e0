//! One run: scenario + seed → run folder with `comms.db` and `trace.csv`, and a verdict.

pub mod engine;
pub mod fork;
pub mod observer_thread;
pub mod timings;

use std::path::{Path, PathBuf};

use crate::actors::conductor;
use crate::base::clock::SimClock;
use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::input::sql_catalog::Catalog;
use crate::judging::coverage::{Coverage, CoverageObserver};
use crate::judging::oracle::Checker;
use crate::judging::verdict::{self, Verdict};
use crate::plan::RunPlan;
use crate::run::engine::{Engine, EngineConfig};
use crate::run::observer_thread::Observers;
use crate::trace::{RunEnd, RunStart, TraceSink};
use crate::world::db::CommsDb;

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub scenario_path: PathBuf,
    /// Overrides the scenario's `run.seed`.
    pub seed: Option<u64>,
    /// Defaults to `reports/runs/<scenario>-<seed>/`.
    pub out_dir: Option<PathBuf>,
    /// Protocol variants applied after the scenario's own (sim/input/variant.rs).
    pub variants: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct RunSummary {
    pub scenario: String,
    pub seed: u64,
    pub out_dir: PathBuf,
    pub verdict: Verdict,
    pub tasks_total: usize,
    pub tasks_complete: usize,
    /// Simulated ms from the epoch to the last event.
    pub makespan_ms: i64,
    /// Whether every actor finished, or the time limit cut the run off (its figures are
    /// then counted apart: docs/metrics.md).
    pub ending: crate::vocab::Ending,
    pub statements: u64,
    /// Reads the oracles made around writes, apart from the protocol's statements.
    pub observer_reads: u64,
    /// Of `statements`, the reads answered from a base run's rows (`Execution::replay_reads`):
    /// counted, never written to an output (every output is the same without them).
    pub reads_replayed: u64,
    pub events: u64,
    pub trace_rows: u64,
    pub trace_hash: String,
    pub replay: String,
    pub variants: Vec<String>,
    /// The SQL that ran: its files and the hash of its statements.
    pub sql: crate::input::sql_catalog::SqlIdentity,
    /// The scenario as the run read it (its variants applied): what reports describe.
    pub resolved: std::sync::Arc<Scenario>,
    pub contention: crate::world::Contention,
    pub measured: crate::judging::oracle::Measurements,
    /// The timing budgets the run was judged against (set in the scenario, or derived).
    pub budgets: Vec<crate::judging::oracle::rules::budget::BudgetLimit>,
    /// Everything drawn from the seed for fault odds (swarm testing).
    pub drawn: Vec<(String, String)>,
    /// Each declared fault kind armed and fired, the scripted entries that never struck
    /// (sim/plan/census.rs).
    pub faults: crate::plan::census::Census,
    /// What the run exercised: transitions by writer and fault context, writes of no row.
    pub coverage: Coverage,
    /// Every task row (the conductor's too, fallback rows aside) and its state at the end.
    pub end_states: Vec<(String, crate::vocab::TaskState)>,
}

pub use crate::plan::{catalog_for, default_out_dir};

/// What a run leaves in its folder. Either way the summary is the same, trace hash included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Keep {
    /// `trace.csv`, `comms.db`, `violations.csv` and the sessions' files.
    #[default]
    Everything,
    /// Only the trace's hash: no `trace.csv` (its bytes are hashed, not written), no
    /// `violations.csv`, no sessions' files, and no `comms.db`: the connection, whose summary
    /// is read first, is kept for the thread's next such run (sim/world/db_pool.rs). For runs
    /// whose folders are removed: a sweep's pair (a failing one is run again with
    /// `Everything`, sim/campaign/sweep.rs), explore's, schedules', search's and shrink's runs.
    Hash,
}

/// How `execute` carries out a plan; `Execution::default()` keeps everything, records
/// nothing and reports no progress.
#[derive(Default)]
pub struct Execution<'a> {
    /// What the run folder keeps.
    pub keep: Keep,
    /// Return every protocol statement executed, in order, with its bound parameters (for
    /// `rehearsal bench --overhead` and `calibrate`).
    pub record: bool,
    /// Told (simulated ms so far, the run's `sim_time_max_ms`) each simulated minute: what
    /// `rehearsal run` shows of a long run. It only observes.
    pub progress: Option<&'a mut dyn FnMut(i64, i64)>,
    /// Record every statement with its rows, for runs that follow this one
    /// (`Executed::base_run`, sim/world/read_replay.rs).
    pub record_base: bool,
    /// Answer reads from this base run's rows while the run is that run, statement for
    /// statement (`explore crashes`, sim/world/read_replay.rs).
    pub replay_reads: Option<std::sync::Arc<crate::world::read_replay::BaseRun>>,
    /// Install the history recorder in the run's comms.db (issue 40,
    /// sim/world/recorder.rs), as a deployment would: off by default, so a run's files are
    /// the same bytes as ever; on, `rehearsal judge --db` can judge the run's comms.db.
    pub record_history: bool,
    /// Take snapshots for runs forked from this one (`Executed::fork_base`, sim/run/fork.rs):
    /// only a run whose observers are on its own thread and hash its trace (`Keep::Hash`).
    pub take_snapshots: bool,
    /// Fork this run from a base run's snapshot (its index): brought there on the base run's
    /// replies, then its database and observers taken from it (sim/run/fork.rs). A run that
    /// parts from its base run before the snapshot ends in the error `fork::parted` tells.
    pub fork_from: Option<(std::sync::Arc<fork::ForkBase>, usize)>,
    /// Send a copy of `trace.csv`'s bytes here as they are written, their end when the trace
    /// is finished (`TraceSink::create_copied`): `rehearsal run` builds its reports' model
    /// from them during the run (sim/report/streamed.rs). Only a run that keeps its files.
    pub trace_copy: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
}

/// A finished run: its summary, and the statements it executed when `Execution::record`.
pub struct Executed {
    pub summary: RunSummary,
    pub recorded: Vec<crate::world::db::Recorded>,
    /// Every statement with its rows, when `Execution::record_base`.
    pub base_run: Option<crate::world::read_replay::BaseRun>,
    /// Its snapshots and replies, when `Execution::take_snapshots`.
    pub fork_base: Option<fork::ForkBase>,
}

impl RunOptions {
    /// The plan of a run of `scenario` with these options: what `execute` carries out.
    pub fn plan(&self, scenario: &Scenario) -> Result<RunPlan> {
        RunPlan::resolve(scenario, self.seed, &self.variants, self.out_dir.clone())
    }
}

/// Loads the scenario file, plans and executes the run with everything kept: shorthand for
/// `execute(options.plan(&scenario)?, Execution::default())`.
pub fn run(options: &RunOptions) -> Result<RunSummary> {
    run_scenario(Scenario::load(&options.scenario_path)?, options)
}

/// `run` of a scenario already loaded (and possibly changed: a grid point, a variant column).
pub fn run_scenario(scenario: Scenario, options: &RunOptions) -> Result<RunSummary> {
    Ok(execute(options.plan(&scenario)?, Execution::default())?.summary)
}

/// The one runner: carries out a resolved plan (the database, the engine with its observers,
/// the verdict) as `how` says. A panic in the run is a harness error here
/// (sim/base/panic_guard.rs), whoever asked for the run.
pub fn execute(plan: RunPlan, how: Execution<'_>) -> Result<Executed> {
    let Execution { keep, record, progress, record_base, replay_reads, record_history, take_snapshots, fork_from, trace_copy } = how;
    let mut quiet = |_: i64, _: i64| {};
    let progress: &mut dyn FnMut(i64, i64) = match progress {
        Some(progress) => progress,
        None => &mut quiet,
    };
    let statements = Statements { record, record_base, replay: replay_reads, history: record_history, take_snapshots, fork_from };
    let out_dir = plan.out_dir.clone();
    // Until the run ends its temporaries are removed by a Ctrl-C that ends the command, and
    // its trace too: it takes its name before the database does, and a trace without its
    // database is no finished run.
    let unfinished = crate::world::run_folder::TEMPORARIES.iter().chain(&["trace.csv"]).map(|name| out_dir.join(name));
    let mut live = crate::base::live_files::track(unfinished);
    let executed =
        crate::base::panic_guard::guarded("the run", || execute_unguarded(plan, keep, statements, progress, trace_copy, &mut live));
    drop(live);
    if executed.is_err() {
        // An orderly end (exit 2 or 3) removes the temporaries the run made, its unfinished
        // database and trace (issue 41: a 10,000-musician run stopped by the event cap left
        // 982 MB of them, and a sweep's saved erroring pair held nothing else).
        crate::world::run_folder::remove_temporaries(&out_dir);
    }
    executed
}

/// What a run does with its statements besides running them: record them for the floor
/// (`Execution::record`) or for later runs, or answer reads from an earlier run's
/// (`Execution::record_base`, `Execution::replay_reads`).
struct Statements {
    record: bool,
    record_base: bool,
    replay: Option<std::sync::Arc<crate::world::read_replay::BaseRun>>,
    history: bool,
    take_snapshots: bool,
    fork_from: Option<(std::sync::Arc<fork::ForkBase>, usize)>,
}

impl Statements {
    fn apply_to(&mut self, db: &mut CommsDb) -> Result<()> {
        if self.history {
            db.record_history()?;
        }
        if self.record {
            db.recorded = Some(Vec::new());
        }
        if self.record_base {
            db.record_base();
        }
        let replays = self.replay.is_some();
        if let Some(base) = self.replay.take() {
            db.set_replay(base);
        }
        if !db.forkable() {
            self.take_snapshots = false;
            self.fork_from = None;
        }
        // A forked run shares the base run's reads after its snapshot, as one that is not.
        if !replays {
            self.fork_from = None;
        }
        Ok(())
    }

    /// The engine's part in forking: snapshots taken, or the run forked from one.
    fn apply_to_engine(self, engine: &mut Engine) {
        if self.take_snapshots {
            engine.take_snapshots();
        }
        if let Some((base, at)) = self.fork_from {
            engine.fork_from(base, at);
        }
    }
}

type Live = crate::base::live_files::Live;
/// A run's progress callback, as `Engine::run_with_progress` calls it.
type Progress<'a> = dyn FnMut(i64, i64) + 'a;

/// `live` tracks the run's unfinished files; the database's rename into place lets go of them.
fn execute_unguarded(
    plan: RunPlan,
    keep: Keep,
    statements: Statements,
    progress: &mut Progress<'_>,
    trace_copy: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
    live: &mut Live,
) -> Result<Executed> {
    // The command that reproduces this run, from the plan as `rehearsal run` prints it on an error.
    let replay = replay_of(&plan);
    let setup = timings::start("run: setup");
    let RunPlan { scenario, seed, catalog, faults, out_dir, cli_variants, launcher, schedule } = plan;
    let drawn = faults.drawn.clone();
    let census = faults.census();
    let sql = catalog.identity();
    let checker = checker_for(&scenario).with_sql_in_force(crate::judging::oracle::SqlInForce::of(&catalog));
    crate::base::live_files::create_dir_all(&out_dir)
        .map_err(|e| Error::input(format!("cannot create output folder {}: {e}", out_dir.display())))?;
    let epoch = scenario.run.epoch_unix_ms;
    let mut db = open_db(&out_dir, epoch, seed, catalog, &sql.sha256, keep)?;
    let clock = db.clock().clone();
    bound_db(&mut db, &scenario.run)?;
    let mut statements = statements;
    statements.apply_to(&mut db)?;
    let trace = start_trace(&scenario, seed, cli_variants, &out_dir, keep, trace_copy)?;
    let config = engine_config(&scenario, seed);
    clear_temp(&out_dir)?;
    let observers = Observers { trace, checker, coverage: CoverageObserver::default() };
    let mut engine = Engine::new(config, clock, db, observers, out_dir.clone(), faults)?;
    statements.apply_to_engine(&mut engine);
    if let Some(schedule) = schedule {
        engine.set_schedule(schedule);
    }
    spawn_conductor(&mut engine, &scenario, launcher);
    setup.end();
    let ending = timings::time("run: simulation", || engine.run_with_progress(progress));
    let ending = match ending {
        Ok(_) if engine.fork_unreached() => Err(Error::harness(crate::world::PARTED)),
        ending => ending,
    };
    let fork_base = engine.take_fork_base();
    let schedule_problem = engine.schedule_problem();
    let (makespan_ms, events, contention) = (engine.now_ms(), engine.events(), engine.contention());
    let finished = timings::time("run: files, observers", || match keep {
        Keep::Everything => engine.finish(),
        Keep::Hash => engine.finish_unwritten(),
    });
    let (mut db, Observers { mut trace, checker, coverage }) = finished?;
    let ending = ending?;
    if let Some(problem) = schedule_problem {
        return Err(Error::input(format!("{}: {problem}", scenario.path.display())));
    }
    timings::time("run: trace's seal", || trace.write_run_end(&RunEnd { ending, makespan_ms }))?;
    let judging = timings::start("run: verdict");
    let recorded = db.recorded.take().unwrap_or_default();
    let base_run = db.take_base();
    let (statements, observer_reads, reads_replayed) = (db.stats.statements, db.stats.observer_reads, db.stats.reads_replayed);
    let mut measured = checker.measured().clone();
    measured.designer.collapses = checker.collapses().to_vec();
    let verdict = verdict::judge(db.connection(), &scenario, ending, makespan_ms, checker)?;
    let tasks_complete = verdict::tasks_in_state(db.connection(), crate::vocab::TaskState::Complete)?;
    measured.designer.cut_off = ending == crate::vocab::Ending::TimeLimit;
    measured.designer.tasks_complete = tasks_complete as u64;
    measured.designer.makespan_ms = makespan_ms;
    let end_states = verdict::task_states(db.connection())?;
    judging.end();
    let (trace_rows, trace_hash) = leave_files(keep, &out_dir, (&verdict, &measured), db, trace, live)?;
    // The actors are gone with the engine, so the plan's scenario is this run's alone again.
    let resolved = std::sync::Arc::new(std::rc::Rc::try_unwrap(scenario).unwrap_or_else(|shared| (*shared).clone()));
    let scenario = &resolved;
    let summary = RunSummary {
        budgets: crate::judging::oracle::rules::budget::limits(scenario),
        resolved: resolved.clone(),
        scenario: scenario.name.clone(),
        seed,
        replay,
        variants: scenario.variant_names.clone(),
        sql,
        contention,
        measured,
        drawn,
        faults: census.snapshot(),
        coverage: coverage.into_coverage(),
        end_states,
        out_dir,
        verdict,
        tasks_total: scenario.tasks.len(),
        tasks_complete,
        makespan_ms,
        ending,
        statements,
        observer_reads,
        reads_replayed,
        events,
        trace_rows,
        trace_hash,
    };
    Ok(Executed { summary, recorded, base_run, fork_base })
}

/// What a judged run leaves: violations.csv and latency.csv (a run that keeps its files), its
/// database closed (or kept for the thread's next hash-only run), its trace finished, and last
/// the database renamed into place. Returns the trace's rows and hash.
fn leave_files(
    keep: Keep,
    out_dir: &Path,
    (verdict, measured): (&Verdict, &crate::judging::oracle::Measurements),
    db: CommsDb,
    trace: TraceSink,
    live: &mut Live,
) -> Result<(u64, String)> {
    if keep == Keep::Everything {
        timings::time("run: violations, latency", || write_judged(out_dir, verdict, measured))?;
    }
    let closing = timings::start("run: comms.db close");
    match keep {
        Keep::Everything => db.close()?,
        Keep::Hash => crate::world::db_pool::keep(db)?,
    }
    closing.end();
    let trace_rows = trace.rows_written();
    let trace_hash = timings::time("run: trace.csv finish", || trace.finish())?;
    if keep == Keep::Everything {
        // Last: a `comms.db` says its run ended and its trace is whole (one step with letting go).
        live.finish(|| crate::world::run_folder::publish_db(out_dir))?;
    }
    Ok((trace_rows, trace_hash))
}

/// The run's first actor: the conductor, or its launcher (docs/protocol.md C34: someone
/// restarts a conductor that dies).
fn spawn_conductor(engine: &mut Engine, scenario: &std::rc::Rc<Scenario>, launcher: bool) {
    let for_conductor = scenario.clone();
    if launcher {
        engine.spawn(conductor::launcher_meta(), 0, move |ctx| conductor::launcher(ctx, for_conductor));
    } else {
        engine.spawn(conductor::conductor_meta(None, 1), 0, move |ctx| conductor::conductor(ctx, for_conductor));
    }
}

/// A kept run's judgement beside its trace: violations.csv and latency.csv.
fn write_judged(out_dir: &Path, verdict: &Verdict, measured: &crate::judging::oracle::Measurements) -> Result<()> {
    write_violations(&out_dir.join("violations.csv"), verdict)?;
    let latency = crate::judging::oracle::latency::latency_csv(&measured.decompositions).map_err(Error::harness)?;
    crate::base::atomic::write_atomically(&out_dir.join("latency.csv"), &latency)
}

/// The run's database: a new `comms.db` in `out_dir`, under a temporary name until the run
/// ends (sim/world/run_folder.rs: a killed run leaves no `comms.db`, never a half-checkpointed
/// one); for a run that keeps only its hash, this thread's kept connection emptied
/// (sim/world/db_pool.rs) when it has this catalog.
/// The run's bounds on its SQL: steps a statement may take, bytes the database and a value
/// may hold (issue 41).
fn bound_db(db: &mut CommsDb, run: &crate::input::scenario::RunSection) -> Result<()> {
    db.set_steps_max(run.sql_steps_max);
    db.set_bytes_max(run.db_bytes_max, run.value_bytes_max)
}

fn open_db(out_dir: &Path, epoch_unix_ms: i64, seed: u64, catalog: Catalog, sql_sha256: &str, keep: Keep) -> Result<CommsDb> {
    if keep == Keep::Hash {
        if let Some(mut db) = crate::world::db_pool::take(&catalog, sql_sha256) {
            // One that cannot be emptied is dropped: a new file does what it would have.
            if db.restart(epoch_unix_ms, seed).is_ok() {
                return Ok(db);
            }
        }
    }
    CommsDb::create(&out_dir.join(crate::world::run_folder::DB_TMP), SimClock::new(epoch_unix_ms), seed, catalog)
}

/// The run's trace, its `run_start` row written: what `rehearsal judge` needs to judge the run
/// again from its files.
fn start_trace(
    scenario: &Scenario,
    seed: u64,
    cli_variants: Vec<String>,
    out_dir: &Path,
    keep: Keep,
    copy: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
) -> Result<TraceSink> {
    let epoch = scenario.run.epoch_unix_ms;
    let mut trace = match keep {
        Keep::Everything => TraceSink::create_copied(&out_dir.join("trace.csv"), epoch, copy)?,
        Keep::Hash => TraceSink::unwritten(epoch),
    };
    let variants = cli_variants;
    // The scenario by its file name alone: the trace hash must not depend on the folder the
    // command ran in, how the path was typed or where the checkout is.
    let name = crate::input::scenario::identity::file_name(&scenario.path);
    // Its text's hash beside the name (C120), so `judge` can tell the file it finds from the
    // one the run was made with; only for a file as loaded: explore's points and swarm's
    // draws parse edited documents, and a point whose fault never fires must be its base
    // run byte for byte.
    let scenario_sha256 = scenario.text_sha256.clone();
    let start = RunStart {
        scenario: name,
        scenario_sha256,
        seed,
        profile: scenario.profile.clone(),
        conductor: scenario.conductor_profile.clone(),
        variants,
        epoch_unix_ms: epoch,
    };
    trace.write_run_start(&start)?;
    Ok(trace)
}

fn engine_config(scenario: &Scenario, seed: u64) -> EngineConfig {
    EngineConfig {
        seed,
        epoch_unix_ms: scenario.run.epoch_unix_ms,
        statement_ms: scenario.timing.statement_ms.clone(),
        sim_time_max_ms: scenario.run.sim_time_max_ms,
        events_max: scenario.run.events_max,
        retry_failed_reads: scenario.settings.retry_failed_reads,
        conductor_busy_backoff: scenario.settings.conductor_busy_backoff,
    }
}

/// A fresh temp/ for this run: the protocol's files must come from this run alone.
fn clear_temp(out_dir: &Path) -> Result<()> {
    let temp_dir = out_dir.join("temp");
    if temp_dir.exists() {
        std::fs::remove_dir_all(&temp_dir).map_err(|e| Error::harness(format!("cannot clear {}: {e}", temp_dir.display())))?;
    }
    Ok(())
}

/// The checker of a run of `scenario` (its variants applied): the run's and `rehearsal
/// judge`'s, so both judge with the same settings.
pub fn checker_for(scenario: &Scenario) -> Checker {
    let thresholds = crate::judging::oracle::latency::Thresholds {
        staleness_ms: scenario.conductor.staleness_s * 1000,
        refresh_ms: scenario.timing.heartbeat_refresh_s * 1000,
    };
    Checker::new(scenario.settings.clone())
        .with_conductor_choices(crate::judging::oracle::ConductorChoices::of(scenario))
        .with_thresholds(thresholds)
        .with_watcher_read_window_ms(crate::judging::oracle::rules::budget::watcher_read_window_ms(scenario))
}

/// The command that reproduces a run. It names the same folder with `--force`: the run is
/// deterministic, so the replay writes the same bytes again. Paths are quoted for the shell.
pub fn replay_command(
    scenario: &Path,
    seed: u64,
    out_dir: &Path,
    protocol: Option<&str>,
    conductor: Option<&str>,
    variants: &[String],
    sql: Option<&Path>,
) -> String {
    let run = crate::base::shell::run_command(scenario, seed, protocol, variants, sql);
    let conductor = conductor.map_or(String::new(), |c| format!(" --conductor {}", crate::base::shell::quote(c)));
    format!("{run}{conductor} --out {} --force", crate::base::shell::quote_path(out_dir))
}

/// The command that reproduces the run `plan` will make (`replay_command`), known before it
/// runs: what `rehearsal run` prints when the run ends in an error.
pub fn replay_of(plan: &RunPlan) -> String {
    replay_command(
        &plan.scenario.path,
        plan.seed,
        &plan.out_dir,
        plan.scenario.profile_override.as_deref(),
        plan.scenario.conductor_override.as_deref(),
        &plan.cli_variants,
        plan.scenario.sql_override.as_deref(),
    )
}

pub use crate::world::run_folder::refuse_existing_run;

impl RunSummary {
    /// This run's summary once its folder is kept at `folder` and replayed by `replay` (a
    /// sweep's saved failure): what the reports written before the move name.
    pub fn kept_in(self, folder: &std::path::Path, replay: String) -> RunSummary {
        RunSummary { out_dir: folder.to_path_buf(), replay, ..self }
    }

    /// The lines `rehearsal run` prints on stdout.
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!("scenario     {}\n", self.scenario));
        out.push_str(&format!("seed         {}\n", self.seed));
        // docs/protocol.md C110: whose policy the conductor's numbers are, always said.
        out.push_str(&format!(
            "conductor    {} ({})\n",
            self.resolved.conductor_profile,
            crate::input::conductor_profile::policy_words(&self.resolved.conductor)
        ));
        if self.resolved.profile != crate::vocab::DEFAULT_PROFILE {
            out.push_str(&format!("protocol     {}\n", self.resolved.profile));
        }
        if !self.variants.is_empty() {
            out.push_str(&format!("variants     {}\n", self.variants.join(", ")));
        }
        for (name, value) in &self.drawn {
            out.push_str(&format!("drawn        {name} = {value}\n"));
        }
        out.push_str(&format!("tasks        {}/{} complete\n", self.tasks_complete, self.tasks_total));
        out.push_str(&format!("makespan     {} (simulated, {} ms)\n", human_ms(self.makespan_ms), self.makespan_ms));
        out.push_str(&format!("statements   {} (+{} oracle reads)\n", self.statements, self.observer_reads));
        out.push_str(&format!("events       {} ({} trace rows)\n", self.events, self.trace_rows));
        let c = self.contention;
        if c.lock_waits > 0 || c.busy_errors > 0 {
            out.push_str(&format!(
                "contention   {} lock waits ({} ms in all), {} SQLITE_BUSY\n",
                c.lock_waits, c.lock_wait_ms_total, c.busy_errors
            ));
        }
        for (kind, (armed, fired)) in &self.faults.kinds {
            out.push_str(&format!("faults       {kind}: armed {armed}, fired {fired}\n"));
        }
        out.push_str(&format!("sql          {}\n", self.sql));
        out.push_str(&format!("output       {}\n", self.out_dir.display()));
        out.push_str(&format!("verdict      {}\n", self.verdict.headline()));
        for line in self.verdict.explanation() {
            out.push_str(&format!("             {}\n", crate::base::time_text::humanize_instants(&line)));
        }
        for line in &self.verdict.outside {
            out.push_str(&format!("outside      {line}\n"));
        }
        for (name, sample) in self.measured.named() {
            if let Some((p50, p95, max)) = crate::judging::oracle::quantiles(sample) {
                let budget = self.budgets.iter().find(|b| b.name == name).map_or(String::new(), |b| {
                    let margin = b.limit - max;
                    let breached = |margin: i64| if margin < 0 { " BREACHED" } else { "" };
                    let mut text = format!("; budget {}{}, margin {margin}{}", b.limit, b.derivation_note(), breached(margin));
                    // docs/protocol.md C85: a message that reached no pause has the smaller budget.
                    let outside = self.measured.decompositions.iter().filter(|d| d.measurement == name && !d.reached_pause);
                    if let (Some(limit), Some(max)) = (b.outside_pause, outside.map(|d| d.total_ms).max()) {
                        let margin = limit - max;
                        text.push_str(&format!("; outside a pause max {max}, budget {limit}, margin {margin}{}", breached(margin)));
                    }
                    text
                });
                out.push_str(&format!("timing       {name}: p50 {p50}, p95 {p95}, max {max} (n={}){budget}\n", sample.len()));
            }
        }
        out.push_str(&self.measured.designer.render());
        if !self.verdict.violations.is_empty() {
            out.push_str(&format!("violations   {} ({})\n", self.verdict.violations.len(), self.verdict.rules().join(", ")));
        }
        out.push_str(&format!("trace hash   {}\n", self.trace_hash));
        out.push_str(&format!("replay       {}\n", self.replay));
        out
    }
}

/// The bytes of `violations.csv`: every violation with its time and explanation.
pub fn violations_csv(verdict: &Verdict) -> Result<Vec<u8>> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(["t_ms", "rule", "explanation"]).map_err(|e| Error::harness(e.to_string()))?;
    for v in &verdict.violations {
        writer.write_record([v.t_ms.to_string(), v.rule.to_string(), v.explanation.clone()]).map_err(|e| Error::harness(e.to_string()))?;
    }
    writer.into_inner().map_err(|e| Error::harness(format!("violations.csv: {e}")))
}

/// Writes `violations.csv` (the run's, or `rehearsal judge --write`'s) to a temporary name and
/// renames it, so the file is whole or absent.
pub fn write_violations(path: &Path, verdict: &Verdict) -> Result<()> {
    crate::base::atomic::write_atomically(path, &violations_csv(verdict)?)
}

pub fn human_ms(ms: i64) -> String {
    let s = ms / 1000;
    format!("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sweep keeps only the hash of a passing pair's trace: it must be the hash of the
    /// bytes `trace.csv` holds when the same run writes it.
    #[test]
    fn a_run_that_only_hashes_its_trace_gives_the_written_trace_s_hash_and_writes_no_file_but_its_unfinished_db() {
        let dir = tempfile::tempdir().expect("temp");
        let options = |name: &str| RunOptions {
            scenario_path: PathBuf::from("scenarios/bench/ci-smoke.toml"),
            seed: Some(3),
            out_dir: Some(dir.path().join(name)),
            variants: Vec::new(),
        };
        let scenario = Scenario::load(Path::new("scenarios/bench/ci-smoke.toml")).expect("ci-smoke loads");
        let keeping = |keep| Execution { keep, ..Execution::default() };
        let full = execute(options("full").plan(&scenario).unwrap(), keeping(Keep::Everything)).expect("full run").summary;
        let hashed = execute(options("hashed").plan(&scenario).unwrap(), keeping(Keep::Hash)).expect("hashed run").summary;
        let written = std::fs::read(dir.path().join("full/trace.csv")).expect("the full run's trace");
        use sha2::{Digest, Sha256};
        let of_file: String = Sha256::digest(&written).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(full.trace_hash, of_file);
        assert_eq!(hashed.trace_hash, full.trace_hash);
        assert_eq!((hashed.trace_rows, hashed.statements, hashed.makespan_ms), (full.trace_rows, full.statements, full.makespan_ms));
        assert!(dir.path().join("full/violations.csv").exists());
        assert!(dir.path().join("full/temp").is_dir(), "ci-smoke's sessions write files");
        for file in ["comms.db", "trace.csv", "trace.csv.tmp", "violations.csv", "temp"] {
            assert!(!dir.path().join("hashed").join(file).exists(), "{file}");
        }
    }

    /// Hash-only runs on one thread share its kept connection (sim/world/db_pool.rs): each
    /// must give what it gives on a new file, whatever ran on the connection before.
    #[test]
    fn hash_only_runs_after_others_on_a_kept_connection_give_a_new_file_s_results() {
        let dir = tempfile::tempdir().expect("temp");
        let run = |path: &str, seed: u64, name: &str, keep: Keep| {
            let options = RunOptions {
                scenario_path: PathBuf::from(path),
                seed: Some(seed),
                out_dir: Some(dir.path().join(name)),
                variants: Vec::new(),
            };
            let plan = options.plan(&Scenario::load(Path::new(path)).expect("loads")).unwrap();
            let summary = execute(plan, Execution { keep, ..Execution::default() }).expect("runs").summary;
            (summary.trace_hash, summary.verdict.passed(), summary.end_states, summary.statements, summary.observer_reads)
        };
        let (smoke, faults) = ("scenarios/bench/ci-smoke.toml", "scenarios/faults/random-faults.toml");
        let new_file = [run(smoke, 3, "full-a", Keep::Everything), run(faults, 5, "full-b", Keep::Everything)];
        assert!(!crate::world::db_pool::kept_here(), "a run that keeps its files keeps no connection");
        let first = run(smoke, 3, "a1", Keep::Hash);
        assert!(crate::world::db_pool::kept_here(), "a hash-only run keeps its connection");
        assert!(dir.path().join("a1").join(crate::world::run_folder::DB_TMP).exists(), "the first made a file");
        let after = [run(faults, 5, "b", Keep::Hash), run(smoke, 3, "a2", Keep::Hash)];
        for name in ["b", "a2"] {
            assert!(!dir.path().join(name).join(crate::world::run_folder::DB_TMP).exists(), "{name} ran on the kept connection");
        }
        assert_eq!(first, new_file[0]);
        assert_eq!(after[0], new_file[1], "another scenario, the same catalog, on the kept connection");
        assert_eq!(after[1], new_file[0], "the first run again, after another");
    }

    /// A run that stops in an error leaves no connection behind for the next.
    #[test]
    fn a_hash_only_run_that_errs_keeps_no_connection() {
        let dir = tempfile::tempdir().expect("temp");
        let path = Path::new("scenarios/quickstart.toml");
        let mut scenario = Scenario::load(path).expect("loads");
        scenario.run.sql_steps_max = 1;
        let options =
            RunOptions { scenario_path: path.to_path_buf(), seed: Some(1), out_dir: Some(dir.path().join("r")), variants: Vec::new() };
        let erred = execute(options.plan(&scenario).unwrap(), Execution { keep: Keep::Hash, ..Execution::default() });
        assert!(erred.is_err(), "a statement past its budget (1 step, checked every 1,000) stops the run");
        assert!(!crate::world::db_pool::kept_here());
    }

    /// `explore crashes`' runs answer reads from the base run's rows while they are the base
    /// run (sim/world/read_replay.rs): a run with a fault added must give what it gives alone.
    #[test]
    fn a_run_answering_reads_from_its_base_run_gives_what_it_gives_alone() {
        let dir = tempfile::tempdir().expect("temp");
        let path = Path::new("scenarios/quickstart.toml");
        let text = std::fs::read_to_string(path).expect("quickstart");
        let crash = "\n[[faults.crash]]\ntask = 1\nsession = 1\nat = \"before:set_needs_review\"\n";
        let crashed = Scenario::parse(&format!("{text}{crash}"), path).expect("parses");
        let options = |name: &str| RunOptions {
            scenario_path: path.to_path_buf(),
            seed: Some(1),
            out_dir: Some(dir.path().join(name)),
            variants: Vec::new(),
        };
        let hash_only = |replay_reads| Execution { keep: Keep::Hash, replay_reads, ..Execution::default() };
        let base =
            execute(options("base").plan(&Scenario::load(path).unwrap()).unwrap(), Execution { record_base: true, ..Execution::default() })
                .unwrap();
        let base_run = std::sync::Arc::new(base.base_run.expect("recorded"));
        let alone = execute(options("alone").plan(&crashed).unwrap(), hash_only(None)).unwrap().summary;
        let shared = execute(options("shared").plan(&crashed).unwrap(), hash_only(Some(base_run))).unwrap().summary;
        let of = |s: &RunSummary| (s.trace_hash.clone(), s.verdict.passed(), s.end_states.clone(), s.statements, s.observer_reads);
        assert_ne!(alone.trace_hash, base.summary.trace_hash, "the crash fired");
        assert_eq!(of(&shared), of(&alone));
        assert_eq!(alone.reads_replayed, 0);
        assert!(
            shared.reads_replayed > 100 && shared.reads_replayed < shared.statements,
            "{} of {}",
            shared.reads_replayed,
            shared.statements
        );
    }
}
