//! owner-writes-only: no session writes a task row it no longer owns.

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::truth::touched_row;
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{RuleId, Stmt};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::OwnerWritesOnly,
    says: "no session writes a task row it no longer owns (docs/protocol.md D11)",
    seed: "docs/protocol.md D11: no musician UPDATE of the seeds checks session_id",
    consumes: "musician and watcher writes that change a task row (claims excepted)",
    truth: "the row's session_id before the write; the sessions' histories",
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(OwnerWritesOnly)
}

#[derive(Clone)]
pub struct OwnerWritesOnly;

impl Rule for OwnerWritesOnly {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() || f.actor.is_conductor() || f.statement == Stmt::ClaimTask {
            return;
        }
        let Some((before, after)) = touched_row(f) else { return };
        if before.session_id == f.session_id {
            return;
        }
        // The checker adds what the statement in force lacked (`SqlInForce::owner_because`).
        findings.violate_with(DOC.id, f.task_id, f.t_ms, || {
            let (writer, owner) = (truth.describe(f.session_id), truth.describe(&before.session_id));
            format!(
                "at t={} ms {writer} wrote `{}` to {} (state {} → {}), but the row belonged to {owner}: the replaced session overwrote its successor's row",
                f.t_ms, f.statement, f.task_id, before.state, after.state
            )
        });
    }
}
