//! answer-own-request: a session completes only on an answer to its own request.

use std::collections::BTreeMap;

use super::{Meaning, Rule, RuleDoc};
use crate::world::event::Fact;
use crate::judging::oracle::truth::touched_row;
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{RuleId, Stmt};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::AnswerOwnRequest,
    says: "a session completes a task only on the conductor's answer to its own request",
    seed: "000 \"Response Handling\" (the musician acts on the conductor's answer to its review request); docs/protocol.md D15: replies name no request",
    consumes: "sessions' `MessageHandled` facts for conductor answers; successful `mark_complete` writes",
    truth: "which request each conductor answer replied to (the conductor's `Answering` fact, void if that conductor session crashed first: docs/protocol.md C35)",
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(AnswerOwnRequest::default())
}

#[derive(Clone, Default)]
pub struct AnswerOwnRequest {
    /// Per session: the last conductor answer it handled (message id, the requester, when).
    last_answer: BTreeMap<String, (i64, String, i64)>,
}

impl Rule for AnswerOwnRequest {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        match seen {
            Seen::Fact(t_ms, Fact::MessageHandled { session_id, message_id }) => {
                if let Some(requester) = truth.messages.get(message_id).and_then(|m| m.answers.clone()) {
                    self.last_answer.insert(session_id.clone(), (*message_id, requester, *t_ms));
                }
            }
            Seen::Sql(f) if f.failure.is_none() && f.statement == Stmt::MarkComplete && touched_row(f).is_some() => {
                let Some((message_id, requester, read_ms)) = self.last_answer.get(f.session_id) else { return };
                if requester == f.session_id {
                    return;
                }
                let kind = truth.messages.get(message_id).map_or("answer", |m| m.kind.as_str());
                let (completer, asker) = (truth.describe(f.session_id), truth.describe(requester));
                findings.violate(
                    DOC.id,
                    f.task_id,
                    f.t_ms,
                    format!(
                        "at t={} ms {completer} completed {} on conductor message {message_id} ({kind}), read at t={read_ms} ms, which answered a request of {asker}, not its own: the reply names no request (docs/protocol.md D15)",
                        f.t_ms, f.task_id
                    ),
                );
            }
            _ => {}
        }
    }
}
