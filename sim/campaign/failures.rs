//! Distinct failures: a campaign's failing runs that break the same first rule and leave
//! `comms.db`'s task rows in the same states are one failure, numbered in row order (so the
//! numbering does not depend on `--jobs`); and the outcome of a whole campaign.

use std::collections::BTreeMap;

use crate::vocab::RunOutcome;

/// Every task row's state at the end: `task-00=complete task-01=watching`.
pub fn end_states(rows: &[(String, crate::vocab::TaskState)]) -> String {
    rows.iter().map(|(task, state)| format!("{task}={state}")).collect::<Vec<_>>().join(" ")
}

/// A distinct failure: its first violated rule and end states, and where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistinctFailure {
    /// `F1`, `F2`, … in the order of their first row.
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
    /// Whether the run failed (the protocol, not the harness): only those rows are grouped.
    fn failed(&self) -> bool;
    fn first_violation(&self) -> &str;
    fn end_states(&self) -> &str;
    fn set_failure(&mut self, id: String);
}

/// Groups the failing rows by first violated rule and end states (in row order) and writes
/// each row's failure id.
pub fn group<R: FailureRow>(rows: &mut [R]) -> Vec<DistinctFailure> {
    let mut index: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut failures: Vec<DistinctFailure> = Vec::new();
    for (at, row) in rows.iter_mut().enumerate().filter(|(_, r)| r.failed()) {
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

/// A campaign's outcome: a harness error in any run (exit 3), else a failure it found (1),
/// else a pass.
pub fn outcome(any_error: bool, any_failure: bool) -> RunOutcome {
    if any_error {
        RunOutcome::Error
    } else if any_failure {
        RunOutcome::Fail
    } else {
        RunOutcome::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Row {
        failed: bool,
        rule: &'static str,
        states: &'static str,
        failure: String,
    }

    impl FailureRow for Row {
        fn failed(&self) -> bool {
            self.failed
        }
        fn first_violation(&self) -> &str {
            self.rule
        }
        fn end_states(&self) -> &str {
            self.states
        }
        fn set_failure(&mut self, id: String) {
            self.failure = id;
        }
    }

    fn row(outcome: &'static str, rule: &'static str, states: &'static str) -> Row {
        Row { failed: outcome == "fail", rule, states, failure: String::new() }
    }

    #[test]
    fn failures_with_the_same_rule_and_end_states_are_one() {
        let mut rows = vec![
            row("pass", "", "task-01=complete"),
            row("fail", "liveness", "task-01=watching"),
            row("fail", "liveness", "task-01=fix_proposed"),
            row("fail", "liveness", "task-01=watching"),
            row("unreached", "", "task-01=complete"),
            row("error", "harness: x", ""),
        ];
        let failures = group(&mut rows);
        let found: Vec<(&str, &str, usize, usize)> =
            failures.iter().map(|f| (f.id.as_str(), f.end_states.as_str(), f.first_row, f.runs)).collect();
        assert_eq!(found, [("F1", "task-01=watching", 1, 2), ("F2", "task-01=fix_proposed", 2, 1)]);
        let ids: Vec<&str> = rows.iter().map(|r| r.failure.as_str()).collect();
        assert_eq!(ids, ["", "F1", "F2", "F1", "", ""]);
        let odd = DistinctFailure { first_violation: "expected violation(s) did not occur: x".into(), ..failures[0].clone() };
        assert_eq!(odd.file_stem(), "F1-expected-violation-s-did-not-occur-x");
        assert_eq!(
            end_states(&[("task-00".into(), crate::vocab::TaskState::Complete), ("task-01".into(), crate::vocab::TaskState::Watching)]),
            "task-00=complete task-01=watching"
        );
    }

    #[test]
    fn an_error_outweighs_a_failure_which_outweighs_a_pass() {
        assert_eq!(outcome(true, true), RunOutcome::Error);
        assert_eq!(outcome(true, false), RunOutcome::Error);
        assert_eq!(outcome(false, true), RunOutcome::Fail);
        assert_eq!(outcome(false, false), RunOutcome::Pass);
    }
}
