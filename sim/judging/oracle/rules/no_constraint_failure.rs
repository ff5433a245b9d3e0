//! no-constraint-failure: no statement fails a CHECK or other constraint.

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::RuleId;

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::NoConstraintFailure,
    says: "no statement fails a CHECK or other constraint",
    seed: "004 \"Database\": the CHECK lists of state and message_type",
    consumes: "SQL events SQLite refused",
    truth: "none",
    meaning: Meaning::SimulatorOrSqlBug,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(NoConstraintFailure)
}

#[derive(Clone)]
pub struct NoConstraintFailure;

impl Rule for NoConstraintFailure {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, _truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        let Some((true, message)) = f.failure else { return };
        findings.violate(
            DOC.id,
            f.statement.name(),
            f.t_ms,
            format!("at t={} ms {} ran `{}` and SQLite refused it: {message}", f.t_ms, f.actor, f.statement),
        );
    }
}
