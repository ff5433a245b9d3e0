//! no-relaunch-while-claim-pending: no session of a task is launched while an earlier one
//! may still claim it.

use std::collections::BTreeSet;

use super::{conductor_launch, Meaning, Rule, RuleDoc};
use crate::world::event::Fact;
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{RuleId, Stmt};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::NoRelaunchWhileClaimPending,
    says: "the conductor launches a task's next session only once every earlier one has claimed, tried to claim, ended or crashed",
    seed: "000 Bootstrap 5 \"Session Handoff\" (a new session launches after the old one exits and the conductor hands over); 002 \"Guard Clause Rules\" context (\"The conductor always intermediates crash recovery\": it detects a stale heartbeat first). A session launched and not yet at its claim has no heartbeat to go stale: the seeds never relaunch it (the simulator's claim-overdue relaunch and a relaunched conductor's rebuild, docs/protocol.md C35, do)",
    consumes: "`Launched` facts of the conductor's launches (not a double launch's twin); every claim and fallback row, to know who tried",
    truth: "each earlier session of the task: alive (not crashed, not ended, no terminal write), hung or not, and whether it has run its claim",
    meaning: Meaning::ConductorPolicy,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(NoRelaunchWhileClaimPending::default())
}

#[derive(Clone, Default)]
pub struct NoRelaunchWhileClaimPending {
    /// Sessions that ran their claim (taken or blocked by the guard) or wrote a fallback row.
    tried: BTreeSet<String>,
}

impl Rule for NoRelaunchWhileClaimPending {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        match seen {
            // Looked up before it is inserted: the id is copied once per session.
            Seen::Sql(f)
                if f.failure.is_none()
                    && matches!(f.statement, Stmt::ClaimTask | Stmt::InsertFallbackRow)
                    && !self.tried.contains(f.session_id) =>
            {
                self.tried.insert(f.session_id.to_string());
            }
            Seen::Fact(t_ms, Fact::Launched { at_ms, label, session_id, task_id }) if conductor_launch(label) => {
                let waiting = truth.sessions.iter().filter(|(id, s)| {
                    *id != session_id && s.task_id == *task_id && s.is_live_at(*t_ms) && !self.tried.contains(id.as_str())
                });
                for (earlier, s) in waiting {
                    findings.violate_with(DOC.id, task_id, *t_ms, || {
                        // Its hangs are in its description; say what it was doing at the launch.
                        let state = if s.hung_at(*t_ms).is_some() {
                            "frozen by a hang"
                        } else if s.launched_ms > *t_ms {
                            "not started yet"
                        } else {
                            "running"
                        };
                        format!(
                            "at t={t_ms} ms the conductor launched session {label} ({}…) of {task_id} (to start at t={at_ms} ms) while {} had not yet run its claim and was alive, {state}: it may still claim, and two sessions now race for one task",
                            &session_id[..session_id.len().min(8)],
                            truth.describe(earlier)
                        )
                    });
                }
            }
            _ => {}
        }
    }
}
