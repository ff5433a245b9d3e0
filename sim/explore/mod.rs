//! `rehearsal explore crashes`: instead of random seeds, every protocol point of one run. The
//! scenario runs once with its seed (the base run), and its fault plan records every point
//! it reaches: each statement each musician session ran, counted as scripted faults count
//! them (`points.rs`). Then, for each point, the same scenario runs with a crash of that
//! session before the statement and one after it (and, with `--hangs`, a hang of each length
//! class before it, `hang_class.rs`), as a scripted fault (`[[faults.crash]]`,
//! `[[faults.hang]]` with `at` and `nth`) added to the scenario's document (`document.rs`).
//! The scenario's own scripted crashes and hangs are set aside unless `--keep-faults`.
//!
//! Up to its point, a run with one added fault is the base run event for event: the plan
//! decides nothing differently before the fault fires. So a fault that never fires (a
//! statement that waited for the write lock, say, is asked twice and its first `after:` is
//! never answered) leaves the base run byte for byte: its outcome is `unreached`.
//! Runs are grouped (`outcome.rs`): passing, and each distinct failure — the same first
//! violated rule and the same task-row states in `comms.db` at the end — with a replay file
//! and the run folder of its first point; explore.csv has a row per run (`report.rs`).
//! Runs go through the sweep's pool (results in job order, whatever `--jobs`); Ctrl-C keeps
//! the finished runs, marked incomplete, and explore.csv is checkpointed as they finish.
//!
//! Prefix sharing is not done. Every explored run repeats the base run up to its point, and
//! starting it from a snapshot there would skip that work; but a snapshot of a run is more
//! than its `comms.db` (which SQLite's backup API could copy): it is the executor's queue and
//! every actor's suspended `async` future, and an actor's whole memory is its future
//! (ARCHITECTURE.md), which Rust can neither clone nor serialize. Sharing would need the
//! actors rewritten as explicit, cloneable state machines, or a fork of the whole process at
//! each point (AFL's fork server) — with the worker threads of a parallel exploration and a
//! live SQLite connection in it, not something that stays deterministic and safe. Instead
//! each row records the statements before its point, and the summary says how many of all
//! the statements run that is: what sharing would have saved.

mod document;
mod hang_class;
mod outcome;
mod points;
mod report;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use toml::Table;

pub use hang_class::HangClass;
pub use outcome::{DistinctFailure, PointRow};
pub use points::{parse_session, Target};
pub use report::read_csv;

use self::points::Job;
use crate::atomic::write_atomically;
use crate::coverage::Coverage;
use crate::error::{Error, Result};
use crate::plan::RunPlan;
use crate::pool::{Caught, Hooks};
use crate::run::RunSummary;
use crate::scenario::Scenario;
use crate::vocab::RunOutcome;

/// The marker of an exploration whose explore.csv holds fewer runs than planned.
pub const INCOMPLETE_MARKER: &str = "INCOMPLETE";

/// Finished runs between two checkpoints of explore.csv.
const CHECKPOINT_EVERY: usize = 25;

#[derive(Clone, Debug)]
pub struct ExploreOptions {
    pub scenario: PathBuf,
    /// The base run's seed (the scenario's `run.seed` unless given).
    pub seed: Option<u64>,
    pub variants: Vec<String>,
    /// Explore only these sessions' points (every session's when empty).
    pub sessions: Vec<Target>,
    /// Explore only the points with these numbers (explore.csv's `point`; all when empty).
    pub points: Vec<u64>,
    /// Also a hang of each length class before each point.
    pub hangs: bool,
    /// Keep the scenario's own scripted crashes and hangs.
    pub keep_faults: bool,
    pub jobs: usize,
    pub out: PathBuf,
    /// Where runs are made and removed (default: `/dev/shm` where it exists, else `out`).
    pub scratch: Option<PathBuf>,
    /// A progress line every this many runs (stderr).
    pub progress_every: usize,
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
    pub points: usize,
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
        if self.rows.iter().any(|r| r.outcome == "error") {
            RunOutcome::Error
        } else if self.failures.is_empty() {
            RunOutcome::Pass
        } else {
            RunOutcome::Fail
        }
    }
}

