//! The conductor asking a session to exit (docs/protocol.md D16, C33): "`exit_requested` —
//! Conductor requests musician to prepare handoff and exit" (000 and 002 "States the Conductor
//! Sets"). The request is a `handoff` message, then the state (message first, as every answer,
//! 000 "Review Request Flow" 4). 002's table has no musician transition out of
//! `exit_requested` and 002 "Guard Clause Rules" admits a claim from it, so the session leaves
//! the row as it is; once the conductor has read the session's final `handoff` message (000
//! "Clean Exit Protocol" 6) it launches the successor, which claims from `exit_requested`.

use super::{text, Conductor, TaskView};
use crate::actors::messages;
use crate::vocab::{MessageKind, Stmt, TaskState};
use crate::world::event::Fact;
use crate::world::SqlFailure;

/// Why a scripted request asks, as its message says (a relaunched conductor knows it by it).
pub(super) const SCRIPTED: &str = "scripted exit request";

/// The states in which a scripted request reaches a session at work: working, or paused for
/// an answer (the pause watcher ends on any other state, 000 "Pause Watcher Prompt Template").
pub(super) fn reaches_a_session(state: &str) -> bool {
    matches!(TaskState::parse(state), Some(TaskState::Working | TaskState::NeedsReview | TaskState::Error))
}

