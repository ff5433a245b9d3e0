//! `rehearsal sweep`: every (scenario, seed) pair, on N threads, with results identical
//! whatever N is. Writes `results.csv`, `junit.xml` and one replay file (plus the run
//! folder) per failure under `failures/`. A panic or harness error in one pair is recorded
//! for that pair; the others carry on. Sharding (`--shard I/N`) runs a fixed, disjoint slice.

use std::fmt::Write as _;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use crate::base::atomic::write_atomically;
use crate::base::error::{Error, Result};
use crate::campaign::{Campaign, FolderSpec};
use crate::input::scenario::Scenario;
use crate::judging::coverage::{self, Coverage, Item, Required};
use crate::judging::oracle::{quantiles, Measurements};
use crate::run::{execute, run_scenario, Execution, Keep, RunOptions, RunSummary};
use crate::vocab::RunOutcome;

#[derive(Clone, Debug)]
pub struct SweepOptions {
    pub scenarios: Vec<PathBuf>,
    /// The seeds of every scenario, as runs (never listed whole); empty: each scenario's own
    /// `run.seed` (the shipped suite as the golden file runs it).
    pub seeds: crate::base::seed_set::SeedSet,
    /// `--protocol NAME`: the profile every pair runs, in place of its scenario's own.
    pub protocol: Option<String>,
    pub variants: Vec<String>,
    pub jobs: usize,
    /// 1-based (I, N).
    pub shard: Option<(usize, usize)>,
    pub fail_fast: bool,
    pub check_determinism: bool,
    pub out: PathBuf,
    /// Print a progress line every this many pairs (stderr).
    pub progress_every: usize,
    /// `--require-coverage`: what the pairs together must reach (sim/judging/coverage/required.rs).
    pub require_coverage: Option<PathBuf>,
    /// Replace what an earlier command left in `out` (refused without it: sim/base/out_folder.rs).
    pub force: bool,
    /// `--sql FILE`: the protocol SQL every pair runs, in place of its scenario's own.
    pub sql: Option<PathBuf>,
    /// `--scratch DIR`: where the pairs' runs are made and removed (sim/base/scratch.rs).
    pub scratch: Option<PathBuf>,
    /// `--baseline FILE`: judge the pairs against it (sim/campaign/baseline.rs); with `bless`, write it.
    pub baseline: Option<PathBuf>,
    pub bless: bool,
    /// `--require-faults-fired`: fail when a declared fault kind or a scripted fault never
    /// fired in any pair of its scenario (sim/campaign/fault_proof.rs).
    pub require_faults_fired: bool,
    /// `--keep-known`: keep the run folder of a failure the baseline knows too (by default it
    /// is a line of `failures/known.txt`: pair, rules, replay command).
    pub keep_known: bool,
}

/// No scenario, each scenario's own seed, one job, nothing optional: what a caller that
/// needs a few fields (`merge` listing a shard's pairs, tests) starts from.
impl Default for SweepOptions {
    fn default() -> Self {
        SweepOptions {
            scenarios: Vec::new(),
            seeds: crate::base::seed_set::SeedSet::default(),
            protocol: None,
            variants: Vec::new(),
            jobs: 1,
            shard: None,
            fail_fast: false,
            check_determinism: false,
            out: PathBuf::new(),
            progress_every: 0,
            require_coverage: None,
            force: false,
            sql: None,
            scratch: None,
            baseline: None,
            bless: false,
            require_faults_fired: false,
            keep_known: false,
        }
    }
}

/// One row of results.csv.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultRow {
    pub scenario: String,
    pub variant: String,
    pub seed: u64,
    /// pass | fail | error: read back, any other text is refused naming the file and line.
    pub verdict: RunOutcome,
    pub first_violation: String,
    /// Every rule the run violated (allowed and expected ones included), sorted, joined by
    /// `,`: what a baseline compares (sim/campaign/baseline.rs).
    #[serde(default)]
    pub rules: String,
    pub sim_time_ms: i64,
    pub statements: u64,
    pub trace_hash: String,
    pub replay: String,
    /// The SQL the pair ran: its files and the hash of its statements.
    #[serde(default)]
    pub sql: String,
    /// Empty, or the verdict's line naming the conductor or session that ended on SQLITE_BUSY
    /// or an I/O error (sim/judging/collapse.rs, docs/protocol.md C62).
    #[serde(default)]
    pub collapsed: String,
    /// Each declared fault kind's armed sources, `crash=1;hang=2` (sim/plan/census.rs).
    #[serde(default)]
    pub faults_armed: String,
    /// How many times each declared kind struck, `crash=3;hang=0`.
    #[serde(default)]
    pub faults_fired: String,
    /// The scripted entries that never struck, `crash[2];io_error[1]`.
    #[serde(default)]
    pub faults_unreached: String,
}

impl ResultRow {
    /// What a baseline compares of this row (sim/campaign/baseline.rs).
    pub fn outcome(&self) -> crate::campaign::baseline::Outcome<'_> {
        crate::campaign::baseline::Outcome {
            scenario: &self.scenario,
            variant: &self.variant,
            seed: self.seed,
            verdict: self.verdict,
            rules: &self.rules,
            first_violation: &self.first_violation,
        }
    }

    pub(crate) fn key(&self) -> (String, String, u64) {
        (self.scenario.clone(), self.variant.clone(), self.seed)
    }
}

pub use crate::campaign::failure_file::Failure;

/// A finished pair: its row, the rules its verdict showed, its measurements, what it
/// exercised. `rehearsal merge` makes them again from a shard's files (sim/campaign/merge.rs).
pub(crate) struct PairOutcome {
    pub(crate) row: ResultRow,
    pub(crate) rules: Vec<String>,
    pub(crate) measured: Measurements,
    pub(crate) coverage: Coverage,
    /// How long the pair took on the wall clock (junit.xml only).
    pub(crate) wall: std::time::Duration,
}

