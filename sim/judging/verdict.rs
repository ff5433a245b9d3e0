//! The run's verdict: the oracles' violations (sim/judging/oracle.rs), liveness read from the
//! database itself at the end, and the scenario's expected violations. The headline names
//! the first violated rule; the explanation says in words what happened.

use std::collections::BTreeSet;

use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;
use crate::judging::oracle::{Checker, Violation};
use crate::vocab::Ending;
use crate::vocab::{TaskState, CONDUCTOR_TASK_ID};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub passed: bool,
    /// Why it failed, in a few words: the first unexpected rule, or the expected violations
    /// that did not occur (empty when it passed). Results files and shrinking key on it.
    pub failure: String,
    pub headline: String,
    pub explanation: Vec<String>,
    /// Every violation, in order of time.
    pub violations: Vec<Violation>,
    /// The assumptions of the repaired profile's proof the run's configuration is outside of,
    /// each a line with why (sim/judging/outside.rs; issue 48): its result says nothing of the
    /// profile's guarantee.
    pub outside: Vec<String>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.passed
    }

    pub fn headline(&self) -> String {
        self.headline.clone()
    }

    pub fn explanation(&self) -> Vec<String> {
        self.explanation.clone()
    }

    /// The distinct rules violated, sorted.
    pub fn rules(&self) -> Vec<&'static str> {
        let set: BTreeSet<&'static str> = self.violations.iter().map(|v| v.rule.as_str()).collect();
        set.into_iter().collect()
    }

    /// The violation the run failed on: the first of the failing rule (`None` when it passed,
    /// or failed for an expected violation that did not occur).
    pub fn failing_violation(&self) -> Option<&Violation> {
        self.violations.iter().find(|v| v.rule.as_str() == self.failure)
    }

    /// The first violation, if any: what a sweep's results.csv records.
    pub fn first_rule(&self) -> &str {
        self.violations.first().map_or("", |v| v.rule.as_str())
    }
}

/// The headline of a run that passed with violations its scenario expects or allows: never a
/// bare PASS (issue 25), but `PASS with known: owner-writes-only ×44, budget ×2` (violations
/// of each rule, in rule order).
fn with_known(violations: &[Violation]) -> String {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for v in violations {
        *counts.entry(v.rule.as_str()).or_insert(0) += 1;
    }
    let listed: Vec<String> = counts.iter().map(|(rule, n)| format!("{rule} ×{n}")).collect();
    format!("PASS with known: {}", listed.join(", "))
}

/// Tasks of the scenario (not the conductor's, not fallback rows) in `state`.
pub fn tasks_in_state(conn: &rusqlite::Connection, state: TaskState) -> Result<usize> {
    // Cached: every run of a campaign on a kept connection (sim/world/db_pool.rs) asks it.
    let n: i64 = conn
        .prepare_cached("SELECT count(*) FROM orchestration_tasks WHERE task_id != ?1 AND task_id NOT LIKE 'fallback-%' AND state = ?2")?
        .query_row(rusqlite::params![CONDUCTOR_TASK_ID, state.as_str()], |r| r.get(0))?;
    Ok(n as usize)
}

/// Every task row but fallback rows (the conductor's included), with its state, by task id.
pub fn task_states(conn: &rusqlite::Connection) -> Result<Vec<(String, TaskState)>> {
    let mut stmt =
        conn.prepare_cached("SELECT task_id, state FROM orchestration_tasks WHERE task_id NOT LIKE 'fallback-%' ORDER BY task_id")?;
    let rows: Vec<(String, String)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    // The schema's CHECK constraint admits only the eleven states: other text is the harness's error.
    rows.into_iter()
        .map(|(task, state)| state.parse().map(|state| (task, state)).map_err(|e| Error::harness(format!("comms.db: {e}"))))
        .collect()
}

