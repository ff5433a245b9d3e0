//! What a sweep returns to its command: the finished pairs' rows and what was judged of them.

use std::path::Path;

use super::results::{outcomes, worst_of, ResultRow};
use crate::judging::coverage::{Coverage, Item};
use crate::vocab::RunOutcome;

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
