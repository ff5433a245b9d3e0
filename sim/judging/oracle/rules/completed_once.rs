//! completed-once: a task is completed by one session.

use std::collections::BTreeMap;

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::truth::touched_row;
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{RuleId, Stmt};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::CompletedOnce,
    says: "a task is completed by exactly one session",
    seed: "002 \"Guard Clause Rules\" and \"Terminal States\": one session owns the work; complete is final",
    consumes: "successful `mark_complete` writes",
    truth: "which session completed each task first",
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(CompletedOnce::default())
}

#[derive(Clone, Default)]
pub struct CompletedOnce {
    /// Per task: the session that completed it first, and when.
    completed_by: BTreeMap<String, (String, i64)>,
}

impl Rule for CompletedOnce {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() || f.statement != Stmt::MarkComplete || touched_row(f).is_none() {
            return;
        }
        match self.completed_by.get(f.task_id) {
            None => {
                self.completed_by.insert(f.task_id.to_string(), (f.session_id.to_string(), f.t_ms));
            }
            Some((first, at)) if first != f.session_id => {
                let (second, first) = (truth.describe(f.session_id), truth.describe(first));
                findings.violate(
                    DOC.id,
                    f.task_id,
                    f.t_ms,
                    format!(
                        "at t={} ms {second} completed {} again: {first} had completed it at t={at} ms; the work was done twice",
                        f.t_ms, f.task_id
                    ),
                );
            }
            Some(_) => {}
        }
    }
}