/// Liveness from the database: every task `complete`, the conductor in an exit state.
/// `describe` names a session the way the oracles do (with its crash, hangs and end).
fn liveness_facts(conn: &rusqlite::Connection, scenario: &Scenario, describe: &dyn Fn(&str) -> String) -> Result<Vec<String>> {
    let rows = task_states(conn)?;
    let holders = task_sessions(conn)?;
    let mut unfinished = Vec::new();
    let mut facts = Vec::new();
    for plan in &scenario.tasks {
        match rows.iter().find(|(id, _)| *id == plan.task_id) {
            Some((_, TaskState::Complete)) => {}
            Some((id, state)) => unfinished.push((id.clone(), *state, holders.get(id).cloned().flatten())),
            None => facts.push(format!("{} has no row in orchestration_tasks", plan.task_id)),
        }
    }
    facts.splice(0..0, unfinished_facts(&unfinished, scenario.tasks.len(), describe));
    match rows.iter().find(|(id, _)| id == CONDUCTOR_TASK_ID) {
        Some((_, TaskState::Complete | TaskState::ExitRequested)) => {}
        Some((_, state)) => facts.push(format!("the conductor (task-00) ended in `{state}`, not an exit state")),
        None => facts.push("the conductor never registered task-00".to_string()),
    }
    Ok(facts)
}

