//! Where each distinct failure was found, by statement (issue 31): the summary names a
//! failure's first point only, and which statements fail took hand aggregation of
//! explore.csv. Per failure: each (statement, before/after, fault) with its runs and the
//! sessions and occurrences (`#nth`) it failed at.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::outcome::PointRow;
use crate::campaign::DistinctFailure;

/// Sessions listed at most, per statement; explore.csv has them all.
const SESSIONS_MAX: usize = 8;

/// `task-01.S1 #1-3, #7; conductor #2`: each session once, its occurrences as runs of
/// consecutive numbers.
fn compact(at: &[(&str, u64)]) -> String {
    let mut sessions: Vec<(&str, Vec<u64>)> = Vec::new();
    for (session, nth) in at {
        match sessions.iter_mut().find(|(s, _)| s == session) {
            Some((_, nths)) => nths.push(*nth),
            None => sessions.push((session, vec![*nth])),
        }
    }
    let more = sessions.len().saturating_sub(SESSIONS_MAX);
    let mut parts: Vec<String> = sessions
        .iter_mut()
        .take(SESSIONS_MAX)
        .map(|(session, nths)| {
            nths.sort_unstable();
            let mut runs: Vec<(u64, u64)> = Vec::new();
            for n in nths.iter() {
                match runs.last_mut() {
                    Some((_, last)) if *last + 1 == *n => *last = *n,
                    _ => runs.push((*n, *n)),
                }
            }
            let runs: Vec<String> = runs.iter().map(|(a, b)| if a == b { format!("#{a}") } else { format!("#{a}-{b}") }).collect();
            format!("{session} {}", runs.join(", "))
        })
        .collect();
    if more > 0 {
        parts.push(format!("… {more} more session(s)"));
    }
    parts.join("; ")
}

/// (statement, `before`/`after`, fault).
type Place<'a> = (&'a str, &'a str, &'a str);

/// A failure's failing points grouped by (statement, when, fault), in order of first point:
/// `(statement, when, fault) → ["task-01.S1 #1", …]`.
fn grouped<'a>(rows: &'a [PointRow], failure: &DistinctFailure) -> Vec<(Place<'a>, Vec<(&'a str, u64)>)> {
    let mut order: Vec<Place> = Vec::new();
    let mut places: BTreeMap<Place, Vec<(&str, u64)>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.failure == failure.id) {
        let key = (row.statement.as_str(), row.when.as_str(), row.fault.as_str());
        if !places.contains_key(&key) {
            order.push(key);
        }
        places.entry(key).or_default().push((row.session.as_str(), row.nth));
    }
    let mut out: Vec<(Place, Vec<(&str, u64)>)> = order.into_iter().map(|key| (key, places.remove(&key).unwrap_or_default())).collect();
    // Most runs first; a stable sort keeps the order of first point among equals.
    out.sort_by_key(|(_, at)| std::cmp::Reverse(at.len()));
    out
}

/// Statements listed at most on stdout's line; summary.md lists them all.
const LINE_STATEMENTS_MAX: usize = 6;

/// `read_task_state ×46 (crash before 23, after 23), set_needs_review ×2 (crash after 2)`:
/// one line for stdout, by statement, most runs first.
pub fn line(rows: &[PointRow], failure: &DistinctFailure) -> String {
    // (statement, runs, the fault named last, `crash before 23, after 23`).
    let mut statements: Vec<(&str, usize, &str, Vec<String>)> = Vec::new();
    for ((statement, when, fault), at) in grouped(rows, failure) {
        let i = statements.iter().position(|(s, ..)| *s == statement).unwrap_or_else(|| {
            statements.push((statement, 0, "", Vec::new()));
            statements.len() - 1
        });
        let entry = &mut statements[i];
        entry.1 += at.len();
        let named = if entry.2 == fault { String::new() } else { format!("{fault} ") };
        entry.2 = fault;
        entry.3.push(format!("{named}{when} {}", at.len()));
    }
    statements.sort_by_key(|(_, runs, ..)| std::cmp::Reverse(*runs));
    let more = statements.len().saturating_sub(LINE_STATEMENTS_MAX);
    let mut parts: Vec<String> =
        statements.iter().take(LINE_STATEMENTS_MAX).map(|(s, runs, _, how)| format!("{s} ×{runs} ({})", how.join(", "))).collect();
    if more > 0 {
        parts.push(format!("… {more} more statement(s) in summary.md"));
    }
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
            let _ = writeln!(md, "| `{statement}` | {fault} {when} | {} | {} |", at.len(), compact(&at));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::outcome::PointOutcome;
    use super::*;
    use crate::vocab::RunOutcome;

    fn row(session: &str, when: &str, statement: &str, nth: u64, failure: &str) -> PointRow {
        PointRow {
            point: 1,
            session: session.into(),
            when: when.into(),
            statement: statement.into(),
            nth,
            fault: "crash".into(),
            outcome: PointOutcome::Ran(if failure.is_empty() { RunOutcome::Pass } else { RunOutcome::Fail }),
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
        assert_eq!(line(&rows, &failure), "set_needs_review ×2 (crash after 2), conductor_heartbeat ×1 (crash before 1)");
        let mut md = String::new();
        markdown(&mut md, &rows, &[failure]);
        assert!(md.contains("### F1 — liveness (3 run(s))"), "{md}");
        assert!(md.contains("| `set_needs_review` | crash after | 2 | task-01.S1 #1; task-02.S1 #2 |"), "{md}");
        assert_eq!(compact(&[("a", 3), ("b", 1), ("a", 1), ("a", 2), ("a", 7)]), "a #1-3, #7; b #1");
        assert!(md.contains("| `conductor_heartbeat` | crash before | 1 | conductor #3 |"), "{md}");
    }
}
