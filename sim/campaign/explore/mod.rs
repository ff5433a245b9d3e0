//! `rehearsal explore crashes`: instead of random seeds, every protocol point of one run. The
//! scenario runs once with its seed (the base run), and its fault plan records every point
//! it reaches: each statement each musician session and each conductor session (with its
//! reviews) ran, counted as scripted faults count them (`points.rs`). Then, for each point,
//! the same scenario runs with a crash of that session before the statement and one after it
//! (and, with `--hangs`, at a musician session's point, a hang of each length class before it
//! and after it, `hang_class.rs`), as a scripted fault (`[[faults.crash]]`, `[[faults.hang]]`,
//! `[[faults.conductor_crash]]` with `at` and `nth`) added to the scenario's document
//! (`document.rs`). A conductor crash brings the launcher that relaunches the conductor
//! (docs/protocol.md C34). The scenario's own scripted crashes, hangs and conductor crashes
//! are set aside unless `--keep-faults`.
//!
//! Up to its point, a run with one added fault is the base run event for event: the plan
//! decides nothing differently before the fault fires. So a fault that never fires (a
//! statement that waited for the write lock, say, is asked twice and its first `after:` is
//! never answered) leaves the base run byte for byte: its outcome is `unreached`. A conductor
//! crash is told apart from a second reference run instead, the base run with the launcher
//! (the launcher is an actor of its own, so its trace is not the base run's).
//! Runs are grouped (`outcome.rs`): passing, and each distinct failure — the same first
//! violated rule and the same task-row states in `comms.db` at the end — with a replay file
//! and the run folder of its first point; explore.csv has a row per run (`report.rs`).
//! Runs go through the sweep's pool (results in job order, whatever `--jobs`); Ctrl-C keeps
//! the finished runs, marked incomplete, and explore.csv is checkpointed as they finish.
//!
//! Each run is forked at its point (issue 47, `--prefix fork`, sim/run/fork.rs): the base run
//! keeps a snapshot every so many statements (the rows of `comms.db`, its counters and a copy
//! of its observers: the checker and coverage are plain data, the trace a hash so far) and a
//! record of what the world made of each statement. A run whose point lies after a snapshot
//! is brought to it on the base run's replies — its actors, executor, write lock and fault
//! plan run again, SQLite is not asked and the events are not consumed — then takes the
//! snapshot's database and observers and goes on as any run, its reads answered from the base
//! run's rows while it is still the base run (sim/world/read_replay.rs). The actors are run
//! again rather than copied because an actor's whole memory is its suspended `async` future
//! (ARCHITECTURE.md), which Rust can neither clone nor serialise. Everything the catch-up
//! relies on is checked as it goes; a run that parts from the base run before its snapshot is
//! made again from its start. `--prefix reads` (`--no-fork`) makes every run from its start
//! with its reads shared, as before issue 47, and `--prefix none` every run whole, as its runs
//! one by one: the rows are the same bytes every way (tests/it/explore_fork.rs). Each row
//! records the statements before its point, and the summary says how many of all the
//! statements run that is.

mod by_statement;
pub(crate) mod document;
mod hang_class;
mod outcome;
mod points;
mod report;
mod runner;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::campaign::INCOMPLETE_MARKER;
pub use hang_class::HangClass;
pub use outcome::{PointOutcome, PointRow};
pub use points::{parse_session, Target};
pub use report::{read_csv, JOURNAL};

use self::points::Job;
use self::runner::Explorer;
use crate::base::atomic::write_atomically;
use crate::base::error::Result;
use crate::campaign::{Campaign, DistinctFailure, FolderSpec};
use crate::input::scenario::Scenario;
use crate::judging::coverage::Coverage;
use crate::plan::RunPlan;
use crate::run::fork::ForkBase;
use crate::run::RunSummary;
use crate::vocab::{FaultName, RunOutcome};
use crate::world::read_replay::BaseRun;

