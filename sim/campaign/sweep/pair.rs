//! One pair of a sweep, isolated: run (again in full when it does not pass, so its folder
//! can be saved; twice with `--check-determinism`), judged into its results row, and a
//! failure saved under `failures/` (sim/campaign/sweep/saved.rs).

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};

use super::options::SweepOptions;
use super::plan::Pair;
use super::results::{variant_label, ResultRow, Rules};
use super::saved::{failure_folder, save_failure};
use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::judging::coverage::Coverage;
use crate::judging::oracle::Measurements;
use crate::run::{execute, Execution, Keep, RunOptions, RunSummary};
use crate::vocab::RunOutcome;

/// A finished pair: its row (with the rules its verdict showed), its measurements, what it
/// exercised. `rehearsal merge` makes them again from a shard's files (sim/campaign/merge.rs).
pub(crate) struct PairOutcome {
    pub(crate) row: ResultRow,
    pub(crate) measured: Measurements,
    pub(crate) coverage: Coverage,
    /// How long the pair took on the wall clock (junit.xml only).
    pub(crate) wall: std::time::Duration,
}

/// A scenario of the sweep, loaded and resolved (`--sql`, `--protocol`) once before any pair
/// runs: every pair plans its run from it, none reads the file again.
pub struct SweptScenario {
    /// As the command line named it (results.csv's `scenario`).
    pub path: PathBuf,
    pub scenario: Scenario,
}

impl SweptScenario {
    pub fn load(path: &Path, options: &SweepOptions) -> Result<SweptScenario> {
        let scenario = Scenario::load(path)?.with_sql(options.sql.as_deref()).with_profile(options.protocol.as_deref())?;
        Ok(SweptScenario { path: path.to_path_buf(), scenario })
    }
}

/// The row of a pair before it runs: an `error` with no violation yet.
fn error_row(scenario_path: &Path, seed: u64, options: &SweepOptions) -> ResultRow {
    ResultRow {
        scenario: scenario_path.display().to_string(),
        variant: variant_label(options.protocol.as_deref(), &options.variants),
        seed,
        verdict: RunOutcome::Error,
        first_violation: String::new(),
        rules: Rules::default(),
        sim_time_ms: 0,
        statements: 0,
        trace_hash: String::new(),
        replay: crate::base::shell::run_command(
            scenario_path,
            seed,
            options.protocol.as_deref(),
            &options.variants,
            options.sql.as_deref(),
        ),
        sql: String::new(),
        collapsed: String::new(),
        faults_armed: String::new(),
        faults_fired: String::new(),
        faults_unreached: String::new(),
    }
}

/// One pair, isolated: harness errors and panics become an `error` row. Most pairs pass,
/// and of a pass only its row, trace hash, coverage and measurements are kept: so a pair
/// runs first without writing its trace, and only one that does not pass runs again in
/// full, into `run_dir`, to be saved. The run is deterministic, so a second run that
/// finishes must give the first row (trace hash included); if not, the pair is an `error`
/// saying so. A second run that does not finish (an error only writing its files can cause,
/// like a full disk) gives its own `error` row, which names the cause. (A pass writes no
/// files, so a full scratch disk does not turn a pass into an error.)
fn run_pair(swept: &SweptScenario, seed: u64, options: &SweepOptions, run_dir: &Path, known: &Known) -> (ResultRow, Option<RunSummary>) {
    if options.check_determinism {
        return run_pair_keeping(swept, seed, options, run_dir, Keep::Everything);
    }
    let (first, summary) = run_pair_keeping(swept, seed, options, run_dir, Keep::Hash);
    // A pass, or a failure the baseline knows (kept as a line, issue 44): no folder to keep.
    if first.verdict == RunOutcome::Pass || known(&first) {
        return (first, summary);
    }
    // A fresh folder, as the first run had: the full run's files are its own alone.
    let _ = std::fs::remove_dir_all(run_dir);
    let (again, summary) = run_pair_keeping(swept, seed, options, run_dir, Keep::Everything);
    if again == first || summary.is_none() {
        return (again, summary);
    }
    let mut row = error_row(&swept.path, seed, options);
    row.first_violation = format!(
        "harness: nondeterminism: run again in full, the pair gave {} (trace {}) after {} (trace {})",
        again.verdict, again.trace_hash, first.verdict, first.trace_hash
    );
    (row, None)
}

/// Whether a finished pair is a failure the sweep's baseline knows, kept as a line of
/// `failures/known.txt` rather than a run folder (never with `--keep-known`).
pub(crate) type Known<'a> = dyn Fn(&ResultRow) -> bool + Sync + 'a;

