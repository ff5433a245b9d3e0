//! Reviews in pause mode (seed 000 "Checkpoint Protocol", "Response Handling"): the
//! request, the pause watcher, and reading the conductor's answer.

use crate::actors::ctx::ActorMeta;
use crate::actors::handoff::{self, Covered, Reviewed};
use crate::actors::messages;
use crate::actors::session::PauseOutcome;
use crate::actors::watcher;
use crate::vocab::{Severity, Stmt, TaskState, WatcherKind};
use crate::world::event::Fact;
use crate::world::SqlFailure;
use rusqlite::types::Value;

use super::*;

/// The conductor's answer to a session's request: the state it set, and its message.
pub(super) struct Answer {
    pub state: String,
    pub reply: String,
}

/// How a wait for the conductor ended.
enum Waited {
    Answer(Answer),
    /// Two pause TIMEOUTs in one wait (000 "Mode Transitions").
    Unresponsive,
    /// `replies-cite-request`: the state changed, but no new message replies to a request of
    /// this session (docs/protocol.md D15).
    NoOwnReply,
    /// Asked to exit before the pause began (a request read after the report's late write, or
    /// reported by the watcher on the way in): the pause's entry is the safe point (C181).
    ExitRequested,
}

impl Musician {
    /// 000 "Review Request Flow": verify, message first then `needs_review` (004 "Request
    /// Review"), pause until the conductor answers; on `review_failed` / `fix_proposed` apply
    /// the feedback, re-verify and resubmit (000 "Response Handling"). `Some(end)` ends it.
    pub(super) async fn review(&mut self, review: Review) -> Result<Option<End>, SqlFailure> {
        let mut attempt = 0u64;
        loop {
            attempt += 1;
            let what = reviewed(review).name();
            self.status(&format!("{what} reached")).await;
            // 000 "Checkpoint workflow" 2: "Run verification tests", and 000 "Verification
            // Decision Matrix": report only what passes. Findings only in the first
            // verification of a review (docs/protocol.md C31).
            if let Some(end) = self.verify_checkpoint(review_step(review, self.launch.plan.steps), attempt == 1).await? {
                return Ok(Some(end));
            }
            // A safe point (docs/protocol.md D16): no request over a row the conductor set to
            // `exit_requested`.
            if self.exit_requested() {
                return self.exit_on_request().await.map(Some);
            }
            self.send_review_request(review).await?;
            self.cost(&self.scenario.context.message_pct.clone());
            self.verification.row_approved = false;
            let verb = if attempt == 1 { "submitted for review" } else { "resubmitted after feedback fixes" };
            self.status(&format!("{what} {verb}")).await;
            let answer = match self.answer_or_end().await? {
                Ok(answer) => answer.state,
                Err(end) => return Ok(Some(end)),
            };
            if self.takes_exit_request(&answer).await {
                return self.exit_on_request().await.map(Some);
            }
            match TaskState::parse(&answer) {
                Some(TaskState::ReviewApproved) => {
                    let step = review_step(review, self.launch.plan.steps);
                    self.cost(&self.scenario.context.message_pct.clone());
                    // The approval names what it covers: its step, or the last agent done
                    // when it was taken inside a step (a reduced scope's checkpoint brought
                    // forward), so a successor without a HANDOFF resumes after it (000
                    // "Mid-Session Resumption Protocol" 5: "resumes from the last checkpoint";
                    // docs/protocol.md C52), in the words it reads back (`approval_line`).
                    let covered = if review == Review::Completion { Some(Covered::Step(step)) } else { Covered::before(self.next) };
                    self.status(&handoff::approval_line(reviewed(review), covered)).await;
                    self.last_checkpoint_step = Some(step);
                    self.answered_zone = None;
                    self.answered_past_ceiling = false;
                    if review == Review::Completion {
                        return Ok(None);
                    }
                    if self.completion_review_follows(review) {
                        // 002 "Valid State Transitions": `review_approved → needs_review`
                        // (completion review after final step): no work is left, so the
                        // musician writes no `working` before its completion review.
                        self.verification.row_approved = true;
                        self.start_background_watcher();
                        return Ok(None);
                    }
                    // 004 "After Approval (Resume Working)"; then a new background watcher.
                    self.owned_write(Stmt::ResumeWorking, vec![]).await?;
                    self.start_background_watcher();
                    return Ok(None);
                }
                Some(TaskState::ReviewFailed | TaskState::FixProposed) => {
                    // 000 "Response Handling": on `review_failed` and on `fix_proposed` alike,
                    // "Launch background watcher ... Apply ... Re-run verification tests ...
                    // Re-submit for review (back to `needs_review`)". So the state goes
                    // straight back to `needs_review` (002: `review_failed → needs_review`,
                    // and for `fix_proposed` the direct re-submit `fix_proposed →
                    // needs_review`, not `fix_proposed → working`), with no `working` between.
                    self.status(&format!("{answer} — feedback to address")).await;
                    // 000 "Context Monitoring": the ceiling is checked before the work: the
                    // rework, its re-verification and the resubmission, at worst.
                    let predicted = self.scenario.context.integration_pct.upper() + self.review_upper_pct();
                    if self.would_cross_ceiling(predicted) {
                        return self.rework_ceiling_handoff(&answer, predicted).await.map(Some);
                    }
                    self.start_background_watcher();
                    let rework_ms = self.ctx.draw(&self.scenario.timing.rework_ms);
                    self.work_for(rework_ms).await?;
                    self.cost(&self.scenario.context.integration_pct.clone());
                    self.add_new_tests();
                    self.status(&format!("fixing: feedback on {what} applied")).await;
                    let severity =
                        if TaskState::parse(&answer) == Some(TaskState::ReviewFailed) { Severity::Medium } else { Severity::Low };
                    self.deviation(&format!("{what}: {answer} (Smoothness 6/9) [{severity}]")).await;
                    // The watcher runs on through the re-verification; the pause stops it.
                }
                _ => {
                    self.status(&format!("unexpected state {answer} while waiting for review: prepare handoff")).await;
                    return self.clean_exit(&format!("conductor left the task in {answer}")).await.map(Some);
                }
            }
        }
    }