#[derive(Clone, Debug)]
pub struct ExploreOptions {
    pub scenario: PathBuf,
    /// The base run's seed (the scenario's `run.seed` unless given).
    pub seed: Option<u64>,
    /// `--protocol NAME`: the profile in place of the scenario's (written into the runs' and
    /// replay files' documents as `[protocol] profile`).
    pub protocol: Option<String>,
    pub variants: Vec<String>,
    /// Explore only these sessions' points (every session's when empty).
    pub sessions: Vec<Target>,
    /// Explore only the points with these numbers (explore.csv's `point`; all when empty).
    pub points: Vec<u64>,
    /// The kinds placed before and after each point (`--faults`; a hang once per length
    /// class, and a conductor's point only the kinds that strike a conductor).
    pub faults: Vec<FaultName>,
    /// Keep the scenario's own scripted crashes and hangs.
    pub keep_faults: bool,
    pub jobs: usize,
    pub out: PathBuf,
    /// Where runs are made and removed (default: `/dev/shm` where it exists, else `out`).
    pub scratch: Option<PathBuf>,
    /// A progress line every this many runs (stderr).
    pub progress_every: usize,
    /// Replace what an earlier command left in `out` (refused without it: sim/base/out_folder.rs).
    pub force: bool,
    /// What each run shares of the base run's prefix (`--prefix`): explore.csv is the same
    /// whichever.
    pub prefix: Prefix,
}

/// What an explored run shares of the base run up to its point. Every one gives the same
/// rows, byte for byte; they differ in what they cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Prefix {
    /// Start from the base run's nearest snapshot before the point (sim/run/fork.rs), the
    /// actors brought there on the base run's replies.
    #[default]
    Fork,
    /// Run the whole prefix again, its reads answered from the base run's rows
    /// (sim/world/read_replay.rs): explore as it was before issue 47.
    Reads,
    /// Run the whole prefix again, every statement on SQLite: the runs made one by one.
    None,
}

/// A finished (or interrupted) exploration.
pub struct Exploration {
    pub scenario: String,
    pub seed: u64,
    pub variants: Vec<String>,
    /// Scripted crashes and hangs of the scenario set aside.
    pub set_aside: usize,
    pub base_headline: String,
    pub base_hash: String,
    pub base_statements: u64,
    /// The trace of the base run with the launcher, when conductor points are explored.
    pub launcher_hash: Option<String>,
    pub points: usize,
    /// Of `points`, the conductor's.
    pub conductor_points: usize,
    /// Points the base run reached (of every session).
    pub points_in_run: usize,
    /// What each point got: `crash before and after each point`, …
    pub faults_placed: String,
    pub planned: usize,
    /// The finished runs, in job order.
    pub rows: Vec<PointRow>,
    pub failures: Vec<DistinctFailure>,
    /// What the base run and every finished run exercised.
    pub coverage: Coverage,
    pub interrupted: bool,
    /// Runs started from a snapshot of the base run, and of them those that parted from it
    /// before the snapshot and were made again from the start (none, while the argument of
    /// sim/run/fork.rs holds). Counted, never written to an output.
    pub forked: usize,
    pub parted: usize,
    /// What the runs shared of the base run's prefix (`--prefix`), which the `prefix` line says.
    pub prefix: Prefix,
}

impl Exploration {
    pub fn complete(&self) -> bool {
        self.rows.len() == self.planned
    }

    /// A harness error in any run (3), else a distinct failure (1), else a pass.
    pub fn outcome(&self) -> RunOutcome {
        crate::campaign::outcome(self.rows.iter().any(|r| r.outcome == PointOutcome::Ran(RunOutcome::Error)), !self.failures.is_empty())
    }
}

/// The scenario's document with its scripted faults set aside (and how many), parsed; bad
/// input, with file:line:col, before anything runs or is written.
fn base_document(options: &ExploreOptions) -> Result<(toml::Table, usize, Scenario)> {
    let path = &options.scenario;
    Scenario::load(path)?;
    let text = crate::base::input_file::read_text(path, "scenario")?;
    let (mut base_doc, set_aside) = document::base(&text, path, options.keep_faults)?;
    document::set_profile(&mut base_doc, options.protocol.as_deref())?;
    let base_scenario = document::scenario(&base_doc, path)?;
    Ok((base_doc, set_aside, base_scenario))
}

/// `--list-points`: the base run's points `--sessions` and `--points` choose, as CSV
/// (`point,session,statement,nth,prefix_statements`), without exploring them or writing
/// anything: what to give `--points`, and what a test derives its expectations from.
pub fn list_points(options: &ExploreOptions) -> Result<String> {
    let (_, _, base_scenario) = base_document(options)?;
    let scratch = crate::base::scratch::scratch_folder("explore-", options.scratch.as_deref(), &std::env::temp_dir())?;
    let (_, seen, _) = run_base(&base_scenario, options, scratch.path(), false)?;
    let points = points::select(&points::points(&seen), &options.sessions, &options.points)?;
    let mut out = String::from("point,session,statement,nth,prefix_statements\n");
    for (number, p) in points {
        out.push_str(&format!("{number},{},{},{},{}\n", p.target.name(), p.statement, p.nth, p.statements_before));
    }
    Ok(out)
}

