//! What a search writes and prints: search.csv (a row a run of either side), summary.md and
//! stdout (the two sides side by side: coverage items, distinct violations, rules, and the
//! runs until each first), a replay file per distinct violation (`failures/`) and per corpus
//! entry (`corpus/`). Nothing here depends on `--jobs` or on the wall clock.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::input::Input;
use super::novelty::Novelty;
use super::runner::{Ran, Runner};
use super::{Search, SearchOptions, Side};
use crate::base::atomic::write_atomically;
use crate::base::error::Result;
use crate::campaign::explore::document;
use crate::campaign::{Campaign, FolderSpec};

/// One row of search.csv.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchRow {
    /// `search` | `random`.
    pub side: String,
    /// 1-based, on its side.
    pub run: usize,
    /// `fresh` (a new seed), `mutant-of-N` (a mutant of the side's run N), `random`.
    pub origin: String,
    /// The input (sim/campaign/search/input.rs `summary`).
    pub input: String,
    /// Coverage items this run reached first on its side.
    pub new_coverage: usize,
    pub new_items: String,
    /// The verdict's failure with the end states, or the harness error; empty on a pass.
    pub violation: String,
    /// `V3` when this run found its side's third distinct violation.
    pub distinct: String,
    pub statements: u64,
    pub trace_hash: String,
}

impl SearchRow {
    pub(super) fn of(run: usize, origin: &str, input: &Input, ran: &Ran, novelty: &Novelty) -> SearchRow {
        let side = if origin == "random" { "random" } else { "search" };
        let violation = match (&ran.error, &ran.violation) {
            (Some(error), _) => error.clone(),
            (None, Some((rule, states))) => format!("{rule} [{states}]"),
            (None, None) => String::new(),
        };
        SearchRow {
            side: side.to_string(),
            run,
            origin: origin.to_string(),
            input: input.summary(),
            new_coverage: novelty.items.len(),
            new_items: novelty.items.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
            violation,
            distinct: novelty.violation.map(|n| format!("V{n}")).unwrap_or_default(),
            statements: ran.statements,
            trace_hash: ran.trace_hash.clone(),
        }
    }
}

/// The journal of a search's finished runs, beside search.csv (sim/campaign).
pub const JOURNAL: &str = "search.journal.jsonl";

/// The rows of search.csv at `path`, with those only the journal beside it holds (a killed
/// search's: sim/campaign/ledger.rs), search side first, each in run order.
pub fn read_csv(path: &Path) -> Result<Vec<SearchRow>> {
    crate::campaign::read_rows(path, &path.with_file_name(JOURNAL))
}

/// The output folder with `corpus/` and `failures/` (sim/campaign/folder.rs), and the
/// scratch folder runs are made in (a tmpfs where there is one, as explore does).
pub(super) fn folder_spec(options: &SearchOptions) -> FolderSpec<'_> {
    FolderSpec {
        name: "search",
        out: &options.out,
        owned: &["search.csv", "summary.md"],
        folders: &["corpus", "failures"],
        journal: Some(JOURNAL),
        force: options.force,
        scratch: options.scratch.as_deref(),
    }
}

/// search.csv, summary.md, the replay files, and the marker while runs are missing.
pub(super) fn write_outputs(campaign: &Campaign, runner: &Runner, found: &Search) -> Result<()> {
    let out = campaign.out();
    let (searched, random, planned) = (found.search.rows.len(), found.random.rows.len(), found.planned);
    let missing = format!("{searched} + {random} of {planned} + {planned} runs finished: interrupted (Ctrl-C)");
    campaign.finish((!found.complete()).then_some(&missing), || {
        for run in &found.search.corpus {
            let header =
                format!("# Corpus entry of `rehearsal search` on {} (search seed {}): its run {run}.\n", found.scenario, found.seed);
            write_replay(runner, &found.search.inputs[run - 1], &header, &out.join("corpus").join(format!("C{run}.toml")))?;
        }
        for (name, side) in [("search", &found.search), ("random", &found.random)] {
            for ((rule, states), (n, run)) in &side.seen.violations {
                let header = format!(
                    "# Found by `rehearsal search` on {} (search seed {}), {name} run {run}: violation V{n}.\n\
                     # It fails `{rule}`; comms.db ends with {states}.\n\
                     # Run it with `rehearsal run` on this file: it fails the same way.\n",
                    found.scenario, found.seed
                );
                let path = out.join("failures").join(format!("{name}-V{n}-{}.toml", slug(rule)));
                write_replay(runner, &side.inputs[run - 1], &header, &path)?;
            }
        }
        let rows: Vec<SearchRow> = found.search.rows.iter().chain(&found.random.rows).cloned().collect();
        crate::base::csv_rows::write_rows(&out.join("search.csv"), &rows)?;
        write_atomically(&out.join("summary.md"), found.summary_md().as_bytes())
    })
}

