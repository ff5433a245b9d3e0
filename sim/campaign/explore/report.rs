//! What an exploration writes and prints: explore.csv (a row a run), summary.md (the counts,
//! the distinct failures with the rule each breaks and its replay file, what prefix sharing
//! would save, coverage) and the same counts on stdout. Nothing here depends on `--jobs` or
//! on the wall clock.

use std::fmt::Write as _;
use std::path::Path;

use super::outcome::{PointOutcome, PointRow};
use super::{Exploration, Prefix};
use crate::base::error::Result;
use crate::vocab::RunOutcome;

pub fn write_csv(path: &Path, rows: &[PointRow]) -> Result<()> {
    crate::base::csv_rows::write_rows(path, rows)
}

/// The journal of an exploration's finished runs, beside explore.csv (sim/campaign).
pub const JOURNAL: &str = "explore.journal.jsonl";

/// The rows of explore.csv at `path`, with those only the journal beside it holds (an
/// exploration killed between two checkpoints: sim/campaign/ledger.rs), in job order.
pub fn read_csv(path: &Path) -> Result<Vec<PointRow>> {
    crate::campaign::read_rows(path, &path.with_file_name(JOURNAL))
}

impl Exploration {
    fn count(&self, outcome: PointOutcome) -> usize {
        self.rows.iter().filter(|r| r.outcome == outcome).count()
    }

    /// Statements the fired runs ran, and those of them before their point (what starting
    /// each from a snapshot of the base run at its point would have skipped).
    pub fn prefix_statements(&self) -> (u64, u64) {
        let fired = self.rows.iter().filter(|r| r.outcome.fired());
        fired.fold((0, 0), |(prefix, all), r| (prefix + r.prefix_statements.min(r.statements), all + r.statements))
    }

    /// The counts, as `rehearsal explore crashes` prints them (and summary.md repeats).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "scenario     {}", self.scenario);
        let _ = writeln!(out, "seed         {}", self.seed);
        if !self.variants.is_empty() {
            let _ = writeln!(out, "variants     {}", self.variants.join(", "));
        }
        if self.set_aside > 0 {
            let _ =
                writeln!(out, "set aside    {} scripted crash/hang fault(s) of the scenario (--keep-faults keeps them)", self.set_aside);
        }
        let _ = writeln!(out, "base run     {} (trace {}, {} statements)", self.base_headline, self.base_hash, self.base_statements);
        let chosen = if self.points < self.points_in_run { format!(" chosen of {}", self.points_in_run) } else { String::new() };
        let _ = writeln!(
            out,
            "points       {}{chosen} ({} of musician sessions, {} of the conductor)",
            self.points,
            self.points - self.conductor_points,
            self.conductor_points
        );
        if let Some(hash) = &self.launcher_hash {
            let _ = writeln!(out, "launcher     trace {hash}: the base run started by the launcher a conductor crash brings");
        }
        let _ = writeln!(out, "runs         {} of {} ({})", self.rows.len(), self.planned, self.faults_placed);
        let _ = writeln!(out, "passed       {}", self.count(PointOutcome::Ran(RunOutcome::Pass)));
        let _ = writeln!(out, "unreached    {} (the fault never fired: the run is the base run)", self.count(PointOutcome::Unreached));
        let _ = writeln!(
            out,
            "failed       {} in {} distinct failure(s)",
            self.count(PointOutcome::Ran(RunOutcome::Fail)),
            self.failures.len()
        );
        let _ = writeln!(out, "errors       {}", self.count(PointOutcome::Ran(RunOutcome::Error)));
        for f in &self.failures {
            let (first, stem) = (self.rows[f.first_row].placed(), f.file_stem());
            let _ = writeln!(
                out,
                "{:<4} {} — {} run(s); ends {}; first: {first}; run failures/{stem}.toml",
                f.id, f.first_violation, f.runs, f.end_states
            );
            let _ = writeln!(out, "     at {}", super::by_statement::line(&self.rows, f));
        }
        for row in self.rows.iter().filter(|r| r.outcome == PointOutcome::Ran(RunOutcome::Error)).take(5) {
            let _ = writeln!(out, "error at point {} ({}): {}", row.point, row.placed(), row.first_violation);
        }
        let (prefix, all) = self.prefix_statements();
        let shared = match self.prefix {
            Prefix::Fork => "each run forked from the base run's last snapshot before its point (--prefix)",
            Prefix::Reads => "ran again, their reads answered from the base run's (--prefix reads)",
            Prefix::None => "ran again (--prefix none)",
        };
        let _ =
            writeln!(out, "prefix       {prefix} of {all} statements ({:.0} %) were before their point: {shared}", percent(prefix, all));
        out
    }

    /// summary.md: the counts, the distinct failures, coverage.
    pub fn summary_md(&self) -> String {
        let mut md = String::new();
        if self.rows.len() < self.planned {
            let _ = writeln!(
                md,
                "**Incomplete**: {} of {} runs finished (interrupted); the results below are those runs only.\n",
                self.rows.len(),
                self.planned
            );
        }
        let _ = writeln!(md, "# Crash exploration of {} (seed {})\n", self.scenario, self.seed);
        md.push_str("```\n");
        md.push_str(&self.render());
        md.push_str("```\n\n## Distinct failures\n\n");
        if self.failures.is_empty() {
            md.push_str("None: every fault that fired left a passing run.\n");
        } else {
            md.push_str("| failure | first violated rule | runs | comms.db at the end | first found at | replay file |\n| --- | --- | --- | --- | --- | --- |\n");
            for f in &self.failures {
                let (first, stem) = (self.rows[f.first_row].placed(), f.file_stem());
                let replay = format!("[failures/{stem}.toml](failures/{stem}.toml) ([timeline](failures/{stem}/timeline.html))");
                let _ = writeln!(md, "| {} | {} | {} | {} | {first} | {replay} |", f.id, f.first_violation, f.runs, f.end_states);
            }
        }
        super::by_statement::markdown(&mut md, &self.rows, &self.failures);
        md.push_str(&format!("\n{CONDUCTOR_NOTE}\n\n{PREFIX_NOTE}\n\n"));
        md.push_str(&crate::judging::coverage::markdown(&self.coverage));
        md
    }
}

const CONDUCTOR_NOTE: &str = "**The conductor's points** (`conductor`, `conductor.S2`, …; a review's statements count with its conductor session) get a crash before and after each (`[[faults.conductor_crash]]`), which brings the launcher that starts the next conductor session (docs/protocol.md C34). They get no hang with `--hangs`: the conductor's one hang, `[[faults.conductor_down]]`, is a window of simulated time, and a window opened at the instant of a point is not a hang at the point (other actors' events of that instant may come before or after it).";

const PREFIX_NOTE: &str = "**Prefix sharing**: the `prefix` line counts the statements the runs had before their fault's point — identical, statement for statement, to the base run's. With `--prefix fork` (the default) a run starts from the base run's last snapshot before its point, its actors brought there on the base run's replies, so it runs only the few statements between the snapshot and the point again (their reads answered from the base run's rows); `--prefix reads` and `none` run them all again. The rows are the same bytes every way (see `sim/campaign/explore/mod.rs` and `sim/run/fork.rs`).";

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}