pub fn explore_crashes(options: &ExploreOptions) -> Result<Exploration> {
    assert!(options.jobs >= 1);
    let path = &options.scenario;
    let (base_doc, set_aside, base_scenario) = base_document(options)?;
    let campaign = Campaign::open(&folder_spec(options))?;
    let scratch = campaign.scratch();
    let (base, seen, (base_reads, base_fork)) = run_base(&base_scenario, options, scratch, options.prefix == Prefix::Fork)?;
    let all_points = points::points(&seen);
    let points = points::select(&all_points, &options.sessions, &options.points)?;
    let classes: Vec<HangClass> = if options.faults.contains(&FaultName::Hang) { HangClass::ALL.to_vec() } else { Vec::new() };
    let jobs: Vec<(usize, Job)> = points::jobs(&points, &options.faults, &classes).into_iter().enumerate().collect();
    let conductor_points = points.iter().filter(|(_, p)| p.target.is_conductor()).count();
    let launcher = match conductor_points {
        0 => None,
        _ => Some(run_with_launcher(&base_scenario, options, scratch)?),
    };
    let launcher_hash = launcher.as_ref().map(|(summary, _, _)| summary.trace_hash.clone());
    let (launcher_reads, launcher_fork) = match launcher {
        Some((_, reads, fork)) => (Some(reads), fork),
        None => (None, None),
    };
    let explorer = Explorer {
        options,
        base_doc,
        seed: base.seed,
        base_hash: base.trace_hash.clone(),
        launcher_hash: launcher_hash.clone(),
        base_reads,
        launcher_reads,
        base_fork,
        launcher_fork,
        forked: Default::default(),
        parted: Default::default(),
        hang_ms: classes.iter().map(|c| (*c, c.duration_ms(&base_scenario))).collect(),
        scratch,
        file_sha256: document::file_sha256(path),
    };
    let (rows, ran, coverage) = collect(explorer.run_all(&campaign, &jobs)?, &jobs, base.coverage.clone());
    let mut exploration = Exploration {
        scenario: path.display().to_string(),
        seed: base.seed,
        variants: options.variants.clone(),
        set_aside,
        base_headline: base.verdict.headline(),
        base_hash: base.trace_hash.clone(),
        base_statements: base.statements,
        launcher_hash,
        points: points.len(),
        conductor_points,
        points_in_run: all_points.len(),
        faults_placed: faults_placed(&options.faults, &classes),
        planned: jobs.len(),
        rows,
        failures: Vec::new(),
        coverage,
        interrupted: crate::base::interrupt::interrupted(),
        forked: explorer.forked.load(std::sync::atomic::Ordering::Relaxed),
        parted: explorer.parted.load(std::sync::atomic::Ordering::Relaxed),
        prefix: options.prefix,
    };
    exploration.failures = crate::campaign::group(&mut exploration.rows);
    for failure in &exploration.failures {
        explorer.save_failure(failure, &ran[failure.first_row], &exploration)?;
    }
    write_outputs(&campaign, &exploration)?;
    Ok(exploration)
}

/// The output folder, with `failures/` (sim/campaign/folder.rs): what an exploration writes
/// there besides what every campaign does.
fn folder_spec(options: &ExploreOptions) -> FolderSpec<'_> {
    FolderSpec {
        name: "explore",
        out: &options.out,
        owned: &["explore.csv", "coverage.csv", "summary.md"],
        folders: &["failures"],
        journal: Some(JOURNAL),
        force: options.force,
        scratch: options.scratch.as_deref(),
    }
}

/// The finished runs' rows and jobs, in job order, and the coverage of them all and the base
/// run's (`coverage`).
fn collect(
    finished: Vec<Option<(PointRow, Coverage)>>,
    jobs: &[(usize, Job)],
    mut coverage: Coverage,
) -> (Vec<PointRow>, Vec<Job>, Coverage) {
    let (mut rows, mut ran) = (Vec::new(), Vec::new());
    for (result, (_, job)) in finished.into_iter().zip(jobs) {
        if let Some((row, run_coverage)) = result {
            coverage.merge(&run_coverage);
            rows.push(row);
            ran.push(*job);
        }
    }
    (rows, ran, coverage)
}