/// Parses `I/N` (1-based, I in 1..=N).
pub fn parse_shard(text: &str) -> Result<(usize, usize)> {
    let bad = || Error::input(format!("shard `{text}`: expected I/N with 1 <= I <= N, e.g. 2/4"));
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if n == 0 || i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// results.csv's `variant` column: `default`, or the `--protocol` profile and the
/// `--variant`s joined by `+` (`repaired`, `repaired+strict-terminal`, `fencing`).
pub(crate) fn variant_label(protocol: Option<&str>, variants: &[String]) -> String {
    let words: Vec<&str> = protocol.into_iter().chain(variants.iter().map(String::as_str)).collect();
    if words.is_empty() {
        "default".to_string()
    } else {
        words.join("+")
    }
}

pub fn write_results(path: &Path, rows: &[ResultRow]) -> Result<()> {
    crate::base::csv_rows::write_rows(path, rows)
}

/// The rows of a sweep's results.csv, with the rows of finished pairs that only its journal
/// holds (a sweep killed between two checkpoints of results.csv), sorted as results.csv is.
pub fn read_results(path: &Path) -> Result<Vec<ResultRow>> {
    let mut rows: Vec<ResultRow> = crate::campaign::read_rows(path, &path.with_file_name(JOURNAL))?;
    rows.sort_by_key(ResultRow::key);
    rows.dedup_by_key(|row| row.key());
    Ok(rows)
}

/// The journal of a sweep's finished pairs, beside results.csv (sim/base/results_journal.rs).
pub const JOURNAL: &str = "results.journal.jsonl";

/// How long each pair took on the wall clock, by its results.csv key: JUnit's `time`. Only
/// junit.xml carries it; results.csv, which is compared byte for byte, does not.
pub type WallTimes = BTreeMap<(String, String, u64), std::time::Duration>;

/// JUnit XML (quick-junit): one test case per pair with its wall-clock time (0 for a pair
/// `times` lacks); a failure's text holds its replay command.
pub fn write_junit(
    path: &Path,
    rows: &[ResultRow],
    times: &WallTimes,
    baseline: Option<&crate::campaign::baseline::Comparison>,
) -> Result<()> {
    use crate::campaign::baseline::Judgement;
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new("rehearsal sweep");
    for (index, row) in rows.iter().enumerate() {
        let judgement = baseline.and_then(|b| b.of(index));
        let status = match (row.verdict, judgement) {
            (RunOutcome::Pass, _) => TestCaseStatus::success(),
            (_, Some(Judgement::Known { .. })) => {
                let mut status = TestCaseStatus::skipped();
                status.set_message(format!("known failure (baseline): {}", row.rules)).set_description(format!(
                    "seed {} fails as the baseline says: {}\nreproduce with: {}",
                    row.seed, row.first_violation, row.replay
                ));
                status
            }
            (kind, _) => {
                let mut status =
                    TestCaseStatus::non_success(if kind == RunOutcome::Fail { NonSuccessKind::Failure } else { NonSuccessKind::Error });
                let seconds = row.sim_time_ms as f64 / 1000.0;
                let message = match judgement {
                    Some(Judgement::Regression(why)) => format!("regression: {why}"),
                    _ => row.first_violation.clone(),
                };
                status.set_message(message).set_description(format!(
                    "seed {} failed after {seconds} simulated seconds: {}\nreproduce with: {}",
                    row.seed, row.first_violation, row.replay
                ));
                status
            }
        };
        let mut case = TestCase::new(case_name(row), status);
        case.set_classname(row.scenario.as_str());
        case.set_time(times.get(&row.key()).copied().unwrap_or_default());
        if row.verdict == RunOutcome::Pass && !row.rules.is_empty() {
            // A pass with violations its scenario allows or expects says so (issue 25).
            case.set_system_out(format!("PASS with known: {}", row.rules));
        }
        suite.add_test_case(case);
    }
    let mut report = Report::new("rehearsal");
    report.add_test_suite(suite);
    let xml = report.to_string().map_err(|e| Error::harness(format!("{}: {e}", path.display())))?;
    write_atomically(path, xml.as_bytes())
}

/// A pair's JUnit test case name.
fn case_name(row: &ResultRow) -> String {
    format!("{}/{}/seed-{}", row.scenario, row.variant, row.seed)
}

/// The row of a pair before it runs: an `error` with no violation yet.
fn error_row(scenario_path: &Path, seed: u64, options: &SweepOptions) -> ResultRow {
    ResultRow {
        scenario: scenario_path.display().to_string(),
        variant: variant_label(options.protocol.as_deref(), &options.variants),
        seed,
        verdict: RunOutcome::Error,
        first_violation: String::new(),
        rules: String::new(),
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
fn run_pair(scenario_path: &Path, seed: u64, options: &SweepOptions, run_dir: &Path, known: &Known) -> (ResultRow, Option<RunSummary>) {
    if options.check_determinism {
        return run_pair_keeping(scenario_path, seed, options, run_dir, Keep::Everything);
    }
    let (first, summary) = run_pair_keeping(scenario_path, seed, options, run_dir, Keep::Hash);
    // A pass, or a failure the baseline knows (kept as a line, issue 44): no folder to keep.
    if first.verdict == RunOutcome::Pass || known(&first) {
        return (first, summary);
    }
    // A fresh folder, as the first run had: the full run's files are its own alone.
    let _ = std::fs::remove_dir_all(run_dir);
    let (again, summary) = run_pair_keeping(scenario_path, seed, options, run_dir, Keep::Everything);
    if again == first || summary.is_none() {
        return (again, summary);
    }
    let mut row = error_row(scenario_path, seed, options);
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
    scenario_path: &Path,
    seed: u64,
    options: &SweepOptions,
    run_dir: &Path,
    keep: Keep,
) -> (ResultRow, Option<RunSummary>) {
    let mut row = error_row(scenario_path, seed, options);
    let attempt = |dir: &Path| -> Result<RunSummary> {
        let scenario = Scenario::load(scenario_path)?.with_sql(options.sql.as_deref()).with_profile(options.protocol.as_deref())?;
        let run_options = RunOptions {
            scenario_path: scenario_path.to_path_buf(),
            seed: Some(seed),
            out_dir: Some(dir.to_path_buf()),
            variants: options.variants.clone(),
        };
        execute(run_options.plan(&scenario)?, Execution { keep, ..Execution::default() }).map(|executed| executed.summary)
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
            row.rules = summary.verdict.rules().join(&crate::campaign::baseline::RULE_SEPARATOR.to_string());
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

/// The pairs of this sweep, in order, after sharding: (pair index, scenario, seed).
/// `own_seeds` holds each scenario's `run.seed`, for a sweep without `--seeds`. Pair `k` is
/// seed `k % seeds` of scenario `k / seeds`, so a shard's pairs are found by arithmetic and
/// only they are listed: a shard of 10^8 seeds costs its own share (issue 30).
pub fn pairs(options: &SweepOptions, own_seeds: &[u64]) -> Vec<(usize, PathBuf, u64)> {
    let per_scenario = if options.seeds.is_empty() { 1 } else { options.seeds.len() };
    let (i, n) = options.shard.unwrap_or((1, 1));
    let total = per_scenario * options.scenarios.len() as u128;
    let mut shard = Vec::new();
    let mut index = (i - 1) as u128;
    while index < total {
        let (scenario, k) = ((index / per_scenario) as usize, index % per_scenario);
        let seed = if options.seeds.is_empty() { own_seeds[scenario] } else { options.seeds.nth(k).expect("k < the seeds' count") };
        shard.push((index as usize, options.scenarios[scenario].clone(), seed));
        index += n as u128;
    }
    shard
}

/// How many pairs the whole sweep has, and how many its shard runs: without listing them.
pub fn pair_counts(options: &SweepOptions) -> (u128, u128) {
    let per_scenario = if options.seeds.is_empty() { 1 } else { options.seeds.len() };
    let total = per_scenario * options.scenarios.len() as u128;
    let (i, n) = options.shard.unwrap_or((1, 1));
    let own = (total + n as u128 - i as u128) / n as u128;
    (total, own)
}

/// Refuses a sweep whose shard runs more than `seed_set::MAX_RUNS` pairs, before anything is
/// listed or written: bad input, with the `--shard` that would bring it under.
fn check_pair_count(options: &SweepOptions) -> Result<()> {
    let (total, own) = pair_counts(options);
    let shards_needed = total.div_ceil(u128::from(crate::base::seed_set::MAX_RUNS));
    let what = format!(
        "--seeds {} over {} scenario(s){}",
        options.seeds,
        options.scenarios.len(),
        match options.shard {
            Some((i, n)) => format!(" in shard {i}/{n}"),
            None => String::new(),
        }
    );
    crate::base::seed_set::check_runs(own, &what, &format!(": split the sweep with --shard I/N, N >= {shards_needed}"))
}

pub struct SweepOutcome {
    pub rows: Vec<ResultRow>,
    /// Pairs the sweep should have run.
    pub planned: usize,
    /// Stopped by Ctrl-C: `rows` holds the pairs that finished.
    pub interrupted: bool,
    /// What the finished pairs exercised together.
    pub coverage: Coverage,
    /// The `--require-coverage` items they never reached.
    pub missing_coverage: Vec<Item>,
    /// The rows judged against `--baseline` (not when blessing it).
    pub baseline: Option<crate::campaign::baseline::Comparison>,
    /// `--bless`: the pairs written to the baseline file.
    pub blessed: Option<usize>,
    /// Under `--require-faults-fired`, what never fired (one line each); else empty.
    pub unfired: Vec<String>,
}

impl SweepOutcome {
    /// Every planned pair finished.
    pub fn complete(&self) -> bool {
        self.rows.len() == self.planned
    }

    /// The worst outcome of the finished pairs; a sweep that stopped early (`--fail-fast`)
    /// or left a required coverage item unreached fails even if every pair it ran passed.
    /// Ctrl-C is the caller's to report.
    pub fn outcome(&self) -> RunOutcome {
        let worst = match &self.baseline {
            Some(comparison) => crate::campaign::baseline::worst_against(&outcomes(&self.rows), comparison),
            None => worst_of(&self.rows),
        };
        if worst == RunOutcome::Pass && (!self.complete() || !self.missing_coverage.is_empty() || !self.unfired.is_empty()) {
            RunOutcome::Fail
        } else {
            worst
        }
    }
}

/// Passes that broke rules their scenario allows or expects: how many, and by rule how many
/// of them broke it. No command counts them as plain passes (issue 25).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KnownPasses {
    pub runs: usize,
    pub rules: BTreeMap<String, usize>,
}

impl KnownPasses {
    /// ` (budget ×3, liveness ×1)`, or nothing.
    pub fn rules_text(&self) -> String {
        crate::campaign::baseline::counted(&self.rules)
    }
}

/// The clean passes of some rows, and their passes with known violations.
pub fn passes(rows: &[ResultRow]) -> (usize, KnownPasses) {
    let mut known = KnownPasses::default();
    let mut clean = 0;
    for row in rows.iter().filter(|r| r.verdict == RunOutcome::Pass) {
        let rules = crate::campaign::baseline::split_rules(&row.rules);
        if rules.is_empty() {
            clean += 1;
        } else {
            known.runs += 1;
            for rule in rules {
                *known.rules.entry(rule).or_insert(0) += 1;
            }
        }
    }
    (clean, known)
}

/// What a baseline compares of each row.
pub fn outcomes(rows: &[ResultRow]) -> Vec<crate::campaign::baseline::Outcome<'_>> {
    rows.iter().map(ResultRow::outcome).collect()
}

/// The worst outcome of some rows (an error over a failure over a pass).
pub fn worst_of(rows: &[ResultRow]) -> RunOutcome {
    RunOutcome::worst(rows.iter().map(|r| r.verdict))
}

/// A file in the sweep folder while results.csv holds fewer pairs than the sweep planned:
/// the sweep is running, was interrupted or killed, or stopped at the first failure.
/// `merge` refuses such a folder.
pub use crate::campaign::INCOMPLETE_MARKER;

/// A sweep's folder (sim/campaign/folder.rs): what it writes there besides what every
/// campaign does. `merge` owns the same.
pub(crate) fn folder_spec<'a>(out: &'a Path, force: bool, scratch: Option<&'a Path>) -> FolderSpec<'a> {
    FolderSpec {
        name: "sweep",
        out,
        owned: &[
            "results.csv",
            "junit.xml",
            "summary.md",
            "coverage.csv",
            crate::campaign::manifest::MANIFEST_FILE,
            crate::campaign::pair_details::PAIR_DETAILS_FILE,
        ],
        folders: &["failures"],
        journal: Some(JOURNAL),
        force,
        scratch,
    }
}

/// Writes results.csv with the pairs finished so far (sorted), and the marker saying how
/// many of how many: a sweep killed at any moment leaves whole files behind.
fn checkpoint(campaign: &Campaign, finished: &[ResultRow], planned: usize, why: &str) -> Result<()> {
    let mut rows = finished.to_vec();
    rows.sort_by_key(ResultRow::key);
    campaign.mark(&format!("{} of {planned} pairs finished: {why}", rows.len()))?;
    write_results(&campaign.out().join("results.csv"), &rows)
}

pub fn sweep(options: &SweepOptions) -> Result<SweepOutcome> {
    assert!(options.jobs >= 1);
    // Bad input stops the sweep before any pair runs.
    let protocol = options.protocol.as_deref();
    let loaded = options.scenarios.iter().map(|s| Scenario::load(s)?.with_profile(protocol)).collect::<Result<Vec<Scenario>>>()?;
    let own_seeds: Vec<u64> = loaded.iter().map(|s| s.run.seed).collect();
    // Every scenario's SQL (`--sql` over its own) prepared once before any pair: a bad file
    // is bad input (exit 2), not an error in every pair.
    for scenario in &options.scenarios {
        crate::campaign::replay::check(scenario, options.sql.as_deref(), protocol, &options.variants)?;
    }
    check_pair_count(options)?;
    let suite = crate::campaign::manifest::Suite::of(&loaded, &options.seeds, protocol, &options.variants, options.sql.as_deref())?;
    let required = options.require_coverage.as_deref().map(Required::load).transpose()?;
    let baseline =
        crate::campaign::baseline::for_sweep(options.baseline.as_deref(), options.bless, options.shard.is_some() || options.fail_fast)?;
    // Held until the sweep returns: a second command into this folder is refused meanwhile.
    // Saved failures of the sweep being replaced are replayed before they are cleared.
    let campaign = Campaign::open_with(&folder_spec(&options.out, options.force, options.scratch.as_deref()), |out| {
        replay_saved_failures(&out.join("failures"))
    })?;
    let work = pairs(options, &own_seeds);
    let planned = work.len();
    // Before any pair runs, so even a killed shard says what it was part of (sim/campaign/manifest.rs).
    let (shard, shards) = options.shard.unwrap_or((1, 1));
    let build = crate::campaign::manifest::BUILD_ID.to_string();
    crate::campaign::manifest::Manifest { shard, shards, pairs: planned, build, suite }.write(&options.out)?;
    if let (Some((i, n)), true) = (options.shard, options.progress_every > 0) {
        // The shard's own count: `--seeds` said how many seeds each scenario runs in all.
        eprintln!("rehearsal: shard {i}/{n}: {planned} of the sweep's {} pairs", pair_counts(options).0);
    }
    let running =
        format!("0 of {planned} pairs finished: the sweep is running, or was killed; the finished pairs are in results.csv and {JOURNAL}");
    let progress = crate::campaign::progress::Progress::new(planned, options.progress_every, "pairs");
    let checkpoint = |rows: &[ResultRow]| checkpoint(&campaign, rows, planned, "the sweep is running, or was stopped");
    let ledger = campaign.ledger(planned, &running, progress, checkpoint)?;
    let stop = AtomicBool::new(false);
    let done = |index: usize, pair: &PairOutcome| {
        let row = &pair.row;
        // Against a baseline, only a regression (or an error) stops a --fail-fast sweep.
        let stops = match (&baseline, &options.baseline) {
            (Some(baseline), Some(file)) => baseline.stops(&row.outcome(), file),
            _ => row.verdict != RunOutcome::Pass,
        };
        if options.fail_fast && stops {
            stop.store(true, Ordering::Relaxed);
        }
        ledger.record(index, row.clone());
    };
    let panicked = |pair: &(usize, PathBuf, u64), panic: &str| panicked(pair, options, panic);
    let known = |row: &ResultRow| match (&baseline, &options.baseline) {
        (Some(baseline), Some(file)) if !options.keep_known => row.verdict == RunOutcome::Fail && !baseline.stops(&row.outcome(), file),
        _ => false,
    };
    let run = |pair: &(usize, PathBuf, u64)| run_and_save(pair, options, campaign.scratch(), &known);
    let results = crate::campaign::map(options.jobs, &work, run, panicked, || stop.load(Ordering::Relaxed), done);
    let mut done_pairs: Vec<PairOutcome> = results.into_iter().flatten().collect();
    done_pairs.sort_by_key(|pair| pair.row.key());
    // `--bless` writes the file from every pair, then the pairs are judged against it like
    // any sweep's (all known, so only an error fails), and the outputs say so.
    let mut blessed = None;
    let mut baseline = baseline;
    if let (Some(file), true, true) = (&options.baseline, options.bless, done_pairs.len() == planned) {
        let rows: Vec<ResultRow> = done_pairs.iter().map(|pair| pair.row.clone()).collect();
        blessed = Some(crate::campaign::baseline::bless(&outcomes(&rows), file)?);
        baseline = Some(crate::campaign::baseline::Baseline::load(file)?);
    }
    let mut outcome = write_outputs(&campaign, options, done_pairs, planned, required.as_ref(), baseline.as_ref())?;
    outcome.blessed = blessed;
    if options.require_faults_fired {
        outcome.unfired = crate::campaign::fault_proof::unfired(&outcome.rows);
    }
    Ok(outcome)
}

/// A pair whose keeping (saving its failure, its reports) panicked: an `error` row.
fn panicked((_, scenario, seed): &(usize, PathBuf, u64), options: &SweepOptions, panic: &str) -> PairOutcome {
    let mut row = error_row(scenario, *seed, options);
    row.first_violation = format!("panic: {panic}");
    PairOutcome { row, rules: Vec::new(), measured: Measurements::default(), coverage: Coverage::default(), wall: Default::default() }
}

/// Runs one pair in its own folder under `scratch`; a pair that did not pass is saved under
/// `failures/` with its reports. The run folder is removed.
fn run_and_save((index, scenario, seed): &(usize, PathBuf, u64), options: &SweepOptions, scratch: &Path, known: &Known) -> PairOutcome {
    let seed = *seed;
    let stem = scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("scenario").to_string();
    let run_dir = scratch.join(format!("{index}-{stem}-{seed}"));
    // Wall-clock time for junit.xml only: no file compared byte for byte holds it.
    let started = std::time::Instant::now();
    let (row, summary) = run_pair(scenario, seed, options, &run_dir, known);
    let wall = started.elapsed();
    let rules = summary.as_ref().map(|s| s.verdict.rules().into_iter().map(String::from).collect()).unwrap_or_default();
    let measured = summary.as_ref().map(|s| s.measured.figures_only()).unwrap_or_default();
    let coverage = summary.as_ref().map(|s| s.coverage.clone()).unwrap_or_default();
    if row.verdict != RunOutcome::Pass && !known(&row) {
        let explanation = summary.as_ref().map(|s| s.verdict.explanation().join(" ")).unwrap_or_else(|| row.first_violation.clone());
        let kept = failure_folder(&options.out, &stem, options.protocol.as_deref(), &options.variants, seed);
        if let Some(summary) = &summary {
            // A failure gets the reports a person looks at; a pass does not. They are written
            // in the run folder before it is moved, so the kept folder appears whole: its
            // reports name the folder it is kept in and the replay file beside it.
            let mut kept_summary = summary.clone();
            kept_summary.replay = format!("rehearsal replay {}", crate::base::shell::quote_path(&kept.with_extension("toml")));
            kept_summary.out_dir = kept.clone();
            if let Err(e) = crate::report::write_run_reports(&run_dir, &kept_summary, &summary.resolved) {
                eprintln!("rehearsal: reports for seed {seed}: {e}");
            }
        }
        if let Err(e) = save_failure(&options.out, &stem, &row, &run_dir, options, &explanation) {
            eprintln!("rehearsal: could not save failure of seed {seed}: {e}");
        }
    }
    let _ = std::fs::remove_dir_all(&run_dir);
    PairOutcome { row, rules, measured, coverage, wall }
}

/// The sweep's files from the pairs that finished (sorted): summary.md, results.csv,
/// junit.xml, and the INCOMPLETE marker while fewer than `planned` finished.
fn write_outputs(
    campaign: &Campaign,
    options: &SweepOptions,
    done_pairs: Vec<PairOutcome>,
    planned: usize,
    required: Option<&Required>,
    baseline: Option<&crate::campaign::baseline::Baseline>,
) -> Result<SweepOutcome> {
    let interrupted = crate::base::interrupt::interrupted();
    let note = if done_pairs.len() < planned {
        format!(
            "**Incomplete**: {} of {planned} pairs finished ({}); the results below are those pairs only.\n\n",
            done_pairs.len(),
            if interrupted { "interrupted" } else { "stopped after the first failure" }
        )
    } else {
        String::new()
    };
    let mut coverage = Coverage::default();
    for pair in &done_pairs {
        coverage.merge(&pair.coverage);
    }
    let missing_coverage = required.map(|r| r.missing(&coverage)).unwrap_or_default();
    let rows: Vec<ResultRow> = done_pairs.iter().map(|pair| pair.row.clone()).collect();
    let comparison = match (baseline, &options.baseline) {
        (Some(baseline), Some(file)) => {
            let outcomes = outcomes(&rows);
            Some(crate::campaign::baseline::compare(&outcomes, &crate::campaign::baseline::keys_of(&outcomes, file)?, baseline, file))
        }
        _ => None,
    };
    let why = if interrupted { "interrupted (Ctrl-C)" } else { "stopped after the first failure (--fail-fast)" };
    let missing = format!("{} of {planned} pairs finished: {why}", done_pairs.len());
    let mut rows = Vec::new();
    // results.csv then holds every finished pair: the journal has nothing more to tell.
    campaign.finish((done_pairs.len() < planned).then_some(&missing), || {
        rows = write_files(&options.out, done_pairs, &coverage, required, &missing_coverage, &note, comparison.as_ref())?;
        Ok(())
    })?;
    Ok(SweepOutcome { rows, planned, interrupted, coverage, missing_coverage, baseline: comparison, blessed: None, unfired: Vec::new() })
}

/// A sweep folder's files from its pairs (sorted) and their coverage added up: summary.md,
/// coverage.csv, pairs.jsonl, results.csv (after them: its rows are what a reader trusts),
/// junit.xml. `rehearsal merge` writes through this too, so a merged folder's files are an
/// unsharded sweep's (junit.xml and pairs.jsonl differ only by wall times).
pub(crate) fn write_files(
    out: &Path,
    pairs: Vec<PairOutcome>,
    coverage: &Coverage,
    required: Option<&Required>,
    missing_coverage: &[Item],
    note: &str,
    baseline: Option<&crate::campaign::baseline::Comparison>,
) -> Result<Vec<ResultRow>> {
    let rows: Vec<ResultRow> = pairs.iter().map(|pair| pair.row.clone()).collect();
    let against = baseline.map(|c| crate::campaign::baseline::markdown(c, &outcomes(&rows))).unwrap_or_default();
    // Known failures are lines, not folders, unless the failures/ folder holds their folders
    // (`--keep-known`): a merge sees what its shards kept.
    let known_lines = baseline.is_some() && !keeps_known_folders(out, &rows, baseline);
    let summary = format!(
        "{note}{}{against}\n{}{}",
        sweep_summary(&pairs, baseline, known_lines),
        coverage::markdown(coverage),
        required_section(required, missing_coverage)
    );
    write_atomically(&out.join("summary.md"), summary.as_bytes())?;
    if let (Some(comparison), true) = (baseline, known_lines) {
        std::fs::create_dir_all(out.join("failures"))?;
        write_atomically(&out.join("failures").join(KNOWN_FILE), known_text(&rows, comparison).as_bytes())?;
    }
    coverage.write(&out.join("coverage.csv"))?;
    crate::campaign::pair_details::write(out, &pairs.iter().map(PairOutcome::details).collect::<Vec<_>>())?;
    let times: WallTimes = pairs.iter().map(|pair| (pair.row.key(), pair.wall)).collect();
    write_results(&out.join("results.csv"), &rows)?;
    write_junit(&out.join("junit.xml"), &rows, &times, baseline)?;
    Ok(rows)
}

/// Whether `out/failures/` holds the run folder of a known failure (`--keep-known`).
fn keeps_known_folders(out: &Path, rows: &[ResultRow], baseline: Option<&crate::campaign::baseline::Comparison>) -> bool {
    let Some(baseline) = baseline else { return false };
    rows.iter().enumerate().any(|(index, row)| {
        let known = matches!(baseline.of(index), Some(crate::campaign::baseline::Judgement::Known { .. }));
        let stem = Path::new(&row.scenario).file_stem().and_then(|s| s.to_str()).unwrap_or("scenario");
        known && out.join("failures").join(format!("{stem}-{}-{}.toml", row.variant, row.seed)).exists()
    })
}

impl PairOutcome {
    /// Its line of pairs.jsonl.
    fn details(&self) -> crate::campaign::pair_details::PairDetails {
        crate::campaign::pair_details::PairDetails {
            scenario: self.row.scenario.clone(),
            variant: self.row.variant.clone(),
            seed: self.row.seed,
            rules: self.rules.clone(),
            measured: self.measured.clone(),
            wall_ms: u64::try_from(self.wall.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// The summary.md lines on a `--require-coverage` file: how much of it was reached, and what
/// was not.
pub fn required_section(required: Option<&Required>, missing: &[Item]) -> String {
    let Some(required) = required else { return String::new() };
    let total = required.items.len();
    let mut md =
        format!("\n### Required coverage ({})\n\n{} of {total} required items reached.\n", required.path.display(), total - missing.len());
    for item in missing {
        md.push_str(&format!("- never reached: `{item}`\n"));
    }
    md
}

/// summary.md of a sweep: pass/fail per scenario and variant, violations by rule (runs
/// showing each), latency quantiles over all runs, links to each failure's run folder.
/// Latency quantiles, one table per (scenario, variant): runs of different scenarios, SQL or
/// variants are not pooled, since comparing them is the point of sweeping them together.
fn latency_tables(groups: &BTreeMap<(String, String), Vec<&PairOutcome>>) -> String {
    let mut md = String::from("\n## Latency quantiles by scenario and variant\n");
    for ((scenario, variant), group) in groups {
        let mut all = Measurements::default();
        // Finished pairs only: a cut-off run's latencies are truncated by its end (issue 31);
        // the designer figures below count those pairs apart.
        for PairOutcome { measured: m, .. } in group.iter().filter(|p| !p.measured.designer.cut_off) {
            all.message_notice_ms.extend(&m.message_notice_ms);
            all.review_resume_ms.extend(&m.review_resume_ms);
            all.crash_detect_ms.extend(&m.crash_detect_ms);
            all.heartbeat_age_s.extend(&m.heartbeat_age_s);
            all.exit_to_claim_ms.extend(&m.exit_to_claim_ms);
        }
        let sql = group.first().map_or("", |p| p.row.sql.as_str());
        let _ = write!(md, "\n### `{scenario}`, variant {variant}\n\n");
        if !sql.is_empty() {
            let _ = writeln!(md, "Protocol SQL: {sql}.\n");
        }
        md.push_str("| measurement | n | p50 | p95 | max |\n| --- | --- | --- | --- | --- |\n");
        for (name, sample) in all.named() {
            if let Some((p50, p95, max)) = quantiles(sample) {
                let _ = writeln!(md, "| {name} | {} | {p50} | {p95} | {max} |", sample.len());
            }
        }
        md.push_str(&crate::campaign::sweep_figures::markdown(&group.iter().map(|p| &p.measured.designer).collect::<Vec<_>>()));
    }
    md
}

impl SweepOutcome {
    /// The one stdout line on the pairs that did not pass (instead of a line each), pointing
    /// at where they are kept; `None` when every pair passed.
    pub fn failures_line(&self, out: &Path) -> Option<String> {
        let failed = self.rows.iter().filter(|r| r.verdict == RunOutcome::Fail).count();
        let errors = self.rows.iter().filter(|r| r.verdict == RunOutcome::Error).count();
        if failed + errors == 0 {
            return None;
        }
        let first =
            self.rows.iter().find(|r| r.verdict != RunOutcome::Pass).map(|r| format!("{} seed {}", r.scenario, r.seed)).unwrap_or_default();
        Some(format!(
            "failures     {failed} failed, {errors} error(s) of {} pairs (first: {first}); replay files and run folders in {}, listed in {}",
            self.rows.len(),
            out.join("failures").display(),
            out.join("summary.md").display()
        ))
    }
}

/// The file of known failures' lines under `failures/` (issue 44): one pair a line, with its
/// rules and the command that replays it.
pub const KNOWN_FILE: &str = "known.txt";

/// `failures/known.txt` of some rows judged against a baseline: its known failures.
fn known_text(rows: &[ResultRow], baseline: &crate::campaign::baseline::Comparison) -> String {
    let mut text = String::from("# Known failures (the baseline lists them): scenario variant seed rules, then the replay command.\n");
    for (index, row) in rows.iter().enumerate() {
        if row.verdict == RunOutcome::Fail && matches!(baseline.of(index), Some(crate::campaign::baseline::Judgement::Known { .. })) {
            let _ = writeln!(text, "{} {} {} {}\t{}", row.scenario, row.variant, row.seed, row.rules, row.replay);
        }
    }
    text
}

fn sweep_summary(pairs: &[PairOutcome], baseline: Option<&crate::campaign::baseline::Comparison>, known_lines: bool) -> String {
    let mut groups: BTreeMap<(String, String), Vec<&PairOutcome>> = BTreeMap::new();
    for pair in pairs {
        groups.entry((pair.row.scenario.clone(), pair.row.variant.clone())).or_default().push(pair);
    }
    // `pass` counts clean passes only; a pass that broke a rule its scenario allows or expects
    // is counted apart, as such (issue 25).
    let mut md = String::from("# Sweep summary\n\n| scenario | variant | pairs | pass | pass with known violations | fail | error | violations (runs showing each rule) |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for ((scenario, variant), group) in &groups {
        let count = |v: RunOutcome| group.iter().filter(|p| p.row.verdict == v).count();
        let known = group.iter().filter(|p| p.row.verdict == RunOutcome::Pass && !p.rules.is_empty()).count();
        let mut rules: BTreeMap<&str, usize> = BTreeMap::new();
        for pair in group {
            for rule in &pair.rules {
                *rules.entry(rule.as_str()).or_insert(0) += 1;
            }
        }
        let rules = if rules.is_empty() {
            "none".to_string()
        } else {
            rules.iter().map(|(r, n)| format!("{r} ×{n}")).collect::<Vec<_>>().join(", ")
        };
        let _ = writeln!(
            md,
            "| {scenario} | {variant} | {} | {} | {known} | {} | {} | {rules} |",
            group.len(),
            count(RunOutcome::Pass) - known,
            count(RunOutcome::Fail),
            count(RunOutcome::Error)
        );
    }
    let rows: Vec<ResultRow> = pairs.iter().map(|p| p.row.clone()).collect();
    md.push_str(&crate::campaign::fault_proof::markdown(&rows));
    md.push_str(&latency_tables(&groups));
    let known_at = |index: usize| matches!(baseline.and_then(|b| b.of(index)), Some(crate::campaign::baseline::Judgement::Known { .. }));
    let failed: Vec<&ResultRow> = pairs
        .iter()
        .enumerate()
        .filter(|(i, p)| p.row.verdict != RunOutcome::Pass && !(known_lines && known_at(*i)))
        .map(|(_, p)| &p.row)
        .collect();
    let known: Vec<&ResultRow> = pairs
        .iter()
        .enumerate()
        .filter(|(i, p)| p.row.verdict != RunOutcome::Pass && known_lines && known_at(*i))
        .map(|(_, p)| &p.row)
        .collect();
    if !known.is_empty() {
        let _ = writeln!(md, "\n## Known failures (baseline; a line each in failures/{KNOWN_FILE}, no run folder)\n");
        for row in &known {
            let _ = writeln!(md, "- `{}` {} seed {} — {}: `{}`", row.scenario, row.variant, row.seed, row.rules, row.replay);
        }
    }
    if !failed.is_empty() {
        md.push_str("\n## Failures\n\n");
        for row in failed {
            let stem = Path::new(&row.scenario).file_stem().and_then(|s| s.to_str()).unwrap_or("scenario");
            let name = format!("{stem}-{}-{}", row.variant, row.seed);
            let _ = writeln!(
                md,
                "- [{name}](failures/{name}/timeline.html) — {}: `{}` ([replay file](failures/{name}.toml))",
                row.first_violation, row.replay
            );
        }
    }
    md
}

/// Saved failures of an earlier sweep into the same folder run first, so a regression shows
/// before any new seed: each is reported as still failing, now passing, or diverged.
fn replay_saved_failures(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut saved: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
    saved.sort();
    for path in saved {
        let Ok(failure) = Failure::load(&path) else { continue };
        let scenario = match failure.load_scenario(&path) {
            Ok(scenario) => scenario,
            Err(e) => {
                eprintln!("rehearsal: saved failure {}: cannot run: {e}", path.display());
                continue;
            }
        };
        let Ok(scratch) = tempfile::tempdir() else { return };
        let options = RunOptions {
            scenario_path: scenario.path.clone(),
            seed: Some(failure.seed),
            out_dir: Some(scratch.path().to_path_buf()),
            variants: failure.variants.clone(),
        };
        let status = match run_scenario(scenario, &options) {
            Ok(s) if s.trace_hash == failure.trace_hash => "still fails the same way".to_string(),
            Ok(s) if s.verdict.passed() => "now passes".to_string(),
            Ok(s) => format!("diverged: now {}", s.verdict.headline()),
            Err(e) => format!("cannot run: {e}"),
        };
        eprintln!("rehearsal: saved failure {}: {status}", path.display());
    }
}

/// Where a failing pair's run folder is kept: `failures/<scenario>-<variant>-<seed>`.
fn failure_folder(out: &Path, stem: &str, protocol: Option<&str>, variants: &[String], seed: u64) -> PathBuf {
    out.join("failures").join(format!("{stem}-{}-{seed}", variant_label(protocol, variants)))
}

/// `failures/<scenario>-<seed>/` (the run folder, to look at) and then
/// `failures/<scenario>-<seed>.toml` (the replay file): each appears whole or not at all. The
/// folder is copied under a hidden name (the scratch folder is on another file system) and
/// renamed into place; the replay file, written last, says its folder is there.
fn save_failure(out: &Path, stem: &str, row: &ResultRow, run_dir: &Path, options: &SweepOptions, explanation: &str) -> Result<()> {
    let (variants, sql) = (&options.variants, options.sql.as_deref());
    let keep = failure_folder(out, stem, options.protocol.as_deref(), variants, row.seed);
    // Relative to the suite's root, with the content hashes: the file replays in any checkout.
    let (scenario, scenario_sha256, sql, sql_sha256) = Failure::describe(Path::new(&row.scenario), sql)?;
    let failure = Failure {
        scenario,
        scenario_sha256,
        named: String::new(),
        sql,
        sql_sha256,
        seed: row.seed,
        protocol: options.protocol.clone(),
        variants: variants.to_vec(),
        rule: row.first_violation.clone(),
        trace_hash: row.trace_hash.clone(),
        explanation: explanation.to_string(),
    };
    let text = format!(
        "# A failing run saved by `rehearsal sweep`; replay it with `rehearsal replay` on this file.\n{}",
        toml::to_string(&failure).map_err(|e| Error::harness(e.to_string()))?
    );
    if run_dir.exists() {
        move_whole(run_dir, &keep)?;
    }
    write_atomically(&keep.with_extension("toml"), text.as_bytes())
}

/// Moves the folder `from` to `to` (replacing it) so that `to` is never seen half made: a
/// rename where one works, else a copy under `.NAME.partial-PID` renamed into place. A
/// partial copy a killed sweep left is cleared with `failures/` by the next sweep's `--force`.
fn move_whole(from: &Path, to: &Path) -> Result<()> {
    let _ = std::fs::remove_dir_all(to);
    if crate::base::live_files::rename(from, to).is_ok() {
        return Ok(());
    }
    let name = to.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let partial = to.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    // Removed by an error or a Ctrl-C that ends the command before the rename (issue 41).
    let _live = crate::base::live_files::track([partial.clone()]);
    copy_dir(from, &partial).inspect_err(|_| drop(std::fs::remove_dir_all(&partial)))?;
    crate::base::live_files::rename(&partial, to)
        .map_err(|e| Error::harness(format!("cannot rename {} to {}: {e}", partial.display(), to.display())))
}

pub(crate) fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal_row(seed: u64) -> ResultRow {
        ResultRow {
            scenario: "scenarios/bench/ci-smoke.toml".into(),
            variant: "default".into(),
            seed,
            verdict: RunOutcome::Fail,
            first_violation: "liveness: a line\nwith a newline".into(),
            rules: "liveness".into(),
            sim_time_ms: 12,
            statements: 3,
            trace_hash: "ab".into(),
            replay: "rehearsal run x --seed 1".into(),
            sql: String::new(),
            collapsed: String::new(),
            faults_armed: String::new(),
            faults_fired: String::new(),
            faults_unreached: String::new(),
        }
    }

    /// Issue 30: a killed sweep's finished pairs are in results.csv or its journal, and a
    /// read gives each once, sorted as results.csv is.
    #[test]
    fn results_csv_and_the_journal_are_read_together_once_each_pair() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("results.csv");
        let journal = crate::base::results_journal::Journal::create(&dir.path().join(JOURNAL)).unwrap();
        for seed in [5, 1, 2] {
            journal.append(&journal_row(seed)).unwrap();
        }
        let seeds = || read_results(&csv).unwrap().into_iter().map(|r| r.seed).collect::<Vec<_>>();
        assert_eq!(seeds(), [1, 2, 5], "the journal alone");
        write_results(&csv, &[journal_row(1), journal_row(5)]).unwrap();
        journal.append(&journal_row(4)).unwrap();
        assert_eq!(seeds(), [1, 2, 4, 5]);
        assert_eq!(read_results(&csv).unwrap()[2], journal_row(4));
    }

    /// A results.csv (or journal) whose verdict is none of pass, fail, error is refused, with
    /// the file, the line and the value named: merge, baseline and replay read it.
    #[test]
    fn an_unknown_verdict_is_refused_naming_the_file_line_and_value() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("results.csv");
        write_results(&csv, &[journal_row(1), journal_row(2)]).unwrap();
        let text = std::fs::read_to_string(&csv).unwrap();
        let (head, tail) = text.split_once(",1,fail,").unwrap();
        std::fs::write(&csv, format!("{head},1,passed,{tail}")).unwrap();
        let error = read_results(&csv).unwrap_err();
        let message = error.to_string();
        assert!(matches!(error, Error::Input(_)), "bad input, exit 2: {error:?}");
        for part in [format!("{}:2: ", csv.display()), "unknown run outcome `passed`".into(), "pass, fail, error".into()] {
            assert!(message.contains(&part), "{part} in {message}");
        }

        std::fs::remove_file(&csv).unwrap();
        let journal = dir.path().join(JOURNAL);
        let line = serde_json::to_string(&journal_row(3)).unwrap().replace("\"fail\"", "\"maybe\"");
        std::fs::write(&journal, format!("{}\n{line}\n", serde_json::to_string(&journal_row(2)).unwrap())).unwrap();
        let message = read_results(&csv).unwrap_err().to_string();
        for part in [journal.display().to_string(), ":2:".to_string(), "`maybe`".into()] {
            assert!(message.contains(&part), "{part} in {message}");
        }
    }

    #[test]
    fn shards_are_disjoint_and_cover_every_pair() {
        let options = |shard| SweepOptions {
            scenarios: vec![PathBuf::from("a.toml"), PathBuf::from("b.toml")],
            seeds: crate::base::seed_set::SeedSet::parse("1..=7").unwrap(),
            shard,
            ..SweepOptions::default()
        };
        let all: Vec<usize> = pairs(&options(None), &[1, 2]).into_iter().map(|p| p.0).collect();
        let mut union: Vec<usize> = (1..=3).flat_map(|i| pairs(&options(Some((i, 3))), &[1, 2])).map(|p| p.0).collect();
        union.sort_unstable();
        assert_eq!(union, all);
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        let own = SweepOptions { seeds: Default::default(), ..options(None) };
        let seeds: Vec<(String, u64)> = pairs(&own, &[5, 9]).into_iter().map(|(_, s, seed)| (s.display().to_string(), seed)).collect();
        assert_eq!(seeds, [("a.toml".to_string(), 5), ("b.toml".to_string(), 9)], "without --seeds, each scenario's own");
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
