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
//! Prefix sharing is done for reads only: an explored run answers each read from the base
//! run's rows while every statement it has executed is the base run's (sim/world/read_replay.rs),
//! and runs its writes, actors, trace and oracles as before. Whole prefix sharing is not done.
//! Every explored run repeats the base run up to its point, and
//! starting it from a snapshot there would skip that work; but a snapshot of a run is more
//! than its `comms.db` (which SQLite's backup API could copy): it is the executor's queue and
//! every actor's suspended `async` future, and an actor's whole memory is its future
//! (ARCHITECTURE.md), which Rust can neither clone nor serialize. Sharing would need the
//! actors rewritten as explicit, cloneable state machines, or a fork of the whole process at
//! each point (AFL's fork server) — with the worker threads of a parallel exploration and a
//! live SQLite connection in it, not something that stays deterministic and safe. Instead
//! each row records the statements before its point, and the summary says how many of all
//! the statements run that is: what sharing would have saved.

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
    let (_, seen, _) = run_base(&base_scenario, options, scratch.path())?;
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
    let (base, seen, base_reads) = run_base(&base_scenario, options, scratch)?;
    let all_points = points::points(&seen);
    let points = points::select(&all_points, &options.sessions, &options.points)?;
    let classes: Vec<HangClass> = if options.faults.contains(&FaultName::Hang) { HangClass::ALL.to_vec() } else { Vec::new() };
    let jobs: Vec<(usize, Job)> = points::jobs(&points, &options.faults, &classes).into_iter().enumerate().collect();
    let conductor_points = points.iter().filter(|(_, p)| p.target.is_conductor()).count();
    let launcher = match conductor_points {
        0 => None,
        _ => Some(run_with_launcher(&base_scenario, options, scratch)?),
    };
    let launcher_hash = launcher.as_ref().map(|(summary, _)| summary.trace_hash.clone());
    let explorer = Explorer {
        options,
        base_doc,
        seed: base.seed,
        base_hash: base.trace_hash.clone(),
        launcher_hash: launcher_hash.clone(),
        base_reads,
        launcher_reads: launcher.map(|(_, reads)| reads),
        hang_ms: classes.iter().map(|c| (*c, c.duration_ms(&base_scenario))).collect(),
        scratch,
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

/// The base run, its fault plan recording every point it reaches, and every statement it
/// executed with its rows, which the explored runs share up to where they part
/// (sim/world/read_replay.rs).
fn run_base(
    scenario: &Scenario,
    options: &ExploreOptions,
    scratch: &Path,
) -> Result<(RunSummary, Vec<crate::plan::faults::PointSeen>, Arc<BaseRun>)> {
    let mut plan = RunPlan::resolve(scenario, options.seed, &options.variants, Some(scratch.join("base")))?;
    let log = plan.faults.record_points();
    let executed = crate::run::execute(plan, recording_base())?;
    Ok((executed.summary, log.take(), Arc::new(executed.base_run.unwrap_or_default())))
}

/// The base run as a launcher starts the conductor: what a conductor crash that never fires
/// leaves (the launcher is an actor of its own, with its own rows in the trace), and its
/// statements, which a conductor crash's run shares up to its point.
fn run_with_launcher(scenario: &Scenario, options: &ExploreOptions, scratch: &Path) -> Result<(RunSummary, Arc<BaseRun>)> {
    let mut plan = RunPlan::resolve(scenario, options.seed, &options.variants, Some(scratch.join("launcher")))?;
    plan.launcher = true;
    let executed = crate::run::execute(plan, recording_base())?;
    let _ = std::fs::remove_dir_all(scratch.join("launcher"));
    Ok((executed.summary, Arc::new(executed.base_run.unwrap_or_default())))
}

fn recording_base() -> crate::run::Execution<'static> {
    crate::run::Execution { record_base: true, ..Default::default() }
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
