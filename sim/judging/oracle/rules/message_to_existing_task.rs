//! message-to-existing-task: every message is written to a task that has a row.

use std::collections::BTreeSet;

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::RuleId;

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::MessageToExistingTask,
    says: "every message is written to a task that has a row in orchestration_tasks",
    seed: "004 \"Database\": a message's `task_id` names the task it concerns, and 004 \"Initial State\" creates every row before its launch; 000 \"Background Watcher Prompt Template\" and \"Emergency Messages\": a session reads only messages `WHERE task_id = '[task-id]'`, so a message to a task with no row reaches no session",
    consumes: "every message a statement inserted (each row of a multi-row insert); every write and poll, for the rows that exist",
    truth: "the task rows seen created, written or polled so far",
    meaning: Meaning::SimulatorOrSqlBug,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(MessageToExistingTask::default())
}

#[derive(Clone, Default)]
pub struct MessageToExistingTask {
    /// Task ids whose row the run has shown to exist.
    rows: BTreeSet<String>,
}

impl MessageToExistingTask {
    fn know(&mut self, task_id: &str) {
        if !self.rows.contains(task_id) {
            self.rows.insert(task_id.to_string());
        }
    }
}

impl Rule for MessageToExistingTask {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() {
            return;
        }
        // The rows as they stand after the statement: the message goes in with its row (a
        // row the same statement created counts).
        if f.after.is_some() {
            self.know(f.task_id);
        }
        for task in f.other_rows.iter().chain(f.polled.iter().map(|(task, _, _)| task)) {
            self.know(task);
        }
        for (id, task, kind) in f.messages() {
            if self.rows.contains(task.as_str()) {
                continue;
            }
            let writer = if f.actor.is_conductor() { "the conductor".to_string() } else { truth.describe(f.session_id) };
            findings.violate_with(DOC.id, task, f.t_ms, || {
                format!(
                    "at t={} ms {writer} ran `{}` for {}, which wrote message {id} ({kind}) to {task}, a task with no row in orchestration_tasks: no session of {task} exists to read it, and {} never gets it",
                    f.t_ms, f.statement, f.task_id, f.task_id
                )
            });
        }
    }
}
