//! `rehearsal sweep`: every (scenario, seed) pair, on N threads, with results identical
//! whatever N is. Writes `results.csv`, `junit.xml` and one replay file (plus the run
//! folder) per failure under `failures/`. A panic or harness error in one pair is recorded
//! for that pair; the others carry on. Sharding (`--shard I/N`) runs a fixed, disjoint slice.
//!
//! Its rooms: the options (sweep/options.rs), which pairs run (sweep/plan.rs), one pair with
//! its determinism re-run (sweep/pair.rs), saved failures and their replay (sweep/saved.rs),
//! the results schema (sweep/results.rs), junit.xml (sweep/junit.rs), summary.md
//! (sweep/summary.rs), the finished rows kept on disk, not in memory (sweep/spool.rs), and
//! the folder's files written together (sweep/outputs.rs). This file
//! runs the pairs on the pool and hands each finished one on.

pub mod feed;
pub mod junit;
pub mod options;
pub mod outcome;
pub mod outputs;
pub mod pair;
pub mod plan;
pub mod results;
pub mod saved;
pub mod spool;
pub mod summary;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::base::error::Result;
use crate::campaign::{Campaign, FolderSpec};
use crate::input::scenario::Scenario;
use crate::judging::coverage::Required;
use crate::vocab::RunOutcome;

use feed::Feed;
pub use junit::write_junit;
pub use options::{parse_shard, SweepOptions};
pub use outcome::{SweepOutcome, Totals};
pub(crate) use outputs::write_files;
use outputs::write_outputs;
pub(crate) use pair::PairOutcome;
use pair::{panicked, run_and_save, SweptScenario};
use plan::check_pair_count;
pub use plan::{pair_counts, pairs, Pair};
pub(crate) use results::variant_label;
pub use results::{outcomes, passes, read_results, worst_of, write_results, KnownPasses, ResultRow, JOURNAL};
pub(crate) use saved::copy_dir;
use saved::replay_saved_failures;
pub use summary::{required_section, KNOWN_FILE};

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
    let planned = usize::try_from(pair_counts(options).1).expect("checked against MAX_RUNS above");
    // Before any pair runs, so even a killed shard says what it was part of (sim/campaign/manifest.rs).
    let (shard, shards) = options.shard.unwrap_or((1, 1));
    let build = crate::campaign::manifest::BUILD_ID.to_string();
    crate::campaign::manifest::Manifest { shard, shards, pairs: planned, build, suite }.write(&options.out)?;
    if let (Some((i, n)), true) = (options.shard, options.progress_every > 0) {
        // The shard's own count: `--seeds` said how many seeds each scenario runs in all.
        eprintln!("rehearsal: shard {i}/{n}: {planned} of the sweep's {} pairs", pair_counts(options).0);
    }
    let swept = options.scenarios.iter().map(|path| SweptScenario::load(path, options)).collect::<Result<Vec<_>>>()?;
    // In results.csv's order when the seeds allow it, so its rows are appended as they come.
    let (work, ordered): (Box<dyn Iterator<Item = Pair> + Send>, bool) = match plan::in_results_order(options, &own_seeds) {
        Some(pairs) => (Box::new(pairs), true),
        None => (Box::new(plan::in_index_order(options, &own_seeds)), false),
    };
    let progress = crate::campaign::progress::Progress::new(planned, options.progress_every, "pairs");
    // No more threads than pairs (the pairs are made one at a time, so the pool cannot count them).
    let jobs = options.jobs.min(planned);
    let feed = Feed::new(&campaign, planned, ordered, progress, jobs)?;
    let stop = AtomicBool::new(false);
    let known = |row: &ResultRow| match (&baseline, &options.baseline) {
        (Some(baseline), Some(file)) if !options.keep_known => row.verdict == RunOutcome::Fail && !baseline.stops(&row.outcome(), file),
        _ => false,
    };
    let stopping = || stop.load(Ordering::Relaxed);
    // A pair waits before it starts while it is too far ahead of the oldest one under way.
    let run = |(position, pair): &(usize, Pair)| {
        feed.wait_for_room(*position, &stopping).then(|| run_and_save(pair, &swept[pair.scenario], options, campaign.scratch(), &known))
    };
    let done = |position: usize, (_, pair): (usize, Pair), caught: crate::campaign::pool::Caught<Option<PairOutcome>>| {
        let finished = match caught {
            Ok(Some(finished)) => finished,
            // Never started: the sweep stopped while it waited for room.
            Ok(None) => return,
            Err(panic) => panicked(&swept[pair.scenario], pair.seed, options, &panic),
        };
        // Against a baseline, only a regression (or an error) stops a --fail-fast sweep.
        let stops = match (&baseline, &options.baseline) {
            (Some(baseline), Some(file)) => baseline.stops(&finished.row.outcome(), file),
            _ => finished.row.verdict != RunOutcome::Pass,
        };
        if options.fail_fast && stops {
            stop.store(true, Ordering::Relaxed);
        }
        feed.done(position, finished);
    };
    // Each pair with its position in the order the pairs are made (results.csv's, when ordered).
    crate::campaign::pool::for_each(jobs, work.enumerate(), run, stopping, done);
    let (mut outputs, coverage) = feed.finish();
    // `--bless` writes the file from every pair, then the pairs are judged against it like
    // any sweep's (all known, so only an error fails), and the outputs say so.
    let mut blessed = None;
    let mut baseline = baseline;
    if let (Some(file), true, true) = (&options.baseline, options.bless, outputs.count() == planned) {
        blessed = Some(crate::campaign::baseline::bless(&outcomes(&outputs.rows_listed()?), file)?);
        baseline = Some(crate::campaign::baseline::Baseline::load(file)?);
    }
    let mut outcome = write_outputs(&campaign, options, outputs, coverage, planned, required.as_ref(), baseline.as_ref())?;
    outcome.blessed = blessed;
    if options.require_faults_fired {
        outcome.unfired = outcome.totals.faults.unfired();
    }
    Ok(outcome)
}