/// What every run of one exploration shares.
struct Explorer<'a> {
    options: &'a ExploreOptions,
    base_doc: Table,
    seed: u64,
    base_hash: String,
    hang_ms: Vec<(HangClass, i64)>,
    scratch: &'a Path,
}

pub fn explore_crashes(options: &ExploreOptions) -> Result<Exploration> {
    assert!(options.jobs >= 1);
    let path = &options.scenario;
    Scenario::load(path)?; // bad input, with file:line:col, before anything runs or is written
    let text = std::fs::read_to_string(path).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    let (base_doc, set_aside) = document::base(&text, path, options.keep_faults)?;
    let base_scenario = document::scenario(&base_doc, path)?;
    let scratch = prepare_folders(options)?;
    let (base, seen) = run_base(&base_scenario, options, scratch.path())?;
    let all_points = points::points(&seen);
    let points = points::select(&all_points, &options.sessions, &options.points)?;
    let classes: Vec<HangClass> = if options.hangs { HangClass::ALL.to_vec() } else { Vec::new() };
    let jobs: Vec<(usize, Job)> = points::jobs(&points, &classes).into_iter().enumerate().collect();
    let explorer = Explorer {
        options,
        base_doc,
        seed: base.seed,
        base_hash: base.trace_hash.clone(),
        hang_ms: classes.iter().map(|c| (*c, c.duration_ms(&base_scenario))).collect(),
        scratch: scratch.path(),
    };
    let (rows, ran, coverage) = collect(explorer.run_all(&jobs), &jobs, base.coverage.clone());
    let mut exploration = Exploration {
        scenario: path.display().to_string(),
        seed: base.seed,
        variants: options.variants.clone(),
        set_aside,
        base_headline: base.verdict.headline(),
        base_hash: base.trace_hash.clone(),
        base_statements: base.statements,
        points: points.len(),
        points_in_run: all_points.len(),
        faults_placed: faults_placed(&classes),
        planned: jobs.len(),
        rows,
        failures: Vec::new(),
        coverage,
        interrupted: crate::interrupt::interrupted(),
    };
    exploration.failures = outcome::group(&mut exploration.rows);
    for failure in &exploration.failures {
        explorer.save_failure(failure, &ran[failure.first_row], &exploration)?;
    }
    write_outputs(&options.out, &exploration)?;
    Ok(exploration)
}

/// The output folder (with `failures/`, emptied of an earlier exploration's) and the scratch
/// folder the runs are made in, removed when dropped.
fn prepare_folders(options: &ExploreOptions) -> Result<tempfile::TempDir> {
    std::fs::create_dir_all(options.out.join("failures"))
        .map_err(|e| Error::input(format!("cannot create {}: {e}", options.out.display())))?;
    clear_old_failures(&options.out.join("failures"))?;
    let in_folder = |parent: &Path| tempfile::Builder::new().prefix("explore-").tempdir_in(parent);
    if let Some(parent) = &options.scratch {
        return in_folder(parent).map_err(|e| Error::input(format!("cannot make a scratch folder in {}: {e}", parent.display())));
    }
    // A tmpfs where there is one: creating and deleting every run's files on a disk file
    // system costs more than the runs (230 s against 64 s for quickstart's 4594 runs).
    in_folder(Path::new(SHARED_MEMORY))
        .or_else(|_| in_folder(&options.out))
        .map_err(|e| Error::harness(format!("cannot make a scratch folder in {}: {e}", options.out.display())))
}

/// Linux's tmpfs for everyone: the default scratch folder's parent where it exists.
const SHARED_MEMORY: &str = "/dev/shm";

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

