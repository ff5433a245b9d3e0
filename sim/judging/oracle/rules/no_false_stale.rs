//! no-false-stale: the conductor never hands over a live, running session as stale.

use std::collections::BTreeMap;

use super::{Meaning, Rule, RuleDoc};
use crate::world::event::Fact;
use crate::judging::oracle::truth::begins_hand_over;
use crate::judging::oracle::{Findings, Seen, SqlFact, StaleTruth, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::RuleId;

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::NoFalseStale,
    says: "the conductor never hands over a live, running session as stale (000 Heartbeat Protocol)",
    seed: "000 \"Heartbeat Protocol\" (540 s staleness: a stale heartbeat means a lost session); 002 \"Guard Clause Rules\" (the conductor detects the stale heartbeat, reviews state, then hands over)",
    consumes: "the conductor's staleness declarations and the hand-over that follows (its first write on the task: the handoff message, or the state)",
    truth: "at the instant the hand-over begins: whether the session had crashed, was frozen by a hang, had lost its watcher to a fault, had finished, or was alive; the heartbeat's age in the database then",
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(NoFalseStale::default())
}

#[derive(Clone, Default)]
pub struct NoFalseStale {
    /// Per task: the declaration awaiting its hand-over (session, heartbeat age read, when
    /// the poll read it, when declared).
    declared: BTreeMap<String, (String, f64, i64, i64)>,
}

impl Rule for NoFalseStale {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        match seen {
            Seen::Fact(t_ms, Fact::StaleDeclared { task_id, session_id, seconds_stale, polled_at_ms }) => {
                self.declared.insert(task_id.clone(), (session_id.clone(), *seconds_stale, *polled_at_ms, *t_ms));
            }
            Seen::Sql(f) if f.actor.is_conductor() && f.failure.is_none() => self.on_conductor_write(f, truth, findings),
            _ => {}
        }
    }
}

impl NoFalseStale {
    /// Judged when the hand-over begins (the conductor's first write on the task after it
    /// declared the session stale: the handoff message, then the state), against the truth at
    /// that instant: the conductor may have read the heartbeat minutes earlier (a poll, then
    /// reviews of other tasks), and the session may have woken and beaten since.
    fn on_conductor_write(&mut self, f: &SqlFact, truth: &Truth, findings: &mut Findings) {
        if f.readonly || f.rows_affected == 0 || !self.declared.contains_key(f.task_id) {
            return;
        }
        let (session_id, read_age_s, polled_ms, declared_ms) = self.declared.remove(f.task_id).expect("checked");
        let handing_over = begins_hand_over(f);
        if !handing_over || truth.stale_truth(&session_id, f.t_ms) != StaleTruth::Live {
            return;
        }
        let who = truth.describe(&session_id);
        let now_age = f.before.and_then(|b| b.heartbeat_age_s).map_or("no heartbeat".to_string(), |age| format!("{age:.0} s old"));
        findings.violate(
            DOC.id,
            session_id.clone(),
            f.t_ms,
            format!(
                "at t={} ms the conductor began handing {} over (`{}`), having declared it stale at t={declared_ms} ms on a heartbeat its poll at t={polled_ms} ms read as {read_age_s:.0} s old; at the hand-over the heartbeat in comms.db was {now_age}, and {who} was alive and running (not crashed, not frozen by a hang, no watcher killed by a fault): a live session was handed over",
                f.t_ms, f.task_id, f.statement
            ),
        );
    }
}
