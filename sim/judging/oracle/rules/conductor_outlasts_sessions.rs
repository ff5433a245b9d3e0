//! conductor-outlasts-sessions: the conductor does not end while a task's owner still works.

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{RuleId, Stmt, TaskState};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::ConductorOutlastsSessions,
    says: "the conductor does not end while the owner of a task row is still alive and working",
    seed: "004 stop-hook exit criteria (the conductor ends in complete or exit_requested); 000 \"Pause Watcher\" (musicians judge the conductor alive by task-00's heartbeat)",
    consumes: "the conductor's own state change to complete or exit_requested",
    truth: "each task row's owner, and whether that session is alive (not crashed, ended, or past its terminal write)",
    meaning: Meaning::ConductorPolicy,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(ConductorOutlastsSessions)
}

#[derive(Clone)]
pub struct ConductorOutlastsSessions;

impl Rule for ConductorOutlastsSessions {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        let ending = f.after.is_some_and(|a| matches!(a.state, TaskState::Complete | TaskState::ExitRequested));
        if f.failure.is_some() || f.statement != Stmt::ConductorSetState || !ending {
            return;
        }
        for (task_id, owner) in &truth.owner {
            let working = truth.sessions.get(owner).is_some_and(|s| s.is_live_at(f.t_ms));
            if task_id == crate::vocab::CONDUCTOR_TASK_ID || !working {
                continue;
            }
            let who = truth.describe(owner);
            let hung = truth
                .sessions
                .get(owner)
                .and_then(|s| s.hung_at(f.t_ms))
                .map_or(String::new(), |(_, until)| format!(" (frozen by a hang until t={until} ms, then to go on)"));
            findings.violate(
                DOC.id,
                task_id.clone(),
                f.t_ms,
                format!(
                    "at t={} ms the conductor set its own row to `{}` while {who}, the owner of {task_id}, was still alive{hung} and had not made its terminal write: the session is left with no conductor",
                    f.t_ms,
                    f.after.map_or("", |a| a.state.as_str())
                ),
            );
        }
    }
}
