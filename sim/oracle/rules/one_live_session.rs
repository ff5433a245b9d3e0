//! one-live-session-per-task: at most one live session works a task.

use super::{Meaning, Rule, RuleDoc};
use crate::oracle::truth::touched_row;
use crate::oracle::{Findings, Seen, Truth};
use crate::vocab::{RuleId, Stmt};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::OneLiveSessionPerTask,
    says: "at most one live session works a task",
    seed: "002 \"Guard Clause Rules\": the atomic claim gives a task to one session",
    consumes: "successful claims",
    truth:
        "which sessions of the task are alive (not crashed, not ended, terminal write not made) and not frozen by a hang, and have written",
    meaning: Meaning::ProtocolFlaw,
};

pub struct OneLiveSession;

impl Rule for OneLiveSession {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() || f.statement != Stmt::ClaimTask || touched_row(f).is_none() {
            return;
        }
        // A hung session is not working at this instant; if it comes back and writes, the
        // ownership rule judges what it writes.
        let rivals = truth.sessions.iter().filter(|(id, s)| {
            id.as_str() != f.session_id
                && s.task_id == f.task_id
                && s.is_live_at(f.t_ms)
                && s.last_write.is_some()
                && s.hung_at(f.t_ms).is_none()
        });
        for (rival, _) in rivals {
            findings.violate_with(DOC.id, f.task_id, f.t_ms, || {
                let (claimer, other) = (truth.describe(f.session_id), truth.describe(rival));
                format!(
                    "at t={} ms {claimer} claimed {} while {other} was still alive and had not made its terminal write: two live sessions now work one task",
                    f.t_ms, f.task_id
                )
            });
        }
    }
}
