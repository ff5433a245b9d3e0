//! finished-row-untouched: no session's write changes a task row that is `complete`.

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::truth::touched_row;
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{RuleId, TaskState};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::FinishedRowUntouched,
    says: "no musician or watcher write changes a task row that is complete (002 Terminal States)",
    seed: "002 \"Terminal States\": complete is final; 000 \"Heartbeat Protocol\": watchers stop when their session ends",
    consumes: "musician and watcher writes that change a row",
    truth: "the row's state before the write; whether the writer had made its own terminal write (then nothing-after-terminal judges it)",
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(FinishedRowUntouched)
}

#[derive(Clone)]
pub struct FinishedRowUntouched;

impl Rule for FinishedRowUntouched {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() || f.actor.is_conductor() {
            return;
        }
        let Some((before, after)) = touched_row(f) else { return };
        let own_terminal_done = truth.sessions.get(f.session_id).is_some_and(|s| s.terminal_ms.is_some());
        if before.state != TaskState::Complete || own_terminal_done {
            return;
        }
        let completer = truth.completed_by.get(f.task_id).unwrap_or(&before.session_id);
        findings.violate_with(DOC.id, f.task_id, f.t_ms, || {
            let (writer, owner) = (truth.describe(f.session_id), truth.describe(completer));
            format!(
                "at t={} ms {writer} ran `{}` on {}, which was already `complete` (completed by {owner}); the write changed the finished row (now `{}`) — the seeds' musician statements do not check the row's state",
                f.t_ms, f.statement, f.task_id, after.state
            )
        });
    }
}
