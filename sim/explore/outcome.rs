//! What each run of an exploration came to (a row of explore.csv), and the distinct
//! failures: runs that fail with the same first violated rule and leave `comms.db`'s task
//! rows in the same states are one failure, found at each of their points.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::points::Job;
use crate::run::RunSummary;

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
    pub outcome: String,
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
            outcome: "error".to_string(),
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
            (true, _) => "unreached",
            (false, true) => "pass",
            (false, false) => "fail",
        };
        PointRow {
            outcome: outcome.to_string(),
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

pub fn end_states(rows: &[(String, crate::vocab::TaskState)]) -> String {
    rows.iter().map(|(task, state)| format!("{task}={state}")).collect::<Vec<_>>().join(" ")
}

/// A distinct failure: its first violated rule and end states, and where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistinctFailure {
    /// `F1`, `F2`, … in the order of their first point.
    pub id: String,
    pub first_violation: String,
    pub end_states: String,
    /// Index in the rows of its first run (the one its replay file reproduces).
    pub first_row: usize,
    pub runs: usize,
}

impl DistinctFailure {
    /// `F1-liveness`: the name of its replay file and run folder.
    pub fn file_stem(&self) -> String {
        let slug: String =
            self.first_violation.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
        let slug: Vec<&str> = slug.split('-').filter(|w| !w.is_empty()).collect();
        format!("{}-{}", self.id, slug.join("-").chars().take(48).collect::<String>().trim_end_matches('-'))
    }
}

/// A row of runs that failures are grouped over: explore.csv's and schedules.csv's.
pub trait FailureRow {
    /// `pass`, `fail`, `error`, `unreached`: only `fail` rows are grouped.
    fn outcome(&self) -> &str;
    fn first_violation(&self) -> &str;
    fn end_states(&self) -> &str;
    fn set_failure(&mut self, id: String);
}

impl FailureRow for PointRow {
    fn outcome(&self) -> &str {
        &self.outcome
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

/// Groups the failing rows by first violated rule and end states (in row order, so the
/// numbering does not depend on `--jobs`) and writes each row's failure id.
pub fn group<R: FailureRow>(rows: &mut [R]) -> Vec<DistinctFailure> {
    let mut index: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut failures: Vec<DistinctFailure> = Vec::new();
    for (at, row) in rows.iter_mut().enumerate().filter(|(_, r)| r.outcome() == "fail") {
        let key = (row.first_violation().to_string(), row.end_states().to_string());
        let n = *index.entry(key).or_insert_with(|| {
            failures.push(DistinctFailure {
                id: format!("F{}", failures.len() + 1),
                first_violation: row.first_violation().to_string(),
                end_states: row.end_states().to_string(),
                first_row: at,
                runs: 0,
            });
            failures.len() - 1
        });
        failures[n].runs += 1;
        row.set_failure(failures[n].id.clone());
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(outcome: &str, rule: &str, states: &str) -> PointRow {
        PointRow {
            point: 1,
            session: "task-01.S1".into(),
            when: "before".into(),
            statement: "claim_task".into(),
            nth: 1,
            fault: "crash".into(),
            outcome: outcome.into(),
            failure: String::new(),
            first_violation: rule.into(),
            end_states: states.into(),
            prefix_statements: 0,
            statements: 0,
            trace_hash: String::new(),
        }
    }

    #[test]
    fn failures_with_the_same_rule_and_end_states_are_one() {
        let mut rows = vec![
            row("pass", "", "task-01=complete"),
            row("fail", "liveness", "task-01=watching"),
            row("fail", "liveness", "task-01=fix_proposed"),
            row("fail", "liveness", "task-01=watching"),
            row("unreached", "", "task-01=complete"),
        ];
        let failures = group(&mut rows);
        let found: Vec<(&str, &str, usize, usize)> =
            failures.iter().map(|f| (f.id.as_str(), f.end_states.as_str(), f.first_row, f.runs)).collect();
        assert_eq!(found, [("F1", "task-01=watching", 1, 2), ("F2", "task-01=fix_proposed", 2, 1)]);
        let ids: Vec<&str> = rows.iter().map(|r| r.failure.as_str()).collect();
        assert_eq!(ids, ["", "F1", "F2", "F1", ""]);
        let odd = DistinctFailure { first_violation: "expected violation(s) did not occur: x".into(), ..failures[0].clone() };
        assert_eq!(odd.file_stem(), "F1-expected-violation-s-did-not-occur-x");
    }
}
