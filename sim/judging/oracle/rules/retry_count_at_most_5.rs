//! retry-count-at-most-5: retry_count never exceeds 5.

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::RuleId;

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::RetryCountAtMost5,
    says: "retry_count never exceeds 5 (004 Terminal Failure)",
    seed: "004 \"Terminal Failure (5th retry)\": the 5th failure ends the task in `exited`",
    consumes: "writes, with the row after them",
    truth: "none",
    meaning: Meaning::SimulatorOrSqlBug,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(RetryCountAtMost5)
}

#[derive(Clone)]
pub struct RetryCountAtMost5;

impl Rule for RetryCountAtMost5 {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, _truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        let Some(after) = f.after.filter(|a| a.retry_count > 5 && f.failure.is_none() && !f.readonly) else { return };
        findings.violate_with(DOC.id, f.task_id, f.t_ms, || {
            format!(
                "at t={} ms `{}` by {} left {} with retry_count {}: the 5th failure should have ended it in `exited`",
                f.t_ms, f.statement, f.actor, f.task_id, after.retry_count
            )
        });
    }
}
