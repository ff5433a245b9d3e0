//! `rehearsal explore schedules`: instead of the one order of statements the seed's latency
//! draws give, every order the seeds leave open, up to a bound. A schedule is the list of
//! choices a run makes at its decision points (sim/plan/schedule.rs: effects of different actors
//! due within the statement round trip's spread of each other). The scenario runs from the
//! start with each schedule, written into its document as `[schedule] choices` (so what ran
//! is what a replay file holds), and records the decision points it met; the runs with one
//! more non-default choice after the last one are its children (`tree.rs`). Levels go by the
//! number of non-default choices, 0 (the default order) to `--bound` (CHESS's preemption
//! bound); `--depth` limits which decision points may take one.
//!
//! Every run is judged by the run's own oracles. Runs are grouped as `explore crashes` groups
//! them: passing, and each distinct failure (first violated rule, task-row states at the end),
//! numbered in run order. Runs are numbered level by level and, within a level, earliest
//! choice first, so each failure's first run is its shortest counterexample (fewest
//! non-default choices, then earliest), written as a replay file `failures/F1-rule.toml`
//! that `rehearsal run` replays exactly. Each level runs on the sweep's pool (results in
//! job order, so nothing depends on `--jobs`); Ctrl-C keeps the finished runs, marked
//! incomplete.
//!
//! Re-execution from the start is the only way: an actor's state is its suspended future,
//! which can be neither cloned nor saved (sim/campaign/explore/mod.rs says more).

mod report;
mod runner;
mod tree;

use std::path::PathBuf;

pub use crate::campaign::INCOMPLETE_MARKER;
pub use report::{read_csv, ScheduleRow, JOURNAL};
pub use tree::{children, earliest_first, spell, Choices};

use crate::base::error::{Error, Result};
use crate::campaign::DistinctFailure;
use crate::input::scenario::Scenario;
use crate::vocab::RunOutcome;

#[derive(Clone, Debug)]
pub struct SchedulesOptions {
    pub scenario: PathBuf,
    /// The seed whose runs are re-ordered (the scenario's `run.seed` unless given).
    pub seed: Option<u64>,
    /// `--protocol NAME`: the profile in place of the scenario's (written into the runs' and
    /// replay files' documents as `[protocol] profile`).
    pub protocol: Option<String>,
    pub variants: Vec<String>,
    /// At most this many non-default choices per schedule.
    pub bound: usize,
    /// Only the first this many decision points may take a non-default choice.
    pub depth: usize,
    pub jobs: usize,
    pub out: PathBuf,
    /// Where runs are made and removed (default: `/dev/shm` where it exists, else `out`).
    pub scratch: Option<PathBuf>,
    pub progress: bool,
    /// Replace what an earlier command left in `out` (refused without it: sim/base/out_folder.rs).
    pub force: bool,
}

/// A finished (or interrupted) enumeration.
pub struct Enumeration {
    pub scenario: String,
    pub seed: u64,
    pub variants: Vec<String>,
    pub bound: usize,
    pub depth: usize,
    pub window_ms: i64,
    /// Decision points of the default order.
    pub base_decisions: usize,
    /// Runs at each level (index: non-default choices), as many as finished.
    pub per_level: Vec<usize>,
    /// Every finished run, level by level, earliest choice first.
    pub rows: Vec<ScheduleRow>,
    pub failures: Vec<DistinctFailure>,
    pub interrupted: bool,
}

impl Enumeration {
    /// A harness error in any run (3), else a distinct failure (1), else a pass.
    pub fn outcome(&self) -> RunOutcome {
        crate::campaign::outcome(self.rows.iter().any(|r| r.outcome == RunOutcome::Error), !self.failures.is_empty())
    }
}

pub fn explore_schedules(options: &SchedulesOptions) -> Result<Enumeration> {
    assert!(options.jobs >= 1);
    let path = &options.scenario;
    let scenario = Scenario::load(path)?; // bad input, with file:line:col, before anything runs
    let text = crate::base::input_file::read_text(path, "scenario")?;
    let mut base_doc: toml::Table =
        text.parse().map_err(|e: toml::de::Error| Error::input(format!("{}: {}", path.display(), e.message())))?;
    crate::campaign::explore::document::set_profile(&mut base_doc, options.protocol.as_deref())?;
    let campaign = runner::open(options)?;
    let running = format!("the enumeration is running, or was killed; the finished runs are in schedules.csv and {JOURNAL}");
    // Checkpoints are the levels' (`report::checkpoint`), not every so many runs.
    let ledger = campaign.ledger(usize::MAX, &running, crate::campaign::progress::Progress::Quiet, |_| Ok(()))?;
    let explorer = runner::Explorer { options, base_doc, scratch: campaign.scratch(), ledger };
    let seed = options.seed.unwrap_or(scenario.run.seed);
    let mut enumeration = Enumeration {
        scenario: path.display().to_string(),
        seed,
        variants: options.variants.clone(),
        bound: options.bound,
        depth: options.depth,
        window_ms: 0,
        base_decisions: 0,
        per_level: Vec::new(),
        rows: Vec::new(),
        failures: Vec::new(),
        interrupted: false,
    };
    // The default order runs first, alone: an error there (a broken statement, say) is the
    // command's, with its exit code, not a row.
    let base = explorer.run_base()?;
    enumeration.window_ms = base.window_ms;
    enumeration.base_decisions = base.decisions.len();
    enumeration.per_level.push(1);
    let mut level = children(&[], &base.decisions, options.depth);
    explorer.ledger.record(1, base.row.clone());
    enumeration.rows.push(base.row);
    report::checkpoint(&campaign, &enumeration.rows, true)?;
    for number in 1..=options.bound {
        if level.is_empty() || crate::base::interrupt::interrupted() {
            break;
        }
        level.sort_by(earliest_first);
        let (ran, next) = explorer.run_level(&level, enumeration.rows.len(), number);
        enumeration.per_level.push(ran.len());
        let complete = ran.len() == level.len();
        enumeration.rows.extend(ran.into_iter().map(|r| r.row));
        report::checkpoint(&campaign, &enumeration.rows, complete)?;
        if !complete {
            enumeration.interrupted = true;
            break;
        }
        level = next;
    }
    enumeration.interrupted |= crate::base::interrupt::interrupted();
    enumeration.failures = crate::campaign::group(&mut enumeration.rows);
    for failure in &enumeration.failures {
        explorer.save_failure(failure, &enumeration)?;
    }
    report::write_outputs(&campaign, &enumeration)?;
    Ok(enumeration)
}
