//! `rehearsal search`: coverage-guided exploration, beside a random sweep of the same size.
//!
//! An input is a run seed, the fault odds the search fixed (the seed draws the others, as
//! swarm testing does) and the scripted crashes and hangs it placed (`input.rs`). The search
//! keeps every input whose run reached something new — a coverage item (sim/coverage), an
//! item's count in a new bucket, a distinct violation (rule and end states), a rule never
//! violated before (`novelty.rs`) — and makes mutants of the kept ones (`mutate.rs`).
//! It runs in batches of `BATCH` inputs: a batch is made from the corpus as it stood with the
//! search's own stream (seeded from `--seed`), run on the pool, and folded in batch order,
//! so what it finds does not depend on `--jobs`. The batch size is fixed for the same reason.
//!
//! Beside it, the same number of runs of the scenario as it stands, over seeds drawn from
//! `--seed`'s own `random` stream: the sweep the search is measured against. Both sides are
//! counted the same way; search.csv, summary.md and stdout show them side by side
//! (`report.rs`). Each distinct violation gets a replay file under `failures/`, and each
//! corpus entry one under `corpus/`: a scenario file that runs the input as the search ran it.

mod input;
mod mutate;
mod novelty;
mod report;
mod runner;

use std::path::{Path, PathBuf};

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use toml::{Table, Value};

pub use input::Input;
pub use novelty::{Novelty, Seen};
pub use report::{read_csv, SearchRow, JOURNAL};

use self::mutate::{Mutator, Point, SEED_RANGE};
use self::runner::{Ran, Runner};
use crate::base::error::{Error, Result};
use crate::campaign::explore::{document, HangClass};
use crate::campaign::{Campaign, Ledger};
use crate::input::scenario::{session_cap, Odds, Scenario};
use crate::vocab::{FaultName, RunOutcome};

/// Inputs made and run together. Fixed, so the corpus each batch is made from does not
/// depend on `--jobs`; small enough that a find is mutated soon after it is made.
pub const BATCH: usize = 16;

/// The share of each batch that is fresh seeds rather than mutants: new seeds reach what no
/// kept input is near.
const FRESH_ODDS: f64 = 0.1;

pub use crate::campaign::INCOMPLETE_MARKER;

#[derive(Clone, Debug)]
pub struct SearchOptions {
    pub scenario: PathBuf,
    /// Runs of each side.
    pub runs: usize,
    /// The search's own seed: its stream, and the random sweep's seeds.
    pub seed: u64,
    /// Empties the scenario's `[expect] allowed`: every violation counts.
    pub strict: bool,
    /// `--protocol NAME`: the profile in place of the scenario's (written into the runs' and
    /// replay files' documents as `[protocol] profile`).
    pub protocol: Option<String>,
    pub variants: Vec<String>,
    /// The kinds of scripted faults the search places (`--faults`; default
    /// `FaultName::SEARCHED`).
    pub faults: Vec<FaultName>,
    pub jobs: usize,
    pub out: PathBuf,
    /// Where runs are made and removed (default: `/dev/shm` where it exists, else `out`).
    pub scratch: Option<PathBuf>,
    pub progress: bool,
    /// Replace what an earlier command left in `out` (refused without it: sim/base/out_folder.rs).
    pub force: bool,
}

/// One side's runs, in order, and what they saw.
#[derive(Default)]
pub struct Side {
    pub rows: Vec<SearchRow>,
    pub inputs: Vec<Input>,
    pub seen: Seen,
    /// The runs kept as the corpus (1-based run numbers), search only.
    pub corpus: Vec<usize>,
}

pub struct Search {
    pub scenario: String,
    pub seed: u64,
    pub strict: bool,
    pub planned: usize,
    pub search: Side,
    pub random: Side,
    pub interrupted: bool,
}

impl Search {
    pub fn complete(&self) -> bool {
        self.search.rows.len() == self.planned && self.random.rows.len() == self.planned
    }

    /// A harness error in any run (3), else a violation the search found (1), else a pass.
    pub fn outcome(&self) -> RunOutcome {
        let mut rows = self.search.rows.iter().chain(&self.random.rows);
        let any_error = rows.any(|r| r.violation.starts_with("harness:") || r.violation.starts_with("panic:"));
        crate::campaign::outcome(any_error, !self.search.seen.violations.is_empty())
    }
}

