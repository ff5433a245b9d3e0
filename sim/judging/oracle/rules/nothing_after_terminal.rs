//! nothing-after-terminal: a session writes nothing after its terminal write.

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::RuleId;

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::NothingAfterTerminal,
    says: "a session writes nothing after its terminal write (000 Key Principles 9)",
    seed: "000 \"Key Principles\" 9 and \"Terminal Write Atomicity\": the terminal write is the session's last",
    consumes: "musician and watcher writes",
    truth: "each session's terminal write (complete or exited)",
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(NothingAfterTerminal)
}

#[derive(Clone)]
pub struct NothingAfterTerminal;

impl Rule for NothingAfterTerminal {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() || f.readonly || f.actor.is_conductor() {
            return;
        }
        let Some(terminal_ms) = truth.sessions.get(f.session_id).and_then(|s| s.terminal_ms) else { return };
        findings.violate_with(DOC.id, f.session_id, f.t_ms, || {
            let who = truth.describe(f.session_id);
            format!("at t={} ms {} ran `{}` after {who} had made its terminal write at t={terminal_ms} ms", f.t_ms, f.actor, f.statement)
        });
    }
}
