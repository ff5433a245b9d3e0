//! What a sweep returns to its command: the finished pairs' counts, what was judged of them,
//! and their rows on disk (sim/campaign/sweep/spool.rs) for what lists them (`--json`, a
//! baseline's lines): nothing that grows with the pairs is held in memory (issue 41).

use std::path::Path;

use super::results::{KnownPasses, ResultRow};
use super::spool::Rows;
use crate::base::error::Result;
use crate::campaign::fault_proof::FaultTally;
use crate::judging::coverage::{Coverage, Item};
use crate::vocab::RunOutcome;

/// The finished pairs added up a row at a time.
#[derive(Default)]
pub struct Totals {
    pub pairs: usize,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    /// Passes without a violation.
    pub clean: usize,
    /// Passes that broke rules their scenario allows or expects (issue 25).
    pub known: KnownPasses,
    /// The first pair that did not pass: `SCENARIO seed N`.
    pub first_not_passed: Option<String>,
    pub faults: FaultTally,
}

impl Totals {
    pub fn add(&mut self, row: &ResultRow) {
        self.pairs += 1;
        match row.verdict {
            RunOutcome::Pass if row.rules.is_empty() => self.clean += 1,
            RunOutcome::Pass => {
                self.known.runs += 1;
                for rule in row.rules.iter() {
                    *self.known.rules.entry(rule.clone()).or_insert(0) += 1;
                }
            }
            RunOutcome::Fail => self.failed += 1,
            RunOutcome::Error => self.errors += 1,
        }
        if row.verdict == RunOutcome::Pass {
            self.passed += 1;
        } else if self.first_not_passed.is_none() {
            self.first_not_passed = Some(format!("{} seed {}", row.scenario, row.seed));
        }
        self.faults.add(row);
    }

    /// The worst outcome of the pairs (an error over a failure over a pass).
    pub fn worst(&self) -> RunOutcome {
        if self.errors > 0 {
            RunOutcome::Error
        } else if self.failed > 0 {
            RunOutcome::Fail
        } else {
            RunOutcome::Pass
        }
    }
}

pub struct SweepOutcome {
    /// The finished pairs' rows, in results.csv's order.
    pub rows: Rows,
    pub totals: Totals,
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
        self.totals.pairs == self.planned
    }

    /// The worst outcome of the finished pairs; a sweep that stopped early (`--fail-fast`)
    /// or left a required coverage item unreached fails even if every pair it ran passed.
    /// Ctrl-C is the caller's to report.
    pub fn outcome(&self) -> RunOutcome {
        let worst = match &self.baseline {
            Some(comparison) => crate::campaign::baseline::worst_given(self.totals.errors > 0, comparison),
            None => self.totals.worst(),
        };
        if worst == RunOutcome::Pass && (!self.complete() || !self.missing_coverage.is_empty() || !self.unfired.is_empty()) {
            RunOutcome::Fail
        } else {
            worst
        }
    }

    /// The rows, in a list: what a baseline's lines need (they hold a line a pair anyway).
    pub fn rows_listed(&self) -> Result<Vec<ResultRow>> {
        self.rows.collect()
    }
}

impl SweepOutcome {
    /// The one stdout line on the pairs that did not pass (instead of a line each), pointing
    /// at where they are kept; `None` when every pair passed.
    pub fn failures_line(&self, out: &Path) -> Option<String> {
        let (failed, errors) = (self.totals.failed, self.totals.errors);
        if failed + errors == 0 {
            return None;
        }
        let first = self.totals.first_not_passed.clone().unwrap_or_default();
        Some(format!(
            "failures     {failed} failed, {errors} error(s) of {} pairs (first: {first}); replay files and run folders in {}, listed in {}",
            self.totals.pairs,
            out.join("failures").display(),
            out.join("summary.md").display()
        ))
    }
}