/// Each task row's session_id (NULL: no session holds it), by task id.
fn task_sessions(conn: &rusqlite::Connection) -> Result<std::collections::BTreeMap<String, Option<String>>> {
    let mut stmt = conn.prepare_cached("SELECT task_id, session_id FROM orchestration_tasks WHERE task_id NOT LIKE 'fallback-%'")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// A task not `complete` at the end: its id, its state and the session its row names.
pub type Unfinished = (String, TaskState, Option<String>);

/// The tasks not `complete` at the end (id, state, the session the row names), as liveness
/// says them: one fact a task when there are few (`task-06 ended in `review_approved`, not
/// `complete``), else one a state, largest first, with how many of `total`, the tasks (a
/// long list cut), whether any session ever held them, and one session that did, described
/// (how it ended), so that a collapsed run of 64 musicians reads in a few lines.
pub fn unfinished_facts(
    unfinished: &[(String, TaskState, Option<String>)],
    total: usize,
    describe: &dyn Fn(&str) -> String,
) -> Vec<String> {
    const FEW: usize = 3;
    if unfinished.len() <= FEW {
        return unfinished.iter().map(|(id, state, _)| format!("{id} ended in `{state}`, not `complete`")).collect();
    }
    let mut by_state: Vec<(TaskState, Vec<&Unfinished>)> = Vec::new();
    for row in unfinished {
        match by_state.iter_mut().find(|(state, _)| *state == row.1) {
            Some((_, rows)) => rows.push(row),
            None => by_state.push((row.1, vec![row])),
        }
    }
    by_state.sort_by_key(|(state, rows)| (std::cmp::Reverse(rows.len()), state.as_str()));
    by_state
        .iter()
        .map(|(state, rows)| {
            let ids: Vec<&str> = rows.iter().map(|(id, _, _)| id.as_str()).collect();
            let listed = if ids.len() > 6 { format!("{}, …, {}", ids[..3].join(", "), ids[ids.len() - 1]) } else { ids.join(", ") };
            let held: Vec<&Unfinished> = rows.iter().copied().filter(|(_, _, sid)| sid.is_some()).collect();
            let holders = match held.first() {
                None if *state == TaskState::Watching => "never claimed (no session_id)".to_string(),
                None => "no session holds them (no session_id)".to_string(),
                Some((id, _, Some(sid))) => {
                    let how_many = if held.len() == rows.len() {
                        "each held by its session".to_string()
                    } else {
                        format!("{} held by a session", held.len())
                    };
                    format!("{how_many}, e.g. {id} by {}", describe(sid))
                }
                Some(_) => unreachable!("filtered on a session"),
            };
            format!("{} of {total} tasks stuck in `{state}` ({listed}): {holders}", rows.len())
        })
        .collect()
}

/// The verdict of a run: `checker` has consumed the run's events; `conn` is its `comms.db`
/// (the run's own connection, or a finished run's opened read-only by `rehearsal judge`).
pub fn judge(conn: &rusqlite::Connection, scenario: &Scenario, ending: Ending, end_ms: i64, mut checker: Checker) -> Result<Verdict> {
    checker.finish(end_ms, &crate::judging::oracle::rules::budget::limits(scenario));
    let collapsed =
        crate::judging::collapse::sentence(checker.collapses(), tasks_in_state(conn, TaskState::Complete)?, scenario.tasks.len());
    let facts = liveness_facts(conn, scenario, &|sid| checker.describe_session(sid))?;
    if !facts.is_empty() {
        let why = match ending {
            Ending::TimeLimit => format!("not every task completed within run.sim_time_max_ms = {} ms", scenario.run.sim_time_max_ms),
            Ending::Quiescent => "every actor stopped, with these rows not complete".to_string(),
        };
        checker.add_liveness(end_ms, format!("{why}: {}", facts.join("; ")));
    }
    let mut violations = checker.into_violations();
    violations.sort_by_key(|v| v.t_ms);
    let expected: BTreeSet<&str> = scenario.expect.violations.iter().map(String::as_str).collect();
    let seen: BTreeSet<&str> = violations.iter().map(|v| v.rule.as_str()).collect();
    let allowed: BTreeSet<&str> = scenario.expect.allowed.iter().map(String::as_str).collect();
    let unexpected = violations.iter().find(|v| !expected.contains(v.rule.as_str()) && !allowed.contains(v.rule.as_str()));
    let missing: Vec<&str> = expected.difference(&seen).copied().collect();
    let mut verdict = if let Some(first) = unexpected {
        let rule = crate::judging::oracle::RULES.iter().find(|r| r.id == first.rule).map_or("", |r| r.says);
        let mut explanation = vec![format!("rule: {rule}"), first.explanation.clone()];
        let others = violations.iter().filter(|v| !std::ptr::eq(*v, first)).count();
        if others > 0 {
            explanation.push(format!("({others} more violation(s); see violations in the run folder)"));
        }
        let failure = first.rule.to_string();
        Verdict { passed: false, headline: format!("FAIL: {failure}"), failure, explanation, violations, outside: Vec::new() }
    } else if !missing.is_empty() {
        let failure = format!("expected violation(s) did not occur: {}", missing.join(", "));
        Verdict {
            passed: false,
            headline: format!("FAIL: {failure}"),
            failure,
            explanation: vec!["the scenario declares a known protocol flaw that this run did not show".to_string()],
            violations,
            outside: Vec::new(),
        }
    } else if !expected.is_empty() || !violations.is_empty() {
        let explanation = violations.iter().map(|v| format!("expected {}: {}", v.rule, v.explanation)).take(3).collect();
        Verdict { passed: true, failure: String::new(), headline: with_known(&violations), explanation, violations, outside: Vec::new() }
    } else {
        Verdict {
            passed: true,
            failure: String::new(),
            headline: "PASS".to_string(),
            explanation: Vec::new(),
            violations,
            outside: Vec::new(),
        }
    };
    // A line of its own, beside (not inside) the liveness explanation: who ended the run early.
    verdict.explanation.extend(collapsed);
    verdict.outside = crate::judging::outside::outside_lines(scenario);
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_unfinished_tasks_are_named_one_by_one_and_many_grouped_by_state() {
        let describe = |sid: &str| format!("session {sid}");
        let few = [("task-06".to_string(), TaskState::ReviewApproved, Some("s6".to_string()))];
        assert_eq!(unfinished_facts(&few, 6, &describe), ["task-06 ended in `review_approved`, not `complete`"]);
        let mut many: Vec<Unfinished> = (1..=62).map(|n| (format!("task-{n:02}"), TaskState::Watching, None)).collect();
        many.push(("task-63".to_string(), TaskState::Working, Some("s63".to_string())));
        many.push(("task-64".to_string(), TaskState::Working, None));
        assert_eq!(
            unfinished_facts(&many, 64, &describe),
            [
                "62 of 64 tasks stuck in `watching` (task-01, task-02, task-03, …, task-62): never claimed (no session_id)",
                "2 of 64 tasks stuck in `working` (task-63, task-64): 1 held by a session, e.g. task-63 by session s63",
            ]
        );
    }
}