/// summary.md's line on what was placed: `crash before and after each point, hangs (short,
/// threshold, long) before and after a musician session's, …`, kinds in `FaultName::ALL` order.
fn faults_placed(kinds: &[FaultName], classes: &[HangClass]) -> String {
    let placed = FaultName::ALL.into_iter().filter(|n| kinds.contains(n));
    let what: Vec<String> = placed
        .enumerate()
        .map(|(i, name)| {
            let whose = match (i, name.strikes_conductor()) {
                (_, true) => "each point",
                (0, false) => "each musician session's point",
                _ => "a musician session's",
            };
            let names: Vec<&str> = classes.iter().map(|c| c.name()).collect();
            let classes = if name == FaultName::Hang { format!(" ({})", names.join(", ")) } else { String::new() };
            format!("{}{classes} before and after {whose}", name.phrase())
        })
        .collect();
    what.join(", ")
}

/// A base run's statements with their rows, which the explored runs share up to where they
/// part (sim/world/read_replay.rs), and its snapshots, which they are forked from
/// (sim/run/fork.rs; with `--prefix fork`).
type BaseRecord = (Arc<BaseRun>, Option<Arc<ForkBase>>);

/// The base run, its fault plan recording every point it reaches, and its record (`BaseRecord`).
fn run_base(
    scenario: &Scenario,
    options: &ExploreOptions,
    scratch: &Path,
    snapshots: bool,
) -> Result<(RunSummary, Vec<crate::plan::faults::PointSeen>, BaseRecord)> {
    let mut plan = RunPlan::resolve(scenario, options.seed, &options.variants, Some(scratch.join("base")))?;
    let log = plan.faults.record_points();
    let (summary, record) = run_recorded(plan, snapshots)?;
    Ok((summary, log.take(), record))
}

/// The base run as a launcher starts the conductor: what a conductor crash that never fires
/// leaves (the launcher is an actor of its own, with its own rows in the trace), and its
/// record, which a conductor crash's run shares up to its point.
fn run_with_launcher(
    scenario: &Scenario,
    options: &ExploreOptions,
    scratch: &Path,
) -> Result<(RunSummary, Arc<BaseRun>, Option<Arc<ForkBase>>)> {
    let mut plan = RunPlan::resolve(scenario, options.seed, &options.variants, Some(scratch.join("launcher")))?;
    plan.launcher = true;
    let (summary, (reads, fork)) = run_recorded(plan, options.prefix == Prefix::Fork)?;
    let _ = std::fs::remove_dir_all(scratch.join("launcher"));
    Ok((summary, reads, fork))
}

/// Runs a base run recording its statements, and with `snapshots` taking them: it then keeps
/// only its trace's hash, as the runs forked from it do (a snapshot's observers are a hash
/// so far, sim/run/fork.rs); its summary is the same either way.
fn run_recorded(plan: RunPlan, snapshots: bool) -> Result<(RunSummary, BaseRecord)> {
    let keep = if snapshots { crate::run::Keep::Hash } else { crate::run::Keep::Everything };
    let how = crate::run::Execution { record_base: true, take_snapshots: snapshots, keep, ..Default::default() };
    let executed = crate::run::execute(plan, how)?;
    let fork = executed.fork_base.filter(|base| !base.snapshots.is_empty()).map(Arc::new);
    Ok((executed.summary, (Arc::new(executed.base_run.unwrap_or_default()), fork)))
}

/// explore.csv, coverage.csv, summary.md, and the marker while runs are missing.
fn write_outputs(campaign: &Campaign, exploration: &Exploration) -> Result<()> {
    let missing = format!("{} of {} runs finished: interrupted (Ctrl-C)", exploration.rows.len(), exploration.planned);
    let out = campaign.out();
    campaign.finish((!exploration.complete()).then_some(&missing), || {
        report::write_csv(&out.join("explore.csv"), &exploration.rows)?;
        exploration.coverage.write(&out.join("coverage.csv"))?;
        write_atomically(&out.join("summary.md"), exploration.summary_md().as_bytes())
    })
}