fn write_replay(runner: &Runner, input: &Input, header: &str, path: &Path) -> Result<()> {
    let options = runner.options;
    let dest_dir = path.parent().unwrap_or(Path::new("."));
    let text = document::replay_file(&runner.document(input), header, input.seed, &options.variants, &options.scenario, dest_dir)?;
    write_atomically(path, text.as_bytes())
}

/// `liveness` → `liveness`; anything else to lowercase words joined by `-`, cut short.
fn slug(text: &str) -> String {
    let lower: String = text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let words: Vec<&str> = lower.split('-').filter(|w| !w.is_empty()).collect();
    words.join("-").chars().take(48).collect::<String>().trim_end_matches('-').to_string()
}

fn at_run(run: Option<usize>) -> String {
    run.map_or("never".to_string(), |r| format!("run {r}"))
}

impl Side {
    fn reached(&self) -> usize {
        self.seen.items.len()
    }
}

impl Search {
    /// The side-by-side table rows: (what, search, random).
    fn figures(&self) -> Vec<(String, String, String)> {
        let (s, r) = (&self.search, &self.random);
        let both = |f: &dyn Fn(&Side) -> String| (f(s), f(r));
        let mut rows = Vec::new();
        let mut push = |what: &str, (a, b): (String, String)| rows.push((what.to_string(), a, b));
        push("runs", both(&|side| side.rows.len().to_string()));
        push("coverage items reached", both(&|side| side.reached().to_string()));
        push("distinct violations (rule, end states)", both(&|side| side.seen.violations.len().to_string()));
        push("rules violated", both(&|side| side.seen.rules.len().to_string()));
        push("first violation", both(&|side| at_run(side.seen.first_violation())));
        push("last new coverage item", both(&|side| at_run(side.seen.items.values().max().copied())));
        push("reached the other side's coverage", (at_run(s.seen.runs_to_items(r.reached())), at_run(r.seen.runs_to_items(s.reached()))));
        rows
    }

    /// The comparison, as `rehearsal search` prints it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let strict = if self.strict { " (--strict: [expect] allowed emptied)" } else { "" };
        let _ = writeln!(out, "scenario     {}{strict}", self.scenario);
        let _ = writeln!(out, "search seed  {}, {} runs a side, batches of {}", self.seed, self.planned, super::BATCH);
        let _ = writeln!(out, "corpus       {} inputs kept", self.search.corpus.len());
        let _ = writeln!(out, "{:<40} {:>12} {:>12}", "", "search", "random");
        for (what, a, b) in self.figures() {
            let _ = writeln!(out, "{what:<40} {a:>12} {b:>12}");
        }
        out
    }

    pub fn summary_md(&self) -> String {
        let mut md = String::from("# Search summary\n\n");
        if !self.complete() {
            md.push_str("**Incomplete**: interrupted; the figures below are the runs that finished.\n\n");
        }
        let strict = if self.strict { ", `[expect] allowed` emptied (`--strict`)" } else { "" };
        let _ = writeln!(
            md,
            "{}, search seed {}, {} runs a side{strict}; {} inputs kept.\n",
            self.scenario,
            self.seed,
            self.planned,
            self.search.corpus.len()
        );
        md.push_str("| | search | random |\n| --- | --- | --- |\n");
        for (what, a, b) in self.figures() {
            let _ = writeln!(md, "| {what} | {a} | {b} |");
        }
        md.push_str("\n## Distinct violations\n\n| side | id | rule | end states | first run | replay file |\n| --- | --- | --- | --- | --- | --- |\n");
        for (name, side) in [("search", &self.search), ("random", &self.random)] {
            for ((rule, states), (n, run)) in &side.seen.violations {
                let file = format!("failures/{name}-V{n}-{}.toml", slug(rule));
                let _ = writeln!(md, "| {name} | V{n} | {rule} | {states} | {run} | [{file}]({file}) |");
            }
        }
        md.push_str("\n## Coverage items: the run that reached each first\n\n| item | search | random |\n| --- | --- | --- |\n");
        let mut items: Vec<_> = self.search.seen.items.keys().chain(self.random.seen.items.keys()).collect();
        items.sort();
        items.dedup();
        for item in items {
            let first = |side: &Side| side.seen.items.get(item).map_or("—".to_string(), |r| r.to_string());
            let _ = writeln!(md, "| `{item}` | {} | {} |", first(&self.search), first(&self.random));
        }
        md
    }
}