/// `run_pair`'s one run (two with `--check-determinism`), leaving in `run_dir` what `keep`
/// says.
fn run_pair_keeping(
    swept: &SweptScenario,
    seed: u64,
    options: &SweepOptions,
    run_dir: &Path,
    keep: Keep,
) -> (ResultRow, Option<RunSummary>) {
    let mut row = error_row(&swept.path, seed, options);
    let attempt = |dir: &Path| -> Result<RunSummary> {
        let run_options = RunOptions {
            scenario_path: swept.path.clone(),
            seed: Some(seed),
            out_dir: Some(dir.to_path_buf()),
            variants: options.variants.clone(),
        };
        execute(run_options.plan(&swept.scenario)?, Execution { keep, ..Execution::default() }).map(|executed| executed.summary)
    };
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let first = attempt(run_dir)?;
        if options.check_determinism {
            let again_dir = run_dir.with_extension("again");
            let second = attempt(&again_dir)?;
            let same_db = std::fs::read(run_dir.join("comms.db"))? == std::fs::read(again_dir.join("comms.db"))?;
            let _ = std::fs::remove_dir_all(&again_dir);
            if first.trace_hash != second.trace_hash || !same_db {
                return Err(Error::harness(format!(
                    "nondeterminism: trace {} vs {}, comms.db equal: {same_db}",
                    first.trace_hash, second.trace_hash
                )));
            }
        }
        Ok(first)
    }));
    match outcome {
        Ok(Ok(summary)) => {
            row.verdict = if summary.verdict.passed() { RunOutcome::Pass } else { RunOutcome::Fail };
            row.first_violation =
                if summary.verdict.passed() { summary.verdict.first_rule().to_string() } else { summary.verdict.failure.clone() };
            row.rules = Rules::of(summary.verdict.rules());
            row.sim_time_ms = summary.makespan_ms;
            row.statements = summary.statements;
            row.trace_hash = summary.trace_hash.clone();
            row.sql = summary.sql.to_string();
            let collapses = &summary.measured.designer.collapses;
            row.collapsed = crate::judging::collapse::sentence(collapses, summary.tasks_complete, summary.tasks_total).unwrap_or_default();
            row.faults_armed = summary.faults.column(false);
            row.faults_fired = summary.faults.column(true);
            row.faults_unreached = summary.faults.unreached().join(";");
            (row, Some(summary))
        }
        Ok(Err(e)) => {
            row.first_violation = format!("harness: {e}");
            (row, None)
        }
        Err(panic) => {
            row.first_violation = format!("panic: {}", crate::base::panic_guard::panic_message(&*panic));
            (row, None)
        }
    }
}

/// A pair whose keeping (saving its failure, its reports) panicked: an `error` row.
pub(super) fn panicked(swept: &SweptScenario, seed: u64, options: &SweepOptions, panic: &str) -> PairOutcome {
    let mut row = error_row(&swept.path, seed, options);
    row.first_violation = format!("panic: {panic}");
    PairOutcome { row, measured: Measurements::default(), coverage: Coverage::default(), wall: Default::default() }
}

/// Runs one pair in its own folder under `scratch`; a pair that did not pass is saved under
/// `failures/` with its reports. The run folder is removed.
pub(super) fn run_and_save(pair: &Pair, swept: &SweptScenario, options: &SweepOptions, scratch: &Path, known: &Known) -> PairOutcome {
    let (index, seed) = (pair.index, pair.seed);
    let stem = swept.path.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario").to_string();
    let run_dir = scratch.join(format!("{index}-{stem}-{seed}"));
    // Wall-clock time for junit.xml only: no file compared byte for byte holds it.
    let started = std::time::Instant::now();
    let (row, summary) = run_pair(swept, seed, options, &run_dir, known);
    let wall = started.elapsed();
    let measured = summary.as_ref().map(|s| s.measured.figures_only()).unwrap_or_default();
    let coverage = summary.as_ref().map(|s| s.coverage.clone()).unwrap_or_default();
    if row.verdict != RunOutcome::Pass && !known(&row) {
        let explanation = summary.as_ref().map(|s| s.verdict.explanation().join(" ")).unwrap_or_else(|| row.first_violation.clone());
        let kept = failure_folder(&options.out, &stem, options.protocol.as_deref(), &options.variants, seed);
        if let Some(summary) = summary {
            // A failure gets the reports a person looks at; a pass does not. They are written
            // in the run folder before it is moved, so the kept folder appears whole: its
            // reports name the folder it is kept in and the replay file beside it.
            let replay = format!("rehearsal replay {}", crate::base::shell::quote_path(&kept.with_extension("toml")));
            let kept_summary = summary.kept_in(&kept, replay);
            if let Err(e) = crate::report::write_run_reports(&run_dir, &kept_summary, &kept_summary.resolved) {
                eprintln!("rehearsal: reports for seed {seed}: {e}");
            }
        }
        if let Err(e) = save_failure(&options.out, &stem, &row, &run_dir, options, &explanation) {
            eprintln!("rehearsal: could not save failure of seed {seed}: {e}");
        }
    }
    let _ = std::fs::remove_dir_all(&run_dir);
    PairOutcome { row, measured, coverage, wall }
}

impl PairOutcome {
    /// Its line of pairs.jsonl.
    pub(super) fn details(&self) -> crate::campaign::pair_details::PairDetails {
        crate::campaign::pair_details::PairDetails {
            scenario: self.row.scenario.clone(),
            variant: self.row.variant.clone(),
            seed: self.row.seed,
            rules: self.row.rules.0.clone(),
            measured: self.measured.clone(),
            wall_ms: u64::try_from(self.wall.as_millis()).unwrap_or(u64::MAX),
        }
    }
}
