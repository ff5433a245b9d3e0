//! silent-after-hand-over: a session the conductor handed over writes no task row before its
//! successor claims.

use std::collections::BTreeMap;

use super::{conductor_launch, Meaning, Rule, RuleDoc};
use crate::world::event::Fact;
use crate::judging::oracle::truth::touched_row;
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{RuleId, Stmt};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::SilentAfterHandOver,
    says: "a session the conductor handed over writes nothing to its task row before its successor claims",
    seed: "000 Bootstrap 5 \"Session Handoff\" (the old session has exited when the conductor hands over and the new session claims); 002 \"Guard Clause Rules\" context (the conductor hands over a session it detected lost). Until the claim the row still names the old session, so neither the seeds' SQL nor owner-writes-only can tell its writes from an owner's (docs/protocol.md D11)",
    consumes: "`Launched` facts of the conductor's launches (not a double launch's twin); claims; musician and watcher writes that change a task row",
    truth: "the session the row names when the successor is launched, and whether it is alive then (not crashed, not ended, no terminal write: after one, nothing-after-terminal judges it)",
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(SilentAfterHandOver::default())
}

/// The owner a launch replaced, until the successor claims.
#[derive(Clone)]
struct HandedOver {
    owner: String,
    successor: String,
    successor_label: String,
    launched_ms: i64,
}

#[derive(Clone, Default)]
pub struct SilentAfterHandOver {
    /// Per task: the session handed over whose successor has not claimed yet.
    waiting: BTreeMap<String, HandedOver>,
}

impl Rule for SilentAfterHandOver {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        match seen {
            Seen::Fact(t_ms, Fact::Launched { label, session_id, task_id, .. }) if conductor_launch(label) => {
                let Some(owner) = truth.owner.get(task_id) else { return };
                let live = truth.sessions.get(owner).is_some_and(|s| s.is_live_at(*t_ms));
                if owner != session_id && live {
                    let handed = HandedOver {
                        owner: owner.clone(),
                        successor: session_id.clone(),
                        successor_label: label.clone(),
                        launched_ms: *t_ms,
                    };
                    self.waiting.insert(task_id.clone(), handed);
                }
            }
            Seen::Sql(f) if f.failure.is_none() && !f.actor.is_conductor() => {
                let Some((before, after)) = touched_row(f) else { return };
                if f.statement == Stmt::ClaimTask {
                    self.waiting.remove(f.task_id);
                    return;
                }
                let Some(handed) = self.waiting.get(f.task_id).filter(|h| h.owner == f.session_id) else { return };
                findings.violate_with(DOC.id, f.task_id, f.t_ms, || {
                    format!(
                        "at t={} ms {}, as {}, wrote `{}` to {} (state {} → {}) after the conductor had handed it over: session {} ({}…) was launched at t={} ms to replace it and had not claimed yet, and the row still named the old session, so no guard could tell (docs/protocol.md D11)",
                        f.t_ms,
                        truth.describe(f.session_id),
                        f.actor,
                        f.statement,
                        f.task_id,
                        before.state,
                        after.state,
                        handed.successor_label,
                        &handed.successor[..handed.successor.len().min(8)],
                        handed.launched_ms
                    )
                });
            }
            _ => {}
        }
    }
}
