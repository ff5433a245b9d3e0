//! one-live-session-per-task: at most one live session works a task.

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::truth::touched_row;
use crate::judging::oracle::{Findings, Seen, SqlFact, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{RuleId, Stmt};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::OneLiveSessionPerTask,
    says: "at most one live session works a task",
    seed: "002 \"Guard Clause Rules\": the atomic claim gives a task to one session",
    consumes: "successful claims, and every musician or watcher write that changes a task row",
    truth: "which sessions of the task are alive (not crashed, not ended, terminal write not made, not past reading that it was replaced) and, at a claim, not frozen by a hang; who owns the row",
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(OneLiveSession)
}

#[derive(Clone)]
pub struct OneLiveSession;

impl Rule for OneLiveSession {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() || f.actor.is_conductor() || touched_row(f).is_none() {
            return;
        }
        if f.statement == Stmt::ClaimTask {
            claim(f, truth, findings);
        } else {
            write_beside_owner(f, truth, findings);
        }
    }
}

/// A claim while another session of the task still works it. A hung session is not working at
/// this instant; if it comes back and writes, `write_beside_owner` judges what it writes.
fn claim(f: &SqlFact, truth: &Truth, findings: &mut Findings) {
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

/// A live session (a woken replaced one, say) writes the row while another live session owns
/// it: two sessions work the task at once, whatever the claims said. The owner writing its
/// own row, a writer or owner that has crashed, ended or made its terminal write, and the
/// conductor (which the caller leaves out) are not two live workers.
fn write_beside_owner(f: &SqlFact, truth: &Truth, findings: &mut Findings) {
    let Some((before, _)) = touched_row(f) else { return };
    let owner = before.session_id.as_str();
    if owner.is_empty() || owner == f.session_id {
        return;
    }
    let live = |id: &str| truth.sessions.get(id).is_some_and(|s| s.task_id == f.task_id && s.is_live_at(f.t_ms));
    if !live(f.session_id) || !live(owner) {
        return;
    }
    let subject = format!("{}:{}:{owner}", f.task_id, f.session_id);
    findings.violate_with(DOC.id, &subject, f.t_ms, || {
        let (writer, other) = (truth.describe(f.session_id), truth.describe(owner));
        format!(
            "at t={} ms {writer} wrote `{}` to {} while {other}, alive and not past its terminal write, owned it: two live sessions work one task",
            f.t_ms, f.statement, f.task_id
        )
    });
}
