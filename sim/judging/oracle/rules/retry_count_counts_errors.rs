//! retry-count-counts-errors: after every error report, retry_count equals the error reports
//! since the claim.

use std::collections::BTreeMap;

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::truth::touched_row;
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{RuleId, Stmt};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::RetryCountCountsErrors,
    says: "after every error report, retry_count equals the error reports since the task was claimed",
    seed: "000 \"Error Handling\" (each error report counts one retry, 5 at most); 004 \"Report Error\" (retry_count = retry_count + 1); the claim resets it",
    consumes: "successful claims and `set_error` writes",
    truth: "the number of error reports on the task since its last claim",
    meaning: Meaning::SimulatorOrSqlBug,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(RetryCountCountsErrors::default())
}

#[derive(Clone, Default)]
pub struct RetryCountCountsErrors {
    /// Per task: error reports since the last claim.
    errors: BTreeMap<String, i64>,
    /// Sessions whose next `set_error` is a blind retry of the one that committed (fault
    /// `ambiguous_commit`, docs/protocol.md C70): the same report, not a new one.
    retrying: Vec<String>,
}

impl Rule for RetryCountCountsErrors {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, _truth: &Truth, findings: &mut Findings) {
        if let Seen::Fact(_, crate::world::event::Fact::BlindRetry { session_id, statement }) = seen {
            if statement == Stmt::SetError.name() {
                self.retrying.push(session_id.clone());
            }
            return;
        }
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() || f.actor.is_conductor() {
            return;
        }
        let Some((_, after)) = touched_row(f) else { return };
        match f.statement {
            Stmt::ClaimTask => {
                self.errors.insert(f.task_id.to_string(), 0);
            }
            Stmt::SetError => {
                let retried = self.retrying.iter().position(|s| *s == *f.session_id).map(|i| self.retrying.remove(i)).is_some();
                let count = self.errors.entry(f.task_id.to_string()).or_insert(0);
                *count += i64::from(!retried);
                if after.retry_count != *count {
                    findings.violate(
                        DOC.id,
                        f.task_id,
                        f.t_ms,
                        format!(
                            "at t={} ms {} reported error {} on {} since its claim, but `set_error` left retry_count at {}",
                            f.t_ms, f.actor, count, f.task_id, after.retry_count
                        ),
                    );
                }
            }
            _ => {}
        }
    }
}