    /// The review request (or completion) and `needs_review`, in the order of 004 "Request
    /// Review" (message first) or, under `state-first`, of 000 Execution Queries 5.
    async fn send_review_request(&mut self, review: Review) -> Result<(), SqlFailure> {
        let report = self.report();
        let (statement, message) = match review {
            Review::Checkpoint { index, total, .. } => (Stmt::SendReviewRequest, messages::review_request(index, total, &report)),
            Review::ContextWorry { step } => (
                Stmt::SendReviewRequest,
                messages::review_request(0, 0, &report)
                    .replace("Checkpoint: 0 of 0", &format!("Checkpoint: context break after step {step}")),
            ),
            Review::Completion => (Stmt::SendCompletion, messages::completion(&self.launch.plan.task_id, &report, false)),
        };
        let request = vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(message))];
        if self.scenario.settings.state_first {
            // 000 Execution Queries 5 (docs/protocol.md D3): UPDATE, then INSERT.
            self.owned_write(Stmt::SetNeedsReview, vec![]).await?;
            self.owned_message(statement, request).await?;
        } else {
            // 004 "Request Review": message FIRST, then state change.
            self.owned_message(statement, request).await?;
            self.owned_write(Stmt::SetNeedsReview, vec![]).await?;
        }
        Ok(())
    }

    /// The hand-off when reworking after `answer` would cross the ceiling. After
    /// `fix_proposed` the musician resumes first (002 `fix_proposed → working`); after
    /// `review_failed` the clean exit writes `exited` from it, as after the context reply
    /// "prepare handoff now" (docs/protocol.md D10: 002's table has no way out of
    /// `review_failed` but `needs_review`).
    async fn rework_ceiling_handoff(&mut self, answer: &str, predicted_pct: i64) -> Result<End, SqlFailure> {
        let what = format!("the rework after {answer}");
        if TaskState::parse(answer) == Some(TaskState::FixProposed) {
            self.owned_write(Stmt::ResumeWorking, vec![]).await?;
            return self.ceiling_handoff(&what, predicted_pct).await;
        }
        // 002 has no `review_failed → error`: no escalation from here (docs/protocol.md C50).
        self.ceiling_handoff_now(&what, predicted_pct).await
    }

    /// Whether an approved review leaves no work before the completion review: a scheduled
    /// checkpoint after the plan's last step, with the scope unchanged (a reduced scope hands
    /// off after its checkpoint instead).
    fn completion_review_follows(&self, review: Review) -> bool {
        matches!(review, Review::Checkpoint { step, .. } if step >= self.launch.plan.steps) && self.scope == Scope::Normal
    }

    /// The conductor's answer to the request just made, or how the session ends without one:
    /// a clean exit after two pause TIMEOUTs, or under `replies-cite-request` a state change
    /// with no reply to this session (docs/protocol.md D15).
    pub(super) async fn answer_or_end(&mut self) -> Result<Result<Answer, End>, SqlFailure> {
        Ok(match self.wait_for_conductor().await? {
            Waited::Answer(answer) => Ok(answer),
            Waited::Unresponsive => Err(self.clean_exit("conductor unresponsive (two pause timeouts)").await?),
            Waited::NoOwnReply => Err(End::NoOwnReply),
            Waited::ExitRequested => Err(self.exit_on_request().await?),
        })
    }

    /// 000 "Pause Watcher": stop the background watcher, block on a foreground watcher. On a
    /// TIMEOUT, report it (`error`) and wait again; a second TIMEOUT → unresponsive (hand
    /// off). When the state changes, the conductor's new messages are read with it (000
    /// "Review Request Flow" 4: the new state and the latest message).
    async fn wait_for_conductor(&mut self) -> Result<Waited, SqlFailure> {
        self.stop_background_watcher();
        // 000 "Background Watcher": "On message detected: The watcher immediately exits. The
        // musician detects the watcher exit, reads the message from the database, decides
        // whether to interrupt current work". A watcher that returned a message while the
        // musician was moving into the pause (its request and state already written) is
        // handled here, before the pause watcher, not with the answer (docs/protocol.md C85).
        if !self.memory.borrow().inbox.is_empty() {
            self.handle_watcher_reports(false).await?;
        }
        // Asked to exit (D16, C181): no pause for an answer; the clean exit starts here.
        if self.exit_requested() {
            return Ok(Waited::ExitRequested);
        }
        // Two timeouts in one wait end it (000 "Pause Watcher"); each wait starts afresh.
        self.pause_timeouts = 0;
        for _ in 0..2 {
            self.memory.borrow_mut().pause_outcome = None;
            let serial = self.watcher_serial_next();
            let meta = ActorMeta { name: self.ctx.meta().name.watcher(WatcherKind::Pause, serial), ..self.ctx.meta().clone() };
            let (scenario, memory) = (self.scenario.clone(), self.memory.clone());
            let pause = self.ctx.spawn_child(meta, 0, move |ctx| watcher::pause(ctx, scenario, memory));
            self.ctx.join(pause).await;
            let outcome = self.memory.borrow_mut().pause_outcome.take();
            match outcome {
                Some(PauseOutcome::Answered(state)) => return self.read_answer(state).await,
                Some(PauseOutcome::FencedOut) => return Err(self.fenced_by_watcher()),
                Some(PauseOutcome::TimedOut) | None => {
                    self.pause_timeouts += 1;
                    if self.pause_timeouts >= 2 {
                        self.status("second pause TIMEOUT: conductor unresponsive, handing off").await;
                        return Ok(Waited::Unresponsive);
                    }
                    if let Some(state) = self.report_timeout().await? {
                        return self.read_answer(state).await;
                    }
                }
            }
        }
        Ok(Waited::Unresponsive)
    }

    /// 000 "Mode Transitions", Timeout handling 3: "If conductor appears down: update temp/
    /// status files, set state to `error`, send timeout message". By default (docs/protocol.md
    /// C21) the timeout is an error report that counts against the five retries (`ERROR (Retry
    /// N/5)`, `set_error`); under `timeout-not-counted` it sets `error` with its message and
    /// leaves `retry_count` as it is (`set_escalation`), so a slow conductor uses up no retry.
    /// By default the message goes first, as 004 orders every message/state pair; under
    /// `checked-transitions` the state goes first, in the order of the Timeout handling text, and
    /// only if the row still waits: an answer that landed since the watcher's last read is
    /// returned, to be acted on, and no TIMEOUT is reported.
    async fn report_timeout(&mut self) -> Result<Option<String>, SqlFailure> {
        let counted = self.scenario.settings.timeout_counts_retry;
        self.status(if counted {
            "pause TIMEOUT: conductor heartbeat stale, reporting"
        } else {
            "pause TIMEOUT: conductor heartbeat stale, reporting (no retry counted)"
        })
        .await;
        let statement = if counted { Stmt::SetError } else { Stmt::SetEscalation };
        let last_error = || vec![(":last_error", Value::Text("conductor_timeout".to_string()))];
        if self.scenario.settings.checked_transitions {
            if let Checked::Answered(state) = self.checked_write(statement, last_error()).await? {
                return Ok(Some(state));
            }
            let text = self.timeout_text(counted);
            self.own_message(Stmt::SendError, text).await?;
            return Ok(None);
        }
        let text = self.timeout_text(counted);
        self.own_message(Stmt::SendError, text).await?;
        // A row write like any other: under fencing a replaced session learns here that it
        // lost the task, and ends, instead of going on beside its successor.
        self.owned_write(statement, last_error()).await?;
        Ok(None)
    }

    /// The TIMEOUT's message: an error report (`ERROR (Retry N/5)`) when it counts a retry.
    fn timeout_text(&mut self, counted: bool) -> String {
        let error = "pause watcher TIMEOUT: conductor unresponsive";
        if !counted {
            return format!(
                "TIMEOUT (not counted as a retry):\n  Context Usage: {}%\n  Error: {error}\n  Awaiting conductor",
                self.context_pct
            );
        }
        self.errors_reported += 1;
        let sc = self.self_correction_flag().is_some();
        messages::error_report(self.errors_reported, self.context_pct, sc, error, &self.launch.plan.task_id, false)
    }

    /// The pause ended on `state`: read the conductor's new messages. The seeds' musician takes
    /// the state as its answer and the latest message as its text; under
    /// `replies-cite-request` only a reply to one of its own requests answers it.
    async fn read_answer(&mut self, state: String) -> Result<Waited, SqlFailure> {
        let read = self.read_messages_or_stop().await?;
        // The conductor's request to exit (docs/protocol.md D16) answers no request: it is
        // addressed to whichever session holds the row, so it needs no citation (D15).
        let exit_request = TaskState::parse(&state) == Some(TaskState::ExitRequested) && self.scenario.settings.exit_request_to_musician;
        if !self.scenario.settings.replies_cite_request || exit_request {
            return Ok(Waited::Answer(Answer { state, reply: read.last().cloned().unwrap_or_default() }));
        }
        Ok(match self.own_reply(&read).await? {
            Some(reply) => Waited::Answer(Answer { state, reply }),
            None => {
                self.no_own_reply(&state, &read);
                Waited::NoOwnReply
            }
        })
    }

    /// docs/protocol.md C51: among the conductor messages just read, the hand-over of this
    /// session's own task (`HANDOFF: task-01 session S1 went stale`) says the task is another
    /// session's now. 000 "Background Watcher": the musician reads the message and "decides
    /// whether to interrupt current work (urgent)"; a session told it was replaced has nothing
    /// left to do, so it stops at once and writes nothing more, not even its status line (the
    /// status file is the task's, read by the successor). Its stop is an exit attempt through
    /// its stop hook (C170), which holds it, writing nothing, while the row still names it
    /// unfinished. The failure then ends the session as a fenced write does; the note says
    /// why. Under `messages-logged-only` it is logged (C23).
    ///
    /// A hand-over sent before this session's own claim is about an earlier holder of its
    /// number (a double launch's first process, whose row was released and claimed again by
    /// this one): this session was not replaced by it, and reads it as information (C172).
    /// One sent in the claim's own second is taken as its own: the timestamps cannot tell.
    pub(super) async fn stop_if_replaced(&mut self, read: &[(String, String)]) -> Result<(), SqlFailure> {
        if !self.scenario.settings.reads_handover {
            return Ok(());
        }
        let (task, no) = (self.launch.plan.task_id.clone(), self.launch.session_no);
        let claimed_at = self.claimed_at.as_deref().unwrap_or("");
        let own = |(text, at): &&(String, String)| messages::hands_over_session(text, &task, no) && at.as_str() >= claimed_at;
        let Some((text, _)) = read.iter().find(own) else { return Ok(()) };
        let first = text.lines().next().unwrap_or("").to_string();
        self.ctx.note("replaced_read", format!("read `{first}`: this session was replaced, stopping without another write"));
        self.ctx.observe(Fact::WorkOver { session_id: self.ctx.meta().session_id.clone() });
        self.leave_replaced().await?;
        Err(SqlFailure::refused(Stmt::ReadNewConductorMessages, format!("replaced: the conductor handed {task} over (`{first}`)")))
    }

    /// Reads the conductor's new messages (below) and stops if one of them says this session
    /// was replaced (`stop_if_replaced`); returns their texts.
    pub(super) async fn read_messages_or_stop(&mut self) -> Result<Vec<String>, SqlFailure> {
        Ok(self.read_messages_with_times_or_stop().await?.into_iter().map(|(text, _)| text).collect())
    }

    /// `read_messages_or_stop`, each text with its `timestamp`.
    pub(super) async fn read_messages_with_times_or_stop(&mut self) -> Result<Vec<(String, String)>, SqlFailure> {
        let read = self.consume_conductor_messages_with_times().await?;
        self.stop_if_replaced(&read).await?;
        Ok(read)
    }

    /// docs/protocol.md C181: the conductor's `EXIT REQUESTED: <task>: prepare handoff and
    /// exit` of this session's task, sent since its claim (an older one asked an earlier
    /// holder, as C172 reads a hand-over), is the request itself, whatever the row reads by
    /// the time it is read: 000 and 002 "States the Conductor Sets" ("Conductor requests
    /// musician to prepare handoff and exit"), 000 "Emergency Messages" ("The musician judges
    /// urgency based on the message content"). Not under `exit-requested-conductor-only`, nor
    /// under `exit-request-no-state`, whose exit writes no state and needs the row to read
    /// `exit_requested` (a conductor lost between the message and the state leaves it `working`).
    pub(super) fn asks_this_session_to_exit(&self, text: &str, at: &str) -> bool {
        let task = &self.launch.plan.task_id;
        let settings = &self.scenario.settings;
        settings.exit_request_to_musician
            && !settings.exit_request_no_state
            && text.strip_prefix(messages::EXIT_REQUEST).is_some_and(|rest| rest.starts_with(&format!("{task}:")))
            && at >= self.claimed_at.as_deref().unwrap_or("")
    }

    /// Reads the conductor's new messages so the next watcher does not report them again
    /// (000 "Message Deduplication"), with each message's `timestamp`; each one counts as handled: here, after the
    /// read, or under `durable-cursor` by the world at the receipt's commit (sim/world/receipt.rs).
    pub(super) async fn consume_conductor_messages_with_times(&mut self) -> Result<Vec<(String, String)>, SqlFailure> {
        let found = self.read_conductor_messages().await?;
        if !self.reads_by_receipt() {
            for (id, _, _) in &found {
                self.ctx.observe(Fact::MessageHandled { session_id: self.ctx.meta().session_id.clone(), message_id: *id });
            }
        }
        Ok(found.into_iter().map(|(_, text, at)| (text, at)).collect())
    }

    /// New conductor messages: by id (000 "Message Deduplication"), or under the
    /// detect-by-timestamp variant the newest one if its timestamp is newer than the last
    /// seen (004 "Check for Conductor Messages"), which misses same-second bursts.
    pub(super) async fn read_conductor_messages(&mut self) -> Result<Vec<(i64, String, String)>, SqlFailure> {
        if self.scenario.settings.detect_by_timestamp {
            let found = self.ctx.sql(Stmt::ReadLatestConductorMessage, vec![(":task_id", self.task())]).await?;
            let (Some(id), Some(text), Some(at)) = (found.int(0, 0), found.text(0, 1), found.text(0, 2)) else { return Ok(Vec::new()) };
            let mut memory = self.memory.borrow_mut();
            if at <= memory.last_processed_timestamp.as_str() {
                return Ok(Vec::new());
            }
            memory.last_processed_timestamp = at.to_string();
            memory.last_processed_message_id = memory.last_processed_message_id.max(id);
            return Ok(vec![(id, text.to_string(), at.to_string())]);
        }
        let last = self.memory.borrow().last_processed_message_id;
        if self.reads_by_receipt() {
            return self.receive_conductor_messages(last).await;
        }
        let found = self
            .ctx
            .sql(Stmt::ReadNewConductorMessages, vec![(":task_id", self.task()), (":last_processed_message_id", Value::Integer(last))])
            .await?;
        if let Some(newest) = (0..found.rows.len()).filter_map(|r| found.int(r, 0)).max() {
            self.memory.borrow_mut().last_processed_message_id = newest;
        }
        Ok((0..found.rows.len())
            .map(|r| (found.int(r, 0).unwrap_or(0), found.text(r, 1).unwrap_or("").to_string(), found.text(r, 2).unwrap_or("").to_string()))
            .collect())
    }
}

