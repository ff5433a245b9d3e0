//! request-answered-once: the conductor answers a request at most once.

use std::collections::{BTreeMap, BTreeSet};

use super::{Meaning, Rule, RuleDoc};
use crate::world::event::Fact;
use crate::judging::oracle::{Findings, Seen, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::RuleId;

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::RequestAnsweredOnce,
    says: "the conductor answers each musician request at most once",
    seed: "000 \"Review Request Flow\" (one request, then wait for the conductor's response and process it) and \"Response Handling\"; 004 \"Request Review\" (one message, one state): the musician acts on every new message (000 \"Message Deduplication\"), so a second answer is acted on twice",
    consumes: "the conductor's `Answering` facts; every conductor message inserted (each row of a multi-row insert)",
    truth: "which request the conductor's next message to a task answers (void if that conductor session crashed first: docs/protocol.md C35)",
    meaning: Meaning::SimulatorOrSqlBug,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(RequestAnsweredOnce::default())
}

#[derive(Clone, Default)]
pub struct RequestAnsweredOnce {
    /// Per task: the request (id) the conductor's next message answers, and its requester.
    pending: BTreeMap<String, (i64, String)>,
    /// Per request answered: (answer message id, when).
    answered: BTreeMap<i64, (i64, i64)>,
    /// Conductor sessions seen: a crash of one voids what it was about to answer.
    conductors: BTreeSet<String>,
}

impl Rule for RequestAnsweredOnce {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        match seen {
            Seen::Fact(_, Fact::Answering { task_id, request_id, requester }) => {
                self.pending.insert(task_id.clone(), (*request_id, requester.clone()));
            }
            Seen::Fact(_, Fact::Crashed { session_id, .. }) if self.conductors.contains(session_id) => self.pending.clear(),
            Seen::Sql(f) if f.failure.is_none() && f.actor.is_conductor() => {
                if !self.conductors.contains(f.session_id) {
                    self.conductors.insert(f.session_id.to_string());
                }
                // The request this statement's first message to each task answered: a further
                // message of the same statement to that task answers it again.
                let mut answered_here: Vec<(&str, i64, String)> = Vec::new();
                for (id, task, kind) in f.messages() {
                    let (request, requester) = match self.pending.remove(task) {
                        Some((request, requester)) => {
                            answered_here.push((task, request, requester.clone()));
                            (request, requester)
                        }
                        None => match answered_here.iter().find(|(t, _, _)| *t == task) {
                            Some((_, request, requester)) => (*request, requester.clone()),
                            None => continue,
                        },
                    };
                    let Some(&(first_id, first_ms)) = self.answered.get(&request) else {
                        self.answered.insert(request, (*id, f.t_ms));
                        continue;
                    };
                    findings.violate_with(DOC.id, &request.to_string(), f.t_ms, || {
                        let asker = truth.describe(&requester);
                        let same = if first_ms == f.t_ms { " by the same statement" } else { "" };
                        format!(
                            "at t={} ms the conductor's `{}` wrote message {id} ({kind}) to {task}, a second answer{same} to request {request} of {asker}: message {first_id} had answered it at t={first_ms} ms, and the session acts on each new message",
                            f.t_ms, f.statement
                        )
                    });
                }
            }
            _ => {}
        }
    }
}