pub fn search(options: &SearchOptions) -> Result<Search> {
    assert!(options.jobs >= 1);
    if options.runs == 0 {
        return Err(Error::input("--runs must be at least 1"));
    }
    // Each side makes `runs` runs (issue 30: --runs 10^11 grew without end).
    crate::base::seed_set::check_runs(2 * options.runs as u128, &format!("--runs {} (on each side)", options.runs), "")?;
    let path = &options.scenario;
    Scenario::load(path)?; // bad input, with file:line:col, before anything runs or is written
    let mut base = base_document(path, options.strict)?;
    document::set_profile(&mut base, options.protocol.as_deref())?;
    let scenario = document::scenario(&base, path)?;
    crate::input::variant::with_variants(&scenario, &options.variants)?; // an unknown variant is bad input too
                                                                         // Explore's hang classes but the short one, which the protocol absorbs by design: as
                                                                         // many short hangs reached fewer new items (measured on random-faults.toml).
    let hang_ms = [HangClass::Threshold, HangClass::Long].iter().map(|c| c.duration_ms(&scenario)).collect();
    let sessions_max = session_cap(Some(&scenario.profile), &scenario.variant_names, scenario.conductor.sessions_per_task_max);
    let mutator = Mutator { odds: drawn_odds(&scenario), hang_ms, kinds: placeable(&options.faults)?, sessions_max };
    let campaign = Campaign::open(&report::folder_spec(options))?;
    let runner = Runner { options, base, scratch: campaign.scratch() };
    let runs = options.runs;
    let running = format!("0 of {runs} + {runs} runs finished: the search is running, or was killed; the finished runs are in {JOURNAL}");
    // search.csv is written at the end only: the journal is what a killed search keeps.
    let ledger = campaign.ledger(2 * runs, &running, crate::campaign::progress::Progress::Quiet, |_| Ok(()))?;
    let search_side = run_search(&runner, &mutator, &ledger);
    let random_side = run_random(&runner, &ledger);
    let found = Search {
        scenario: path.display().to_string(),
        seed: options.seed,
        strict: options.strict,
        planned: options.runs,
        search: search_side,
        random: random_side,
        interrupted: crate::base::interrupt::interrupted(),
    };
    report::write_outputs(&campaign, &runner, &found)?;
    Ok(found)
}

/// `--faults` in `FaultName::ALL` order (the order the search draws among them), each once;
/// at least one.
fn placeable(kinds: &[FaultName]) -> Result<Vec<FaultName>> {
    let placed: Vec<FaultName> = FaultName::ALL.into_iter().filter(|k| kinds.contains(k)).collect();
    if placed.is_empty() {
        return Err(Error::input("--faults: name at least one fault kind to place (crash, hang, io_error)"));
    }
    Ok(placed)
}

/// The scenario file's document; under `--strict`, with `[expect] allowed` emptied.
fn base_document(path: &Path, strict: bool) -> Result<Table> {
    let text = crate::base::input_file::read_text(path, "scenario")?;
    let (mut doc, _) = document::base(&text, path, true)?;
    if strict {
        if let Some(Value::Table(expect)) = doc.get_mut("expect") {
            expect.remove("allowed");
        }
    }
    Ok(doc)
}

/// The `[faults]` odds the seed draws from a range: what the search may fix instead.
fn drawn_odds(scenario: &Scenario) -> Vec<(&'static str, f64, f64)> {
    let faults = &scenario.faults;
    [
        ("crash_probability", faults.crash_probability),
        ("hang_probability", faults.hang_probability),
        ("context_spike_probability", faults.context_spike_probability),
    ]
    .into_iter()
    .filter_map(|(key, odds)| match odds {
        Odds::Drawn { min, max } if min < max => Some((key, min, max)),
        _ => None,
    })
    .collect()
}

/// A kept input, the points its run reached, and how often to pick it.
struct Entry {
    run: usize,
    input: Input,
    points: Vec<Point>,
    weight: u64,
}

