//! `rehearsal judge --db` on a comms.db with no recorded history: what the final tables alone
//! show (liveness, messages to tasks with no row, retry_count past 5, a `complete` row without
//! its completion report; two sessions' completion reports for one task are said, not judged). Every other rule
//! needs the recorder (scenarios/recorder/install.sql) or the simulator, and says so.

use std::path::Path;

use rusqlite::Connection;

use crate::base::error::{Error, Result};
use crate::campaign::judge_sources::{source_of, DbJudgement, RuleVerdict, Source};
use crate::input::scenario::Scenario;
use crate::judging::oracle::Violation;
use crate::judging::verdict::task_states;
use crate::vocab::{RuleId, TaskState, CONDUCTOR_TASK_ID};

/// Liveness from the tables: every task `complete` (the scenario's, or every task row but
/// fallback rows), the conductor in an exit state (sim/judging/verdict.rs's reading).
pub fn liveness(conn: &Connection, scenario: Option<&Scenario>) -> Result<Vec<String>> {
    let rows = task_states(conn).map_err(|e| Error::input(format!("comms.db: {e}")))?;
    let tasks: Vec<String> = match scenario {
        Some(scenario) => scenario.tasks.iter().map(|t| t.task_id.clone()).collect(),
        None => rows.iter().map(|(id, _)| id.clone()).filter(|id| id != CONDUCTOR_TASK_ID).collect(),
    };
    let mut facts = Vec::new();
    for task in &tasks {
        match rows.iter().find(|(id, _)| id == task) {
            Some((_, TaskState::Complete)) => {}
            Some((id, state)) => facts.push(format!("{id} ended in `{state}`, not `complete`")),
            None => facts.push(format!("{task} has no row in orchestration_tasks")),
        }
    }
    match rows.iter().find(|(id, _)| id == CONDUCTOR_TASK_ID) {
        Some((_, TaskState::Complete | TaskState::ExitRequested)) => {}
        Some((_, state)) => facts.push(format!("the conductor (task-00) ended in `{state}`, not an exit state")),
        None => facts.push("the conductor never registered task-00".to_string()),
    }
    Ok(facts)
}

fn strings(conn: &Connection, sql: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    rows.collect()
}

/// The facts the final tables show, by rule.
fn table_facts(conn: &Connection, scenario: Option<&Scenario>) -> Result<Vec<(RuleId, String)>> {
    let mut facts: Vec<(RuleId, String)> = liveness(conn, scenario)?.into_iter().map(|f| (RuleId::Liveness, f)).collect();
    let queries: [(RuleId, &str); 4] = [
        (
            RuleId::MessageToExistingTask,
            "SELECT 'message ' || id || ' (' || coalesce(message_type, '?') || ', from ' || from_session || ') is to ' || task_id || ', a task with no row in orchestration_tasks' FROM orchestration_messages m WHERE NOT EXISTS (SELECT 1 FROM orchestration_tasks t WHERE t.task_id = m.task_id) ORDER BY id",
        ),
        (RuleId::RetryCountAtMost5, "SELECT task_id || ' holds retry_count = ' || retry_count || ' (more than 5) at the end' FROM orchestration_tasks WHERE retry_count > 5 ORDER BY task_id"),
        (
            RuleId::CompletedOnce,
            "SELECT task_id || ' has completion reports from ' || count(DISTINCT from_session) || ' sessions (' || group_concat(DISTINCT from_session) || ')' FROM orchestration_messages WHERE message_type = 'completion' GROUP BY task_id HAVING count(DISTINCT from_session) > 1 ORDER BY task_id",
        ),
        (
            RuleId::MessageBeforeState,
            "SELECT task_id || ' is `complete` (by ' || coalesce(session_id, 'no session') || ') with no completion report from that session (004 \"Mark Complete\": the `completion` message, then the state)' FROM orchestration_tasks t WHERE state = 'complete' AND task_id != 'task-00' AND NOT EXISTS (SELECT 1 FROM orchestration_messages m WHERE m.task_id = t.task_id AND m.message_type = 'completion' AND m.from_session = t.session_id) ORDER BY task_id",
        ),
    ];
    for (rule, sql) in queries {
        let found = strings(conn, sql).map_err(|e| Error::input(format!("comms.db: {e}")))?;
        facts.extend(found.into_iter().map(|f| (rule, f)));
    }
    Ok(facts)
}

/// Judges what the final tables show; the rest needs the recorder.
pub fn judge_tables(conn: &Connection, scenario: Option<&Scenario>, path: &Path) -> Result<DbJudgement> {
    let (facts, hints): (Vec<_>, Vec<_>) = table_facts(conn, scenario)?.into_iter().partition(|(rule, _)| *rule != RuleId::CompletedOnce);
    let from_tables = [RuleId::Liveness, RuleId::MessageToExistingTask, RuleId::RetryCountAtMost5, RuleId::MessageBeforeState];
    let rules = RuleId::ALL
        .iter()
        .map(|&rule| {
            let verdict = if rule == RuleId::CompletedOnce {
                // A completion report precedes a review that may reject it (000 Execution
                // Queries 8): two sessions' reports suggest a double completion, they do not
                // show one. Said, never judged.
                let shown: Vec<&str> = hints.iter().map(|(_, hint)| hint.as_str()).collect();
                let what = if shown.is_empty() { String::new() } else { format!(" (the final tables show: {})", shown.join("; ")) };
                RuleVerdict::NotJudged(format!("which session's write completed the row needs the recorded history{what}"))
            } else if from_tables.contains(&rule) {
                let violations = facts.iter().filter(|(r, _)| *r == rule).count();
                let from =
                    if rule == RuleId::Liveness { "the final tables" } else { "the final tables only (the rest of it needs the recorder)" };
                RuleVerdict::Judged { from, violations }
            } else {
                match source_of(rule) {
                    Source::Simulator(why) => RuleVerdict::NotJudged(why.to_string()),
                    _ => RuleVerdict::NotJudged(
                        "needs the recorded history: install the recorder (`rehearsal record install DB`) before the fleet runs"
                            .to_string(),
                    ),
                }
            };
            (rule, verdict)
        })
        .collect();
    let violations = facts
        .into_iter()
        .map(|(rule, fact)| Violation { rule, t_ms: 0, explanation: format!("in the final tables: {fact}"), first: true, point: None })
        .collect();
    let header = vec![format!(
        "{}: no recorded history (no rehearsal_history table): judged from the final tables only; the rest needs the recorder (scenarios/recorder/install.sql)",
        path.display()
    )];
    Ok(DbJudgement { header, rules, violations, unexplained: Vec::new(), start_unix_ms: 0 })
}