fn faults_placed(classes: &[HangClass]) -> String {
    let mut what = "crash before and after each point".to_string();
    if !classes.is_empty() {
        let names: Vec<&str> = classes.iter().map(|c| c.name()).collect();
        what.push_str(&format!(", hangs ({}) before it", names.join(", ")));
    }
    what
}

/// Replay files and run folders of an earlier exploration into the same folder go: the new
/// one numbers its failures afresh.
fn clear_old_failures(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('F') && name[1..].starts_with(|c: char| c.is_ascii_digit()) {
            let path = entry.path();
            if path.is_dir() {
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
        }
    }
    Ok(())
}

/// The base run, its fault plan recording every point it reaches.
fn run_base(scenario: &Scenario, options: &ExploreOptions, scratch: &Path) -> Result<(RunSummary, Vec<crate::faults::PointSeen>)> {
    let mut plan = RunPlan::resolve(scenario, options.seed, &options.variants, Some(scratch.join("base")))?;
    let log = plan.faults.record_points();
    let (summary, _) = crate::run::execute(plan, false)?;
    Ok((summary, log.take()))
}

impl Explorer<'_> {
    /// Every job on the pool; `None` for a job Ctrl-C kept from starting.
    fn run_all(&self, jobs: &[(usize, Job)]) -> Vec<Option<(PointRow, Coverage)>> {
        let finished: Mutex<Vec<(usize, PointRow)>> = Mutex::new(Vec::new());
        let on_done = |index: usize, caught: &Caught<(PointRow, Coverage)>| {
            let row = match caught {
                Ok((row, _)) => row.clone(),
                Err(panic) => panicked(&jobs[index].1, panic),
            };
            let mut finished = finished.lock().expect("no panics hold the lock");
            finished.push((index, row));
            let count = finished.len();
            if count.is_multiple_of(CHECKPOINT_EVERY) && count < jobs.len() {
                if let Err(e) = checkpoint(&self.options.out, &finished, jobs.len()) {
                    eprintln!("rehearsal: checkpoint of explore.csv: {e}");
                }
            }
            if self.options.progress_every > 0 && (count.is_multiple_of(self.options.progress_every) || count == jobs.len()) {
                eprintln!("rehearsal: {count}/{} runs done", jobs.len());
            }
        };
        let hooks = Hooks { should_stop: || false, on_done };
        let results = crate::pool::map_with(self.options.jobs, jobs, |(index, job)| self.run_job(*index, job), hooks);
        results
            .into_iter()
            .zip(jobs)
            .map(|(caught, (_, job))| caught.map(|caught| caught.unwrap_or_else(|panic| (panicked(job, &panic), Coverage::default()))))
            .collect()
    }

    /// The document of `job`'s run.
    fn document(&self, job: &Job) -> Table {
        let hang_ms = match job.fault {
            points::Fault::Hang(class) => self.hang_ms.iter().find(|(c, _)| *c == class).map_or(0, |(_, ms)| *ms),
            points::Fault::Crash(_) => 0,
        };
        document::with_fault(&self.base_doc, job, hang_ms)
    }

    /// Runs `job` into `dir` (the scenario named by its original path, as the base run).
    fn run(&self, job: &Job, dir: &Path) -> Result<RunSummary> {
        let scenario = document::scenario(&self.document(job), &self.options.scenario)?;
        let plan = RunPlan::resolve(&scenario, Some(self.seed), &self.options.variants, Some(dir.to_path_buf()))?;
        Ok(crate::run::execute(plan, false)?.0)
    }

    /// One run in its own scratch folder, removed after; a harness error is its row's.
    fn run_job(&self, index: usize, job: &Job) -> (PointRow, Coverage) {
        let dir = self.scratch.join(format!("run-{index}"));
        let result = self.run(job, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        match result {
            Ok(summary) => (PointRow::finished(job, &summary, &self.base_hash), summary.coverage),
            Err(e) => (PointRow { first_violation: format!("harness: {e}"), ..PointRow::of(job) }, Coverage::default()),
        }
    }

    /// A distinct failure's replay file (`failures/F1-rule.toml`) and the run folder of its
    /// first point with its reports (`failures/F1-rule/`), run again: runs are deterministic.
    fn save_failure(&self, failure: &DistinctFailure, job: &Job, exploration: &Exploration) -> Result<()> {
        let row = &exploration.rows[failure.first_row];
        let dir = self.options.out.join("failures");
        let header = replay_header(failure, row, exploration);
        let text = document::replay_file(&self.document(job), &header, self.seed, &self.options.variants, &self.options.scenario)?;
        write_atomically(&dir.join(format!("{}.toml", failure.file_stem())), text.as_bytes())?;
        let run_dir = dir.join(failure.file_stem());
        let summary = self.run(job, &run_dir)?;
        if summary.trace_hash != row.trace_hash {
            return Err(Error::harness(format!(
                "{}: the run again gave trace {} instead of {}",
                failure.id, summary.trace_hash, row.trace_hash
            )));
        }
        crate::report::write_run_reports(&run_dir, &summary, &summary.resolved)
    }
}

