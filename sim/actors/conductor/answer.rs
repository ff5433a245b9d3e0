//! The conductor answering a musician's request (docs/protocol.md C5, C37, C40): a review, a
//! context warning, an error report or an escalation. Before any answer it reads the task's
//! row again and answers only if the row is still in the state the request left it in and
//! still names the session that asked (C37): 002 "Guard Clause Rules" has the conductor
//! "reviews state" before it acts, and 002 "Terminal States" forbids moving a row that
//! reached `exited` or `complete` back to an active state. An error report gets one of the
//! answers 000 "Example: Error Recovery & Retry Logic" Step 7 has the musician wait for, by
//! the scenario's odds (C40).

use rand::RngExt;

use super::still_asking::still_asking;
use super::{Conductor, Pending, Request, TaskView};
use crate::actors::messages;
use crate::input::scenario::ErrorReply;
use crate::vocab::{MessageKind, TaskState};
use crate::world::event::Fact;
use crate::world::SqlFailure;

/// The state a context warning, an error report or an escalation leaves the row in.
fn awaits_error_answer(state: &str) -> bool {
    TaskState::parse(state) == Some(TaskState::Error)
}

impl Conductor<'_> {
    /// Answers the pending request of a task whose polled row is in the state that asked
    /// for it (`super::answers`): a review starts (inline or as an actor); anything else is
    /// answered now, once the row is read again (C37).
    pub(super) async fn answer_request(&mut self, task: &TaskView, kind: Pending, request: Request) -> Result<(), SqlFailure> {
        let task_id = task.task_id.as_str();
        let request_id = Some(request.message_id);
        if let Pending::Review { completion, number } = kind {
            let job = super::review::Job {
                task_id: task_id.to_string(),
                completion,
                number,
                request_id,
                requester: request.from_session.clone(),
            };
            if self.reviews_as_actors() {
                return self.start_review(job).await;
            }
            self.pending.remove(task_id);
            return super::review::inline(self.ctx, self.scenario, &job, &self.desk).await;
        }
        self.pending.remove(task_id);
        if !still_asking(self.ctx, self.scenario, task_id, awaits_error_answer, (request.message_id, &request.from_session)).await? {
            return Ok(());
        }
        // Ground truth for the oracles: which request the coming answer replies to
        // (docs/protocol.md D15: the message itself does not say).
        self.ctx.observe(Fact::Answering {
            task_id: task_id.to_string(),
            request_id: request.message_id,
            requester: request.from_session.clone(),
        });
        match kind {
            Pending::ContextWarning { recommended, which } => {
                self.answer_context_warning(task, recommended, which.as_deref(), request_id).await
            }
            Pending::Error => self.answer_error(task, request_id).await,
            Pending::Escalation => {
                // 003: "the conductor may issue a correction task".
                let correction = messages::correction_task(task_id);
                self.answer(task_id, MessageKind::FixProposal, correction, TaskState::FixProposed, request_id).await
            }
            Pending::Review { .. } => unreachable!("reviews are answered above"),
        }
    }

    /// docs/protocol.md C40: a corrected path, alternative instructions or guidance on
    /// skipping the work (all `fix_proposed`, 000 "Example: Error Recovery" Step 7: "waits for
    /// `fix_proposed` state with instructions"), or a request to hand off and exit. With all
    /// odds 0 no roll is drawn: every answer is a corrected path.
    async fn answer_error(&mut self, task: &TaskView, request_id: Option<i64>) -> Result<(), SqlFailure> {
        let c = &self.scenario.conductor;
        let reply = if c.error_reply_drawn() { c.error_reply(self.ctx.rng().random_range(0.0..1.0)) } else { ErrorReply::CorrectedPath };
        self.ctx.note(error_reply_note(reply), format!("{}: error report answered with {}", task.task_id, reply.word()));
        if reply == ErrorReply::ExitRequest {
            return self.request_exit(&task.task_id, &task.session_id, "error report: prepare handoff and exit", request_id).await;
        }
        let fix = messages::error_fix(&task.task_id, reply);
        self.answer(&task.task_id, MessageKind::FixProposal, fix, TaskState::FixProposed, request_id).await
    }
}

/// The trace note of an error reply; coverage can require each (`note error_reply_skip`).
fn error_reply_note(reply: ErrorReply) -> &'static str {
    match reply {
        ErrorReply::CorrectedPath => "error_reply_corrected_path",
        ErrorReply::Alternative => "error_reply_alternative",
        ErrorReply::Skip => "error_reply_skip",
        ErrorReply::ExitRequest => "error_reply_exit_request",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actors::conductor::still_asking::awaits_review;
    use crate::input::scenario::ConductorSection;

    #[test]
    fn error_replies_follow_the_odds_in_order_and_the_rest_is_a_corrected_path() {
        let c = ConductorSection {
            error_alternative_probability: 0.2,
            error_skip_probability: 0.3,
            error_exit_request_probability: 0.1,
            ..ConductorSection::default()
        };
        assert!(c.error_reply_drawn());
        assert_eq!(c.error_reply(0.0), ErrorReply::Alternative);
        assert_eq!(c.error_reply(0.19), ErrorReply::Alternative);
        assert_eq!(c.error_reply(0.2), ErrorReply::Skip);
        assert_eq!(c.error_reply(0.49), ErrorReply::Skip);
        assert_eq!(c.error_reply(0.55), ErrorReply::ExitRequest);
        assert_eq!(c.error_reply(0.6), ErrorReply::CorrectedPath);
        assert_eq!(c.error_reply(0.99), ErrorReply::CorrectedPath);
        assert!(!ConductorSection::default().error_reply_drawn(), "by default no roll is drawn");
    }

    #[test]
    fn each_request_waits_in_its_own_state() {
        assert!(awaits_review("needs_review") && awaits_review("error"), "a TIMEOUT's error still waits for the review");
        assert!(!awaits_review("exited") && !awaits_review("complete") && !awaits_review("fix_proposed"));
        assert!(awaits_error_answer("error") && !awaits_error_answer("exited") && !awaits_error_answer("fix_proposed"));
    }

    #[test]
    fn every_error_reply_has_its_note() {
        let notes: Vec<&str> =
            [ErrorReply::CorrectedPath, ErrorReply::Alternative, ErrorReply::Skip, ErrorReply::ExitRequest].map(error_reply_note).to_vec();
        assert_eq!(notes, ["error_reply_corrected_path", "error_reply_alternative", "error_reply_skip", "error_reply_exit_request"]);
    }
}
