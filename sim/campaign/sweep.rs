//! `rehearsal sweep`: every (scenario, seed) pair, on N threads, with results identical
//! whatever N is. Writes `results.csv`, `junit.xml` and one replay file (plus the run
//! folder) per failure under `failures/`. A panic or harness error in one pair is recorded
//! for that pair; the others carry on. Sharding (`--shard I/N`) runs a fixed, disjoint slice.
//!
//! Its rooms: the options (sweep/options.rs), which pairs run (sweep/plan.rs), one pair with
//! its determinism re-run (sweep/pair.rs), saved failures and their replay (sweep/saved.rs),
//! the results schema (sweep/results.rs), junit.xml (sweep/junit.rs), summary.md
//! (sweep/summary.rs) and the folder's files written together (sweep/outputs.rs). This file
//! runs the pairs on the pool and hands each finished one on.

pub mod junit;
pub mod options;
pub mod outputs;
pub mod pair;
pub mod plan;
pub mod results;
pub mod saved;
pub mod summary;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::base::error::Result;
use crate::campaign::{Campaign, FolderSpec};
use crate::input::scenario::Scenario;
use crate::judging::coverage::{Coverage, Item, Required};
use crate::vocab::RunOutcome;

pub use junit::write_junit;
pub use options::{parse_shard, SweepOptions};
pub(crate) use outputs::write_files;
pub(crate) use pair::PairOutcome;
use pair::{panicked, run_and_save};
pub use plan::{pair_counts, pairs};
use outputs::write_outputs;
use plan::check_pair_count;
use saved::replay_saved_failures;
pub(crate) use results::variant_label;
pub use results::{outcomes, passes, read_results, worst_of, write_results, KnownPasses, ResultRow, WallTimes, JOURNAL};
pub(crate) use saved::copy_dir;
pub use summary::{required_section, KNOWN_FILE};

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
