//! hand-over-on-owner-exit: a task is handed over on its `exited` only when its owner wrote it.

use std::collections::BTreeMap;

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::truth::{begins_hand_over, touched_row};
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{RuleId, Stmt, TaskState};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::HandOverOnOwnerExit,
    says: "the conductor hands a task over on its `exited` only when the session that owns the row wrote it",
    seed: "000 Bootstrap 5 \"Session Handoff\": \"Old session exits → writes HANDOFF, sets state to `exited`; Conductor reads HANDOFF → sets state to `fix_proposed` + sends handoff message\"; docs/protocol.md D11: no musician UPDATE checks session_id, so a replaced session's `exited` lands on its successor's row",
    consumes: "musician and watcher writes that set `exited`; conductor polls; the conductor's hand-overs (a `handoff` message or `fix_proposed`); claims",
    truth: "the row's owner before the `exited` write, and whether that owner is alive (not crashed, not ended, no terminal write) when the hand-over begins",
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(HandOverOnOwnerExit::default())
}

/// A replaced session's `exited` on its successor's row.
#[derive(Clone)]
struct ForeignExit {
    writer: String,
    owner: String,
    t_ms: i64,
    /// A conductor poll has read the row `exited` since.
    seen_ms: Option<i64>,
}

#[derive(Clone, Default)]
pub struct HandOverOnOwnerExit {
    /// Per task: the foreign `exited` the conductor may act on.
    foreign: BTreeMap<String, ForeignExit>,
}

impl Rule for HandOverOnOwnerExit {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() {
            return;
        }
        for (task, state, _) in f.polled {
            if let Some(exit) = self.foreign.get_mut(task).filter(|e| e.seen_ms.is_none() && TaskState::parse(state) == Some(TaskState::Exited)) {
                exit.seen_ms = Some(f.t_ms);
            }
        }
        if f.actor.is_conductor() {
            if !begins_hand_over(f) {
                return;
            }
            let Some(exit) = self.foreign.get(f.task_id) else { return };
            let Some(seen_ms) = exit.seen_ms else { return };
            let owner = truth.sessions.get(&exit.owner).filter(|s| s.is_live_at(f.t_ms));
            if let Some(owner) = owner {
                findings.violate_with(DOC.id, f.task_id, f.t_ms, || {
                    let now = if owner.hung_at(f.t_ms).is_some() { "alive, frozen by a hang it would wake from" } else { "alive and running" };
                    format!(
                        "at t={} ms the conductor began handing {} over (`{}`) on the `exited` its poll at t={seen_ms} ms read, but {} wrote that `exited` at t={} ms onto a row that belonged to {}, which was {now} (not crashed, not ended, no terminal write): the hand-over replaces a live owner on a replaced session's exit (docs/protocol.md D11)",
                        f.t_ms,
                        f.task_id,
                        f.statement,
                        truth.describe(&exit.writer),
                        exit.t_ms,
                        truth.describe(&exit.owner)
                    )
                });
            }
            self.foreign.remove(f.task_id);
            return;
        }
        let Some((before, after)) = touched_row(f) else { return };
        if f.statement == Stmt::ClaimTask {
            self.foreign.remove(f.task_id);
        } else if after.state == TaskState::Exited && before.state != TaskState::Exited {
            if before.session_id == f.session_id || before.session_id.is_empty() {
                // The owner's own exit: the hand-over that follows is the seeds'.
                self.foreign.remove(f.task_id);
            } else {
                let exit = ForeignExit { writer: f.session_id.to_string(), owner: before.session_id.clone(), t_ms: f.t_ms, seen_ms: None };
                self.foreign.insert(f.task_id.to_string(), exit);
            }
        }
    }
}