/// How often a kept input is picked as a parent: an input that reached new items or a new
/// violation is nearer to more of them than one that only reached an item more often.
fn weight(novelty: &Novelty) -> u64 {
    1 + 4 * novelty.items.len() as u64 + 4 * u64::from(novelty.violation.is_some()) + 4 * novelty.rules.len() as u64
}

/// The search's runs, batch by batch, until `runs` or Ctrl-C.
fn run_search(runner: &Runner, mutator: &Mutator, ledger: &Ledger<SearchRow>) -> Side {
    let runs = runner.options.runs;
    let mut rng = crate::base::rng::stream(runner.options.seed, "search");
    let mut corpus: Vec<Entry> = Vec::new();
    let mut side = Side::default();
    while side.rows.len() < runs && !crate::base::interrupt::interrupted() {
        let first = side.rows.len() + 1;
        let mut origins = Vec::new();
        let mut made: Vec<(String, Input)> = Vec::new();
        for run in first..(first + BATCH).min(runs + 1) {
            let (origin, input) = make(&corpus, mutator, &mut rng);
            origins.push(origin);
            made.push((format!("search-{run}"), input));
        }
        let results = runner.batch(&made, true);
        for ((ran, (_, input)), origin) in results.into_iter().zip(made).zip(origins) {
            let Some(ran) = ran else { break };
            let run = side.rows.len() + 1;
            let novelty = side.fold(run, &origin, input.clone(), &ran);
            ledger.record(run - 1, side.rows[run - 1].clone());
            if novelty.interesting() && ran.error.is_none() {
                side.corpus.push(run);
                corpus.push(Entry { run, input, points: ran.points, weight: weight(&novelty) });
            }
        }
        if runner.options.progress {
            eprintln!("rehearsal: search {}/{runs} runs, {} kept, {} items", side.rows.len(), corpus.len(), side.seen.items.len());
        }
    }
    side
}

/// A fresh seed, or a mutant of a corpus entry drawn with the search's stream.
fn make(corpus: &[Entry], mutator: &Mutator, rng: &mut ChaCha8Rng) -> (String, Input) {
    if corpus.is_empty() || rng.random_bool(FRESH_ODDS) {
        return ("fresh".to_string(), Input::seeded(rng.random_range(SEED_RANGE)));
    }
    let parent = pick_parent(corpus, rng);
    (format!("mutant-of-{}", parent.run), mutator.mutate(&parent.input, &parent.points, rng))
}

/// A kept input, each as likely as its weight.
fn pick_parent<'a>(corpus: &'a [Entry], rng: &mut ChaCha8Rng) -> &'a Entry {
    let total: u64 = corpus.iter().map(|e| e.weight).sum();
    let mut left = rng.random_range(0..total);
    for entry in corpus {
        if left < entry.weight {
            return entry;
        }
        left -= entry.weight;
    }
    unreachable!("the draw is below the total weight")
}

/// The random sweep: `runs` seeds from `--seed`'s `random` stream, the scenario as it stands.
fn run_random(runner: &Runner, ledger: &Ledger<SearchRow>) -> Side {
    let mut rng = crate::base::rng::stream(runner.options.seed, "random");
    let made: Vec<(String, Input)> =
        (1..=runner.options.runs).map(|run| (format!("random-{run}"), Input::seeded(rng.random_range(SEED_RANGE)))).collect();
    let mut side = Side::default();
    if crate::base::interrupt::interrupted() {
        return side;
    }
    for (ran, (_, input)) in runner.batch(&made, false).into_iter().zip(made) {
        let Some(ran) = ran else { break };
        let run = side.rows.len() + 1;
        side.fold(run, "random", input, &ran);
        // After the search side's runs in the journal, as in search.csv.
        ledger.record(runner.options.runs + run - 1, side.rows[run - 1].clone());
    }
    side
}

impl Side {
    /// Run `run`'s result folded in: its row, its input, what it saw first.
    fn fold(&mut self, run: usize, origin: &str, input: Input, ran: &Ran) -> Novelty {
        let novelty = match &ran.error {
            Some(_) => Novelty::default(),
            None => self.seen.fold(run, &ran.coverage, ran.violation.clone(), &ran.rules),
        };
        self.rows.push(SearchRow::of(run, origin, &input, ran, &novelty));
        self.inputs.push(input);
        novelty
    }
}