impl Conductor<'_> {
    /// `[[conductor.exit_requests]]` due at this poll, each sent once, when the polled row
    /// shows a session at work; until then it waits (a task not yet claimed, or between
    /// sessions). A task already `complete` has no session to ask.
    pub(super) async fn send_exit_requests(&mut self, tasks: &[TaskView]) -> Result<(), SqlFailure> {
        for (index, request) in self.scenario.conductor.exit_requests.clone().iter().enumerate() {
            if self.exit_requests_sent[index] || self.ctx.now_ms() < request.at_ms {
                continue;
            }
            let task_id = crate::input::scenario::task_id(request.task);
            let Some(task) = tasks.iter().find(|t| t.task_id == task_id) else { continue };
            // A review under way answers after the request would: it waits for the answer.
            if self.desk.borrow().is_under_review(&task_id) {
                continue;
            }
            if task.is(TaskState::Complete) {
                self.exit_requests_sent[index] = true;
                self.ctx.note("exit_request_dropped", format!("{task_id} is complete: no session to ask"));
            } else if self.scenario.settings.checked_answers && self.desk.borrow().completion_approved(&task_id) {
                // docs/protocol.md C83: after the completion's approval the session writes its
                // report and `complete` (000 "Completion Flow" 5; its row may read `working`
                // again, 004 "After Approval (Resume Working)"); a request then would have it
                // write `complete` over `exit_requested` (issue 48: 13 swarm pairs of 10,900).
                self.exit_requests_sent[index] = true;
                self.ctx.note("exit_request_dropped", format!("{task_id}: its completion is approved: the session is finishing"));
            } else if reaches_a_session(&task.state) {
                self.exit_requests_sent[index] = true;
                self.request_exit(&task_id, &task.session_id, SCRIPTED, None).await?;
            }
        }
        Ok(())
    }

    /// The request itself, to `session_id` (the session the polled row names): it replaces any
    /// answer pending for the task (the session takes the new state as the answer to its pause).
    /// `request_id`: the context warning it answers, if it answers one (cited under
    /// `replies-cite-request`, docs/protocol.md D15).
    pub(super) async fn request_exit(
        &mut self,
        task_id: &str,
        session_id: &str,
        why: &str,
        request_id: Option<i64>,
    ) -> Result<(), SqlFailure> {
        self.pending.remove(task_id);
        self.answer(task_id, MessageKind::Handoff, messages::exit_request(task_id, why), TaskState::ExitRequested, request_id).await?;
        self.ctx.note("exit_requested", format!("{task_id}: {why}; asked session {session_id}"));
        self.asked_to_exit.insert(task_id.to_string(), (session_id.to_string(), self.ctx.now_ms()));
        Ok(())
    }

    /// A musician's `handoff` message: the final message of the session asked to exit.
    pub(super) fn note_final_handoff(&mut self, task_id: &str, from_session: &str) {
        if self.asked_to_exit.get(task_id).is_some_and(|(asked, _)| asked == from_session) {
            self.exit_confirmed.insert(task_id.to_string());
        }
    }

    /// A task whose session was asked to exit, as this poll found it. `true`: handled here.
    /// In `exit_requested`: the successor once the final message is read; if the asked session
    /// goes silent instead (no final message, a heartbeat older than the staleness threshold
    /// since the request's own write refreshed it), the successor all the same. Nothing else
    /// happens to a row waiting for its session's exit: the staleness rule of the active states
    /// does not watch it, so the task is handed over once. Any other state: the session did
    /// not leave the row as asked (it wrote `exited`, or did not take the request); the request
    /// is over and the row is handled as any other.
    pub(super) async fn follow_exit_request(&mut self, task: &TaskView) -> Result<bool, SqlFailure> {
        let Some((asked, asked_ms)) = self.asked_to_exit.get(&task.task_id).cloned() else { return Ok(false) };
        if task.polled_at_ms <= asked_ms {
            return Ok(false);
        }
        if !task.is(TaskState::ExitRequested) {
            self.forget_exit_request(&task.task_id);
            self.ctx.note("exit_request_over", format!("{}: `{}` after the request to {asked}", task.task_id, task.state));
            return Ok(false);
        }
        // Under 000's reading the final message is followed by `exited` (000 "Clean Exit
        // Protocol" 7): the successor waits for it (the row then leaves `exit_requested` and is
        // handed over as any exited task, C7), or a claim could meet `exited` and be blocked.
        if self.exit_confirmed.contains(&task.task_id) && self.scenario.settings.exit_request_no_state {
            self.forget_exit_request(&task.task_id);
            self.handled_sessions.insert(asked);
            self.read_handoff(&task.task_id).await;
            self.hand_over_leaving(&task.task_id, "exited on request (exit_requested)", None).await?;
            return Ok(true);
        }
        if task.seconds_stale > self.scenario.conductor.staleness_s as f64 {
            self.hand_over_silent(task, asked).await?;
        }
        Ok(true)
    }

    /// The asked session went silent before its final message: declared stale on a fresh read
    /// of the row (002 "Guard Clause Rules": the conductor "reviews state"), then handed over.
    async fn hand_over_silent(&mut self, task: &TaskView, asked: String) -> Result<(), SqlFailure> {
        let row = self.ctx.sql(Stmt::ReadTaskState, vec![(":task_id", text(&task.task_id))]).await?;
        let seconds_stale = row.real(0, 3).unwrap_or(0.0);
        if row.state(0, 0) != Some(TaskState::ExitRequested) || seconds_stale <= self.scenario.conductor.staleness_s as f64 {
            return Ok(());
        }
        self.handled_sessions.insert(asked.clone());
        self.ctx.note("stale_detected", format!("{} heartbeat {seconds_stale:.0} s old in exit_requested", task.task_id));
        self.ctx.observe(Fact::StaleDeclared {
            task_id: task.task_id.clone(),
            session_id: asked.clone(),
            seconds_stale,
            polled_at_ms: self.ctx.now_ms(),
        });
        let why = format!("was asked to exit and went silent (heartbeat {seconds_stale:.0} s old)");
        if self.scenario.settings.release_asked_exit {
            // docs/protocol.md C81: released as a stale row is (`release_task`, the state kept), so the asked
            // session's late `exited` is fenced out instead of blocking the successor's claim.
            let stale_after_s = Some(self.scenario.conductor.staleness_s as f64);
            // The row stays `exit_requested` (claimable, 002 "Guard Clause Rules"), only its
            // session_id cleared: 002's table has no conductor transition to `fix_proposed` here.
            if !self.release_and_hand_over(&task.task_id, &why, stale_after_s, TaskState::ExitRequested).await? {
                self.handled_sessions.remove(&asked);
                return Ok(());
            }
            self.forget_exit_request(&task.task_id);
            return Ok(());
        }
        self.forget_exit_request(&task.task_id);
        self.hand_over_leaving(&task.task_id, &why, None).await
    }

    fn forget_exit_request(&mut self, task_id: &str) {
        self.asked_to_exit.remove(task_id);
        self.exit_confirmed.remove(task_id);
    }

    /// 000 Bootstrap 5: "Conductor reads HANDOFF" before it hands the task on.
    async fn read_handoff(&mut self, task_id: &str) {
        let handoff = self.ctx.read_file(&format!("temp/{task_id}-HANDOFF")).await;
        if handoff.is_none() {
            self.ctx.note("conductor_read", format!("{task_id}: no HANDOFF after the exit request"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::reaches_a_session;

    #[test]
    fn a_scripted_request_waits_for_a_session_at_work() {
        for state in ["working", "needs_review", "error"] {
            assert!(reaches_a_session(state), "{state}");
        }
        for state in ["watching", "fix_proposed", "review_approved", "review_failed", "exit_requested", "exited", "complete"] {
            assert!(!reaches_a_session(state), "{state}");
        }
    }
}
