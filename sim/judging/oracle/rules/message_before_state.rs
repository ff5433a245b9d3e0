//! message-before-state: a review request exists whenever the conductor sees `needs_review`,
//! and a terminal write follows its final message.

use std::collections::BTreeMap;

use super::{Meaning, Rule, RuleDoc};
use crate::judging::oracle::truth::{is_terminal_write, touched_row};
use crate::judging::oracle::{Findings, Seen, SqlFact, Truth};
use crate::input::scenario::ProtocolSettings;
use crate::vocab::{MessageKind, RuleId, Stmt, TaskState};

pub static DOC: RuleDoc = RuleDoc {
    id: RuleId::MessageBeforeState,
    says: "a review request exists whenever the conductor sees needs_review, and a terminal write follows its final message (a completion report before complete) (004)",
    seed: "004 \"Request Review\" (message FIRST, then state change); 000 \"Terminal Write Atomicity\"",
    consumes: "musician message inserts and state changes; the conductor's polls",
    truth: "the messages each session wrote since its last state change",
    meaning: Meaning::ProtocolFlaw,
};

/// The rule as the checker runs it.
pub fn checker(_settings: &ProtocolSettings) -> Box<dyn Rule> {
    Box::new(MessageBeforeState::default())
}

#[derive(Clone, Default)]
pub struct MessageBeforeState {
    /// Per session: message types written since its last state change.
    since_state: BTreeMap<String, Vec<String>>,
    /// Per task: (session that set needs_review, when) while no review message backs it.
    unbacked_review: BTreeMap<String, (String, i64)>,
}

fn is_review_message(kind: &str) -> bool {
    MessageKind::ReviewRequest.is(kind) || MessageKind::Completion.is(kind)
}

impl Rule for MessageBeforeState {
    fn doc(&self) -> &'static RuleDoc {
        &DOC
    }

    fn see(&mut self, seen: &Seen, truth: &Truth, findings: &mut Findings) {
        let Seen::Sql(f) = seen else { return };
        if f.failure.is_some() {
            return;
        }
        if f.statement == Stmt::PollTasks {
            self.on_poll(f, truth, findings);
        } else if !f.readonly && !f.actor.is_conductor() {
            self.on_musician_write(f, findings);
        }
    }
}

impl MessageBeforeState {
    fn on_musician_write(&mut self, f: &SqlFact, findings: &mut Findings) {
        if let Some((_, _, kind)) = f.message {
            self.since_state.entry(f.session_id.to_string()).or_default().push(kind.clone());
            if is_review_message(kind) {
                self.unbacked_review.remove(f.task_id);
            }
            return;
        }
        let Some((before, after)) = touched_row(f) else { return };
        if before.state == after.state && !is_terminal_write(f) {
            return;
        }
        let since = self.since_state.remove(f.session_id).unwrap_or_default();
        if before.state != after.state && after.state == TaskState::NeedsReview && !since.iter().any(|k| is_review_message(k)) {
            self.unbacked_review.insert(f.task_id.to_string(), (f.session_id.to_string(), f.t_ms));
        }
        if is_terminal_write(f) && before.state != after.state {
            self.check_final_message(f, after.state, &since, findings);
        }
    }

    /// 000 "Terminal Write Atomicity": a final message before every terminal write; for
    /// `complete` it is the completion report (004 "Mark Complete": `completion`, then the state).
    fn check_final_message(&self, f: &SqlFact, to: TaskState, since: &[String], findings: &mut Findings) {
        let what = match since.last() {
            None => "with no final message before it (000 \"Terminal Write Atomicity\")".to_string(),
            Some(kind) if to == TaskState::Complete && !since.iter().any(|k| MessageKind::Completion.is(k)) => format!(
                "after a `{kind}` message, with no completion report since its last state change (004 \"Mark Complete\": the `completion` message, then the state)"
            ),
            Some(_) => return,
        };
        findings.violate(
            DOC.id,
            format!("terminal:{}", f.task_id),
            f.t_ms,
            format!("at t={} ms {} set {} to `{to}` {what}", f.t_ms, f.actor, f.task_id),
        );
    }

    fn on_poll(&mut self, f: &SqlFact, truth: &Truth, findings: &mut Findings) {
        for (task_id, state, _) in f.polled {
            if TaskState::parse(state) != Some(TaskState::NeedsReview) {
                continue;
            }
            let Some((sid, since)) = self.unbacked_review.get(task_id) else { continue };
            findings.violate_with(DOC.id, &format!("review:{task_id}"), f.t_ms, || {
                let who = truth.describe(sid);
                format!(
                    "at t={} ms the conductor found {task_id} in `needs_review` with no review request: {who} set the state at t={since} ms before writing its message (004 \"Request Review\": message FIRST)",
                    f.t_ms
                )
            });
        }
    }
}