fn replay_header(failure: &DistinctFailure, row: &PointRow, exploration: &Exploration) -> String {
    let variants = if exploration.variants.is_empty() { String::new() } else { format!(" (variants {})", exploration.variants.join(", ")) };
    let set_aside = if exploration.set_aside > 0 { " The scenario's own scripted crashes and hangs are set aside." } else { "" };
    format!(
        "# Found by `rehearsal explore crashes` on {} seed {}{variants}: failure {}.\n\
         # A {} of {} at `{}` (its run number {} of the statement) fails `{}`; comms.db ends with {}.\n\
         # {} run(s) of the exploration fail this way (explore.csv).{set_aside}\n\
         # Run it with `rehearsal run` on this file: it fails the same way. To keep it as a regression,\n\
         # declare the rule under [expect] violations (as `rehearsal shrink` writes it).\n",
        exploration.scenario,
        exploration.seed,
        failure.id,
        row.fault,
        row.session,
        row.at(),
        row.nth,
        failure.first_violation,
        failure.end_states,
        failure.runs,
    )
}

/// A run whose keeping panicked: an `error` row.
fn panicked(job: &Job, panic: &str) -> PointRow {
    PointRow { first_violation: format!("panic: {panic}"), ..PointRow::of(job) }
}

/// explore.csv with the runs finished so far (in job order), and the marker saying how many
/// of how many: an exploration killed at any moment leaves whole files behind.
fn checkpoint(out: &Path, finished: &[(usize, PointRow)], planned: usize) -> Result<()> {
    let mut rows = finished.to_vec();
    rows.sort_by_key(|(index, _)| *index);
    let marker = format!("{} of {planned} runs finished: the exploration is running, or was stopped\n", rows.len());
    write_atomically(&out.join(INCOMPLETE_MARKER), marker.as_bytes())?;
    report::write_csv(&out.join("explore.csv"), &rows.into_iter().map(|(_, row)| row).collect::<Vec<_>>())
}

/// explore.csv, coverage.csv, summary.md, and the marker while runs are missing.
fn write_outputs(out: &Path, exploration: &Exploration) -> Result<()> {
    let marker = out.join(INCOMPLETE_MARKER);
    if !exploration.complete() {
        let why = format!("{} of {} runs finished: interrupted (Ctrl-C)\n", exploration.rows.len(), exploration.planned);
        write_atomically(&marker, why.as_bytes())?;
    }
    report::write_csv(&out.join("explore.csv"), &exploration.rows)?;
    exploration.coverage.write(&out.join("coverage.csv"))?;
    write_atomically(&out.join("summary.md"), exploration.summary_md().as_bytes())?;
    if exploration.complete() && marker.exists() {
        std::fs::remove_file(&marker)?;
    }
    Ok(())
}
