//! retry-count-never-decreases: only a claim lowers retry_count.

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::truth::touched_row;
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{RuleId, Stmt};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::RetryCountNeverDecreases,
    says: "retry_count never decreases, except when a claim resets it to 0",
    seed: "004 \"Report Error\" (`retry_count = retry_count + 1`) and \"Atomic claim\" / 000 Bootstrap 3 (`retry_count = 0`) are the only writes of retry_count the seeds have; 000 \"Error Handling\": the count of failures decides the 5th",
    consumes: "every write that changed a task row, by any actor, but claims",
    truth: "the row's retry_count before and after the write",
    meaning: Meaning::SimulatorOrSqlBug,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(RetryCountNeverDecreases)
}

#[derive(Clone)]
pub struct RetryCountNeverDecreases;

impl Rule for RetryCountNeverDecreases {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() || f.statement == Stmt::ClaimTask {
            return;
        }
        let Some((before, after)) = touched_row(f) else { return };
        if after.retry_count >= before.retry_count {
            return;
        }
        findings.violate_with(DOC.id, f.task_id, f.t_ms, || {
            let writer = if f.actor.is_conductor() { "the conductor".to_string() } else { truth.describe(f.session_id) };
            format!(
                "at t={} ms {writer} ran `{}` on {} (state {} → {}) and lowered retry_count from {} to {}: only a claim resets it, so the count of failures that decides the 5th (004 \"Terminal Failure\") is lost",
                f.t_ms, f.statement, f.task_id, before.state, after.state, before.retry_count, after.retry_count
            )
        });
    }
}
