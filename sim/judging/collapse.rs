//! A fleet that collapses says so (issue 43): a conductor or session that ended because a
//! statement failed with SQLITE_BUSY (its tool layer's retries spent, sim/actors/ctx.rs) or an
//! I/O error is found in the run's events and named, with when and after how many SQLITE_BUSY
//! in a row, so a verdict, results.csv and every plot can say the run collapsed rather than
//! show it as a slow one. Whether the conductor gives up at all is docs/protocol.md C62.
//!
//! Kept apart from the liveness explanation (sim/judging/verdict.rs): the verdict adds the
//! sentence this module writes as one line of its own.

use std::collections::BTreeMap;

use crate::vocab::ActorName;
use crate::world::event::{Event, EventKind, SqlResult, Who};

/// Why an actor ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollapseCause {
    Busy,
    IoError,
}

/// One actor that ended on a failed statement.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Collapse {
    /// The actor as the trace names it (`conductor`, `task-03.S1`).
    pub actor: String,
    pub conductor: bool,
    pub t_ms: i64,
    pub statement: String,
    pub cause: CollapseCause,
    /// SQLITE_BUSY answers the actor got in a row, the last one included (0 for an I/O error).
    pub busy_in_a_row: u32,
}

/// Watches the events for actors that end on a failure.
#[derive(Clone, Default)]
pub struct CollapseWatch {
    /// Per actor: SQLITE_BUSY answers since its last statement that was not refused. Keyed by
    /// the name itself, not its text: every statement of a run passes here, and formatting
    /// the name for each was ~5 % of a sweep's run (issue 47).
    busy_streak: BTreeMap<ActorName, u32>,
    pub found: Vec<Collapse>,
}

impl CollapseWatch {
    pub fn on_event(&mut self, event: &Event) {
        let Who::Actor(name) = &event.who else { return };
        match &event.kind {
            EventKind::Sql(sql) => {
                let streak = self.busy_streak.entry(*name).or_insert(0);
                *streak = if matches!(sql.result, SqlResult::Busy(_)) { *streak + 1 } else { 0 };
            }
            EventKind::Note { what, detail } if what == "conductor_sql_failure" || what == "session_sql_failure" => {
                // The note's detail is `statement: message` (sim/actors/conductor/mod.rs, musician/mod.rs).
                let (statement, message) = detail.split_once(": ").unwrap_or((detail.as_str(), ""));
                let cause = if message.contains("SQLITE_BUSY") || message.contains("database is locked") {
                    CollapseCause::Busy
                } else if message.contains("I/O error") || message.contains("SQLITE_IOERR") {
                    CollapseCause::IoError
                } else {
                    return;
                };
                let busy_in_a_row = if cause == CollapseCause::Busy { self.busy_streak.get(name).copied().unwrap_or(0) } else { 0 };
                let actor = name.to_string();
                let conductor = name.is_conductor();
                self.found.push(Collapse { actor, conductor, t_ms: event.t_ms, statement: statement.to_string(), cause, busy_in_a_row });
            }
            _ => {}
        }
    }
}

/// Whether the run collapsed: its conductor ended on a failure (no session can finish a task
/// without the conductor's review, 004 "Request Review").
pub fn conductor_collapsed(found: &[Collapse]) -> bool {
    found.iter().any(|c| c.conductor)
}

/// `1h 02m 03s` for a simulated instant.
fn at(t_ms: i64) -> String {
    let s = t_ms / 1000;
    format!("{}h {:02}m {:02}s", s / 3600, s / 60 % 60, s % 60)
}

/// The verdict's line: who ended, when, on what, and what it left undone, e.g. "the conductor
/// ended at t=0h 12m 03s after 4 SQLITE_BUSY on set_task_state; 0 of 64 tasks complete".
/// Sessions that ended so are counted after the first conductor (or the first session).
pub fn sentence(found: &[Collapse], tasks_complete: usize, tasks_total: usize) -> Option<String> {
    let first = found.iter().find(|c| c.conductor).or_else(|| found.first())?;
    let who = if first.conductor { format!("the conductor ({})", first.actor) } else { format!("session {}", first.actor) };
    let why = match first.cause {
        CollapseCause::Busy => format!("{} SQLITE_BUSY", first.busy_in_a_row),
        CollapseCause::IoError => "an I/O error".to_string(),
    };
    let mut line =
        format!("{who} ended at t={} after {why} on {}; {tasks_complete} of {tasks_total} tasks complete", at(first.t_ms), first.statement);
    let sessions = found.iter().filter(|c| !c.conductor && !std::ptr::eq(*c, first)).count();
    if sessions > 0 {
        line.push_str(&format!("; {sessions} other session(s) ended on SQLITE_BUSY or an I/O error"));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::vocab::{ActorName, Stmt};
    use crate::world::event::SqlEvent;

    fn sql(t_ms: i64, name: ActorName, result: SqlResult) -> Event {
        let sql = SqlEvent {
            stmt: Stmt::SetTaskState,
            task_id: "task-01".into(),
            result,
            rows_affected: 0,
            before: None,
            after: None,
            message: None,
            more_messages: Vec::new(),
            other_rows: Vec::new(),
            polled: Vec::new(),
            params_text: Default::default(),
        };
        Event { t_ms, who: Who::Actor(name), session: Arc::from("s"), kind: EventKind::Sql(Box::new(sql)) }
    }

    fn note(t_ms: i64, name: ActorName, what: &'static str, detail: &str) -> Event {
        let kind = EventKind::Note { what: what.into(), detail: detail.to_string() };
        Event { t_ms, who: Who::Actor(name), session: Arc::from("s"), kind }
    }

    #[test]
    fn a_conductor_that_ends_on_busy_is_named_with_its_busy_in_a_row() {
        let mut watch = CollapseWatch::default();
        let busy = || SqlResult::Busy("database is locked (simulated SQLITE_BUSY after 1000 ms)".into());
        watch.on_event(&sql(1, ActorName::Conductor(1), busy()));
        watch.on_event(&sql(2, ActorName::Conductor(1), SqlResult::Rows(1)));
        for t in 3..7 {
            watch.on_event(&sql(t, ActorName::Conductor(1), busy()));
        }
        watch.on_event(&note(
            723_000,
            ActorName::Conductor(1),
            "conductor_sql_failure",
            "set_task_state: database is locked (simulated SQLITE_BUSY after 1000 ms)",
        ));
        assert!(conductor_collapsed(&watch.found));
        let line = sentence(&watch.found, 0, 64).unwrap();
        assert_eq!(line, "the conductor (conductor) ended at t=0h 12m 03s after 4 SQLITE_BUSY on set_task_state; 0 of 64 tasks complete");
    }

    #[test]
    fn an_io_error_ending_is_named_and_other_failures_and_normal_ends_are_not() {
        let mut watch = CollapseWatch::default();
        watch.on_event(&note(5, ActorName::Conductor(1), "conductor_gave_up", "poll limit reached"));
        watch.on_event(&note(6, ActorName::Conductor(1), "conductor_sql_failure", "create_task: UNIQUE constraint failed"));
        assert_eq!(sentence(&watch.found, 3, 3), None, "a constraint is not a collapse");
        watch.on_event(&note(
            7,
            ActorName::Conductor(2),
            "conductor_sql_failure",
            "poll_tasks: disk I/O error (simulated SQLITE_IOERR, fault io_error)",
        ));
        let line = sentence(&watch.found, 1, 3).unwrap();
        assert!(line.starts_with("the conductor (conductor.S2) ended at t=0h 00m 00s after an I/O error on poll_tasks"), "{line}");
    }
}
