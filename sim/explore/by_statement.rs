//! Where each distinct failure was found, by statement (issue 31): the summary names a
//! failure's first point only, and which statements fail took hand aggregation of
//! explore.csv. Per failure: each (statement, before/after, fault) with its runs and the
//! sessions and occurrences (`#nth`) it failed at.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::outcome::{DistinctFailure, PointRow};

/// Sessions' occurrences listed at most, per statement; explore.csv has them all.
const PLACES_MAX: usize = 8;

/// (statement, `before`/`after`, fault).
type Place<'a> = (&'a str, &'a str, &'a str);

/// A failure's failing points grouped by (statement, when, fault), in order of first point:
/// `(statement, when, fault) → ["task-01.S1 #1", …]`.
fn grouped<'a>(rows: &'a [PointRow], failure: &DistinctFailure) -> Vec<(Place<'a>, Vec<String>)> {
    let mut order: Vec<Place> = Vec::new();
    let mut places: BTreeMap<Place, Vec<String>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.failure == failure.id) {
        let key = (row.statement.as_str(), row.when.as_str(), row.fault.as_str());
        if !places.contains_key(&key) {
            order.push(key);
        }
        places.entry(key).or_default().push(format!("{} #{}", row.session, row.nth));
    }
    order.into_iter().map(|key| (key, places.remove(&key).unwrap_or_default())).collect()
}

/// `set_needs_review (crash after ×6), send_review_request (crash before ×6)`: one line for
/// stdout.
pub fn line(rows: &[PointRow], failure: &DistinctFailure) -> String {
    let parts: Vec<String> = grouped(rows, failure)
        .into_iter()
        .map(|((statement, when, fault), at)| format!("{statement} ({fault} {when} ×{})", at.len()))
        .collect();
    parts.join(", ")
}

/// summary.md's section: a table per distinct failure.
pub fn markdown(md: &mut String, rows: &[PointRow], failures: &[DistinctFailure]) {
    if failures.is_empty() {
        return;
    }
    md.push_str("\n## Failing points by statement\n\nEvery point whose fault led to each failure, grouped by statement (`explore.csv` has each run).\n");
    for failure in failures {
        let _ = writeln!(md, "\n### {} — {} ({} run(s))\n", failure.id, failure.first_violation, failure.runs);
        md.push_str("| statement | fault | runs | sessions (occurrence of the statement) |\n| --- | --- | --- | --- |\n");
        for ((statement, when, fault), at) in grouped(rows, failure) {
            let more = if at.len() > PLACES_MAX { format!(", … {} more", at.len() - PLACES_MAX) } else { String::new() };
            let shown = at.iter().take(PLACES_MAX).cloned().collect::<Vec<_>>().join(", ");
            let _ = writeln!(md, "| `{statement}` | {fault} {when} | {} | {shown}{more} |", at.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(session: &str, when: &str, statement: &str, nth: u64, failure: &str) -> PointRow {
        PointRow {
            point: 1,
            session: session.into(),
            when: when.into(),
            statement: statement.into(),
            nth,
            fault: "crash".into(),
            outcome: if failure.is_empty() { "pass" } else { "fail" }.into(),
            failure: failure.into(),
            first_violation: "liveness".into(),
            end_states: String::new(),
            prefix_statements: 0,
            statements: 0,
            trace_hash: String::new(),
        }
    }

    #[test]
    fn a_failures_points_are_grouped_by_statement_in_order_of_first_point() {
        let rows = [
            row("task-01.S1", "after", "set_needs_review", 1, "F1"),
            row("task-01.S1", "before", "claim_task", 1, "F2"),
            row("conductor", "before", "conductor_heartbeat", 3, "F1"),
            row("task-02.S1", "after", "set_needs_review", 2, "F1"),
            row("task-02.S1", "after", "heartbeat", 2, ""),
        ];
        let failure =
            DistinctFailure { id: "F1".into(), first_violation: "liveness".into(), end_states: String::new(), first_row: 0, runs: 3 };
        assert_eq!(line(&rows, &failure), "set_needs_review (crash after ×2), conductor_heartbeat (crash before ×1)");
        let mut md = String::new();
        markdown(&mut md, &rows, &[failure]);
        assert!(md.contains("### F1 — liveness (3 run(s))"), "{md}");
        assert!(md.contains("| `set_needs_review` | crash after | 2 | task-01.S1 #1, task-02.S1 #2 |"), "{md}");
        assert!(md.contains("| `conductor_heartbeat` | crash before | 1 | conductor #3 |"), "{md}");
    }
}
