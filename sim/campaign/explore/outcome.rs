//! What each run of an exploration came to (a row of explore.csv), grouped into distinct
//! failures as every campaign's rows are (sim/campaign/failures.rs).

use serde::{Deserialize, Serialize};

use super::points::Job;
use crate::campaign::{end_states, FailureRow};
use crate::run::RunSummary;
use crate::vocab::RunOutcome;

/// What a run with one placed fault came to: a run's outcome, or `unreached` when the fault
/// never fired (the run is the base run, byte for byte), which no lone run can be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointOutcome {
    Ran(RunOutcome),
    Unreached,
}

impl PointOutcome {
    pub const ALL: [PointOutcome; 4] = [
        PointOutcome::Ran(RunOutcome::Pass),
        PointOutcome::Unreached,
        PointOutcome::Ran(RunOutcome::Fail),
        PointOutcome::Ran(RunOutcome::Error),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PointOutcome::Ran(outcome) => outcome.as_str(),
            PointOutcome::Unreached => "unreached",
        }
    }

    /// Whether the fault fired and the run was judged (passed or failed).
    pub fn fired(self) -> bool {
        matches!(self, PointOutcome::Ran(RunOutcome::Pass | RunOutcome::Fail))
    }
}

crate::vocab::word::word_traits!(PointOutcome, "explore outcome");

/// One row of explore.csv.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointRow {
    /// The point's number (1-based, in the order the base run reached the points).
    pub point: usize,
    /// `task-01.S1`.
    pub session: String,
    /// `before` | `after`.
    pub when: String,
    pub statement: String,
    pub nth: u64,
    /// `crash`, `hang-short`, `hang-threshold`, `hang-long`.
    pub fault: String,
    /// `pass` | `fail` | `unreached` (the fault never fired: the run is the base run, byte
    /// for byte) | `error` (a harness error or panic).
    pub outcome: PointOutcome,
    /// The distinct failure it belongs to (`F1`, …), for `fail`.
    pub failure: String,
    /// The verdict's failure (the first unexpected rule), or the harness error.
    pub first_violation: String,
    /// Every task row's state at the end: `task-00=complete task-01=watching`.
    pub end_states: String,
    /// Statements the base run asked before the point: what a run resumed from a snapshot
    /// there would not run again.
    pub prefix_statements: u64,
    pub statements: u64,
    pub trace_hash: String,
}

impl PointRow {
    /// The row of `job` before (or without) its run: an `error`.
    pub fn of(job: &Job) -> PointRow {
        PointRow {
            point: job.number,
            session: job.point.target.name(),
            when: job.fault.when().as_str().to_string(),
            statement: job.point.statement.to_string(),
            nth: job.point.nth,
            fault: job.fault.name(),
            outcome: PointOutcome::Ran(RunOutcome::Error),
            failure: String::new(),
            first_violation: String::new(),
            end_states: String::new(),
            prefix_statements: job.point.statements_before,
            statements: 0,
            trace_hash: String::new(),
        }
    }

    /// The row of a finished run; `base_hash` tells a fault that never fired.
    pub fn finished(job: &Job, summary: &RunSummary, base_hash: &str) -> PointRow {
        let outcome = match (summary.trace_hash == base_hash, summary.verdict.passed()) {
            (true, _) => PointOutcome::Unreached,
            (false, true) => PointOutcome::Ran(RunOutcome::Pass),
            (false, false) => PointOutcome::Ran(RunOutcome::Fail),
        };
        PointRow {
            outcome,
            first_violation: summary.verdict.failure.clone(),
            end_states: end_states(&summary.end_states),
            statements: summary.statements,
            trace_hash: summary.trace_hash.clone(),
            ..PointRow::of(job)
        }
    }

    /// `at = "before:claim_task"` in the point's scenario file.
    pub fn at(&self) -> String {
        format!("{}:{}", self.when, self.statement)
    }

    /// `crash of task-01.S1 after:set_needs_review #1`: the fault and where it was placed.
    pub fn placed(&self) -> String {
        format!("{} of {} {} #{}", self.fault, self.session, self.at(), self.nth)
    }
}

impl FailureRow for PointRow {
    fn failed(&self) -> bool {
        self.outcome == PointOutcome::Ran(RunOutcome::Fail)
    }
    fn first_violation(&self) -> &str {
        &self.first_violation
    }
    fn end_states(&self) -> &str {
        &self.end_states
    }
    fn set_failure(&mut self, id: String) {
        self.failure = id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explore_outcome_is_a_run_outcome_or_unreached_and_nothing_else() {
        crate::vocab::word::check::round_trips::<PointOutcome>("unreachable");
        assert_eq!("unreached".parse(), Ok(PointOutcome::Unreached));
        assert_eq!("fail".parse(), Ok(PointOutcome::Ran(RunOutcome::Fail)));
        let fired: Vec<&str> = PointOutcome::ALL.iter().filter(|o| o.fired()).map(|o| o.as_str()).collect();
        assert_eq!(fired, ["pass", "fail"], "an unreached fault or a harness error did not fire a judged run");
    }
}