impl Musician {
    /// Whether new conductor messages are read by `send_receipt` (variant `durable-cursor`,
    /// unless `detect-by-timestamp` reads the newest one instead): then the world, not this
    /// code, observes them handled, at the receipt's commit (sim/world/receipt.rs).
    pub(super) fn reads_by_receipt(&self) -> bool {
        self.scenario.settings.durable_cursor && !self.scenario.settings.detect_by_timestamp
    }

    /// Variant `durable-cursor` (issue 28): the new conductor messages after `last`, read by
    /// the one statement that also writes this session's receipt for them (`send_receipt`), so
    /// the cursor is durable the instant the messages are read: a successor starts after the
    /// receipt instead of handling them again (000 "Message Deduplication" keeps it in memory).
    async fn receive_conductor_messages(&mut self, last: i64) -> Result<Vec<(i64, String, String)>, SqlFailure> {
        let receipt = format!("{RECEIPT_PREFIX} conductor messages after #{last}, read by {}", self.launch.worked_by());
        let params = vec![
            (":task_id", self.task()),
            (":session_id", self.session()),
            (":message", Value::Text(receipt)),
            (":last_processed_message_id", Value::Integer(last)),
            (":lease_until", self.ctx.lease_until()),
        ];
        let found = self.ctx.sql(Stmt::SendReceipt, params).await?;
        if found.rows.is_empty() {
            // Fenced (scenarios/variants/fencing.sql): no receipt, so the row names another
            // session or none; the messages are the successor's to read, not this session's.
            self.ctx.note("fenced_out", format!("`send_receipt` returned no row: {} is not this session's", self.launch.plan.task_id));
            return Err(SqlFailure::fenced_out(Stmt::SendReceipt));
        }
        let read = match crate::world::receipt::received(&found) {
            Ok(read) => read,
            Err(e) => {
                // A designer's `send_receipt` that returns something else: said, not hidden.
                self.ctx.note("receipt_unreadable", format!("send_receipt returned no JSON array of [id, message, timestamp]: {e}"));
                Vec::new()
            }
        };
        if let Some(newest) = read.iter().map(|(id, _, _)| *id).max() {
            self.memory.borrow_mut().last_processed_message_id = newest;
        }
        Ok(read)
    }
}

/// How a receipt's text starts: the successor finds its predecessor's cursor by it.
pub(super) const RECEIPT_PREFIX: &str = "RECEIPT:";

/// The review as its status lines name it (`handoff::Reviewed`, shared with the successor's reader).
fn reviewed(review: Review) -> Reviewed {
    match review {
        Review::Checkpoint { index, .. } => Reviewed::Checkpoint(index),
        Review::ContextWorry { step } => Reviewed::ContextWorry(step),
        Review::Completion => Reviewed::Final,
    }
}

/// The step a review covers: its checkpoint's, or the plan's last for the completion review.
fn review_step(review: Review, steps: u64) -> u64 {
    match review {
        Review::Checkpoint { step, .. } | Review::ContextWorry { step } => step,
        Review::Completion => steps,
    }
}
