//! A conductor session relaunched after a crash (docs/protocol.md C35). Its predecessor's
//! memory is gone — pending requests, message cursor, sessions launched, sessions handled,
//! tasks awaiting a claim, reviews in flight — and it rebuilds what it can from comms.db only,
//! as the conductor "Monitors all Tier 1 sessions via database" (000 "3-Tier Orchestration
//! Model"). The seeds describe no conductor restart; they only have musicians notice that "the
//! conductor may have crashed" (000 "Pause Watcher (During Conductor Wait)").
//!
//! What it reads: its own row (`conductor_health`), every task row (`poll_tasks`, and
//! `read_task_record` for `worked_by`), everything it wrote (`read_conductor_messages`) and
//! every musician message from id 0 (`read_musician_messages`, 000 "Message Deduplication").
//! What it cannot know, and so gets wrong, is documented in C35: a session launched but not
//! yet claimed looks like a task never launched, and launches that left no trace (a relaunch
//! of an unclaimed task) are not counted.

use std::collections::{BTreeMap, BTreeSet};

use super::{text, Conductor, TaskView};
use crate::actors::messages;
use crate::vocab::{MessageKind, Stmt, TaskState};
use crate::world::SqlFailure;

/// `Written::last_answer`'s kind for an exit request (a `handoff` message that is no hand-over).
const EXIT_REQUEST: &str = "exit_request";

/// What the conductor wrote before the crash, per task (`read_conductor_messages`).
#[derive(Debug, Default)]
struct Written {
    /// Tasks with their `instruction`.
    instructed: BTreeSet<String>,
    /// Per task: the id and type of the conductor's last answer or hand-over.
    last_answer: BTreeMap<String, (i64, String)>,
    /// Per task: how many `handoff` messages (each hand-over launches one session).
    handoffs: BTreeMap<String, u32>,
    /// Per task: how many of those handed over a session that went silent (not one that
    /// exited: `messages::hands_over_an_exit`), the sessions `uncap-lost-sessions` does not
    /// count against C8's cap.
    silent_handoffs: BTreeMap<String, u32>,
    /// (task, text) of every emergency sent.
    emergencies: Vec<(String, String)>,
    /// (task, text) of every exit request sent (docs/protocol.md D16, C33): a `handoff`
    /// message that launches no session.
    exit_requests: Vec<(String, String)>,
}

impl Conductor<'_> {
    /// Takes the conductor's row over (or registers it if the crash came first), writes the
    /// rows and instructions the dead session never wrote, then rebuilds its memory.
    pub(super) async fn resume(&mut self) -> Result<(), SqlFailure> {
        let ctx = self.ctx;
        let own_row = ctx.sql(Stmt::ConductorHealth, vec![]).await?;
        let session_id = text(&ctx.meta().session_id);
        let takeover = if own_row.rows.is_empty() { Stmt::ConductorRegister } else { Stmt::ConductorResume };
        ctx.sql(takeover, vec![(":session_id", session_id)]).await?;
        let written = self.read_written().await?;
        let rows = self.poll_tasks().await?;
        let created = self.write_missing(&rows, &written).await?;
        self.resume_exit_requests(&rows, &written).await?;
        // Every musician message from the first: the cursor, the review numbers and the
        // latest request of each task, as the dead session had them.
        self.writers = Some(BTreeMap::new());
        self.read_messages().await?;
        let writers = self.writers.take().unwrap_or_default();
        self.rebuild_handled(&rows, &writers);
        self.settle_requests(&rows, &written).await?;
        // A `claim_blocked` the dead session answered (a hand-over after it) is not acted on
        // again (docs/protocol.md C39).
        self.claim_blocked.retain(|task, id| written.last_answer.get(task).is_none_or(|(answer_id, _)| answer_id < id));
        for row in &rows {
            self.recount_sessions(row, &written).await?;
        }
        self.mark_emergencies_sent(&written);
        for task_id in &created {
            self.launch(task_id, false);
        }
        ctx.note(
            "conductor_resumed",
            format!(
                "{} task rows, {} created, {} requests pending, {} awaiting a claim, messages read up to id {}",
                rows.len(),
                created.len(),
                self.pending.len(),
                self.awaiting_claim.len(),
                self.last_message_id
            ),
        );
        Ok(())
    }

    async fn read_written(&self) -> Result<Written, SqlFailure> {
        let found = self.ctx.sql(Stmt::ReadConductorMessages, vec![]).await?;
        let mut written = Written::default();
        for row in 0..found.rows.len() {
            let (id, task_id) = (found.int(row, 0).unwrap_or(0), found.text(row, 1).unwrap_or("").to_string());
            let kind = found.text(row, 2).unwrap_or("");
            match MessageKind::parse(kind) {
                Some(MessageKind::Instruction) => {
                    written.instructed.insert(task_id);
                }
                Some(MessageKind::Emergency) => written.emergencies.push((task_id, found.text(row, 3).unwrap_or("").to_string())),
                Some(MessageKind::Handoff) if found.text(row, 3).unwrap_or("").starts_with(messages::EXIT_REQUEST) => {
                    written.exit_requests.push((task_id.clone(), found.text(row, 3).unwrap_or("").to_string()));
                    written.last_answer.insert(task_id, (id, EXIT_REQUEST.to_string()));
                }
                Some(answer @ (MessageKind::Approval | MessageKind::Rejection | MessageKind::FixProposal | MessageKind::Handoff)) => {
                    if answer == MessageKind::Handoff {
                        *written.handoffs.entry(task_id.clone()).or_insert(0) += 1;
                        if !messages::hands_over_an_exit(found.text(row, 3).unwrap_or("")) {
                            *written.silent_handoffs.entry(task_id.clone()).or_insert(0) += 1;
                        }
                    }
                    written.last_answer.insert(task_id, (id, kind.to_string()));
                }
                _ => {}
            }
        }
        Ok(written)
    }

    /// 004 "Initial State": the conductor creates the rows before it launches. A crash
    /// during its bootstrap leaves some unwritten; those rows exist nowhere, so their tasks
    /// were never launched and are launched now. Rows that exist are never created again.
    async fn write_missing(&mut self, rows: &[TaskView], written: &Written) -> Result<Vec<String>, SqlFailure> {
        let mut created = Vec::new();
        for plan in self.scenario.tasks.clone() {
            let exists = rows.iter().any(|r| r.task_id == plan.task_id);
            if !exists {
                self.create_task(&plan.task_id).await?;
                created.push(plan.task_id.clone());
            }
            if !written.instructed.contains(&plan.task_id) {
                self.send_instruction(&plan.task_id).await?;
            }
        }
        Ok(created)
    }

    /// Every session that wrote to a task and is not the one its row names was replaced (it
    /// exited, or was handed over): handled, as the dead session had it. Under
    /// `replies-cite-request` their pending requests are closed again (docs/protocol.md D15).
    fn rebuild_handled(&mut self, rows: &[TaskView], writers: &BTreeMap<String, BTreeSet<String>>) {
        for row in rows {
            let replaced = writers.get(&row.task_id).into_iter().flatten().filter(|s| **s != row.session_id);
            self.handled_sessions.extend(replaced.cloned());
        }
        for task_id in self.pending.keys().cloned().collect::<Vec<_>>() {
            self.drop_replaced_request(&task_id);
        }
    }

    /// A request is pending unless an answer or a hand-over of the conductor's follows it. An
    /// answer whose state never reached the row (the crash fell between the two writes) is
    /// finished from its message: 000 "Terminal Write Atomicity", the message "serves as a
    /// recovery record if the state update fails".
    async fn settle_requests(&mut self, rows: &[TaskView], written: &Written) -> Result<(), SqlFailure> {
        for (task_id, (_, request)) in self.pending.clone() {
            let Some((answer_id, kind)) = written.last_answer.get(&task_id) else { continue };
            if *answer_id < request.message_id {
                continue;
            }
            self.pending.remove(&task_id);
            let state = rows.iter().find(|r| r.task_id == task_id).map_or("", |r| r.state.as_str());
            let Some(answered) =
                answered_state(kind).filter(|_| matches!(TaskState::parse(state), Some(TaskState::NeedsReview | TaskState::Error)))
            else {
                continue;
            };
            self.ctx.note("answer_completed", format!("{task_id}: `{kind}` sent before the crash, still `{state}`: now `{answered}`"));
            self.ctx.sql(Stmt::SetTaskState, vec![(":task_id", text(&task_id)), (":state", super::state_value(answered))]).await?;
        }
        Ok(())
    }

    /// Sessions launched for a task: the number in `worked_by` of the last claim
    /// (`musician-task-03-S2`, 000 "5. Session Handoff"), or one more than the hand-overs
    /// written, whichever is larger; a row never claimed had its first session launched.
    /// A row handed over and not yet claimed awaits its claim, and a row never claimed its
    /// first; either is relaunched a staleness window from now if no claim comes.
    async fn recount_sessions(&mut self, row: &TaskView, written: &Written) -> Result<(), SqlFailure> {
        let record = self.ctx.sql(Stmt::ReadTaskRecord, vec![(":task_id", text(&row.task_id))]).await?;
        let worked_by = record.text(0, 2).map(str::to_string);
        let claimed = worked_by.as_deref().and_then(session_number).unwrap_or(0);
        let handed_over = written.handoffs.get(&row.task_id).copied().unwrap_or(0);
        let handed_over_last = written.last_answer.get(&row.task_id).is_some_and(|(_, kind)| MessageKind::Handoff.is(kind));
        if handed_over_last
            && claimed <= handed_over
            && !matches!(TaskState::parse(&row.state), Some(TaskState::FixProposed | TaskState::ExitRequested | TaskState::Complete))
        {
            return self.finish_hand_over(row, handed_over).await;
        }
        self.sessions.insert(row.task_id.clone(), claimed.max(1 + handed_over));
        // docs/protocol.md C87: under `uncap-lost-sessions` the sessions lost to faults are
        // rebuilt from the hand-overs of silent sessions written, not forgotten with the dead
        // conductor's memory (issue 48: a relaunched conductor gave tasks up at the cap). A
        // relaunch of a session that never claimed leaves no message and stays counted.
        if self.scenario.settings.uncap_lost_sessions && self.scenario.settings.release_stale {
            let lost = written.silent_handoffs.get(&row.task_id).copied().unwrap_or(0);
            self.sessions_lost.insert(row.task_id.clone(), lost);
        }
        let state = TaskState::parse(&row.state);
        let waiting =
            (state == Some(TaskState::FixProposed) && handed_over_last) || (state == Some(TaskState::Watching) && worked_by.is_none());
        if waiting {
            self.awaiting_claim.insert(row.task_id.clone());
            self.launch_started.insert(row.task_id.clone(), self.ctx.now_ms());
        }
        Ok(())
    }

    /// A hand-over cut between its `handoff` message and its `fix_proposed` (000 "5. Session
    /// Handoff": message, state, then the next session): the row still names the session the
    /// message handed over, and no successor was launched, since the launch comes after the
    /// state. It is finished from its message, as an answer is (000 "Terminal Write
    /// Atomicity": the message "serves as a recovery record if the state update fails"):
    /// `fix_proposed`, then the successor the message announced. Counting that successor as
    /// launched before it was (one more than the hand-overs written) would give the task up a
    /// session early and name the wrong session stale in the next hand-over's message.
    async fn finish_hand_over(&mut self, row: &TaskView, handed_over: u32) -> Result<(), SqlFailure> {
        self.ctx.note(
            "answer_completed",
            format!("{}: `handoff` sent before the crash, still `{}`: now `fix_proposed`, and its next session", row.task_id, row.state),
        );
        self.ctx
            .sql(Stmt::SetTaskState, vec![(":task_id", text(&row.task_id)), (":state", super::state_value(TaskState::FixProposed))])
            .await?;
        self.handled_sessions.insert(row.session_id.clone());
        self.sessions.insert(row.task_id.clone(), handed_over);
        self.awaiting_claim.insert(row.task_id.clone());
        self.launch(&row.task_id, false);
        Ok(())
    }

    /// A row left `exit_requested` asks the session it names to exit (C33): the request is
    /// followed again — the session's final message, read with the others from id 0, launches
    /// the successor; its silence past the staleness threshold hands the task over. A request
    /// whose message is there but whose state is not (the crash fell between the two writes)
    /// is finished from its message, as any answer is (000 "Terminal Write Atomicity"). A
    /// scripted request whose message is in the database counts as sent.
    async fn resume_exit_requests(&mut self, rows: &[TaskView], written: &Written) -> Result<(), SqlFailure> {
        for row in rows.iter().filter(|r| r.task_id != crate::vocab::CONDUCTOR_TASK_ID) {
            let half_written = written.last_answer.get(&row.task_id).is_some_and(|(_, kind)| kind == EXIT_REQUEST)
                && super::exit_request::reaches_a_session(&row.state);
            if half_written {
                self.ctx.note(
                    "answer_completed",
                    format!("{}: exit request sent before the crash, still `{}`: now `exit_requested`", row.task_id, row.state),
                );
                self.ctx
                    .sql(
                        Stmt::SetTaskState,
                        vec![(":task_id", text(&row.task_id)), (":state", super::state_value(TaskState::ExitRequested))],
                    )
                    .await?;
            }
            if half_written || TaskState::parse(&row.state) == Some(TaskState::ExitRequested) {
                self.asked_to_exit.insert(row.task_id.clone(), (row.session_id.clone(), 0));
            }
        }
        for (index, request) in self.scenario.conductor.exit_requests.iter().enumerate() {
            let task_id = crate::input::scenario::task_id(request.task);
            let message = messages::exit_request(&task_id, super::exit_request::SCRIPTED);
            if written.exit_requests.iter().any(|(t, m)| *t == task_id && *m == message) {
                self.exit_requests_sent[index] = true;
            }
        }
        Ok(())
    }

    /// An emergency counts as sent if its message is in the database (as many times as it is).
    fn mark_emergencies_sent(&mut self, written: &Written) {
        let mut found = written.emergencies.clone();
        for (index, emergency) in self.scenario.conductor.emergencies.iter().enumerate() {
            let task_id = crate::input::scenario::task_id(emergency.task);
            let message = messages::emergency(&task_id, emergency.kind());
            if let Some(at) = found.iter().position(|(t, m)| *t == task_id && *m == message) {
                found.remove(at);
                self.emergencies_sent[index] = true;
            }
            // Its resume instructions (C41), if they went out.
            let resume = messages::emergency_resume(&task_id);
            if let Some(at) = found.iter().position(|(t, m)| *t == task_id && *m == resume) {
                found.remove(at);
                self.resumes_sent[index] = true;
            }
        }
    }
}

/// The state a conductor answer sets (docs/protocol.md C5); `None` for a hand-over, which is
/// done again if the session is still stale.
fn answered_state(kind: &str) -> Option<TaskState> {
    match MessageKind::parse(kind)? {
        MessageKind::Approval => Some(TaskState::ReviewApproved),
        MessageKind::Rejection => Some(TaskState::ReviewFailed),
        MessageKind::FixProposal => Some(TaskState::FixProposed),
        _ => None,
    }
}

/// The session number in a `worked_by` of 000's form: `musician-task-03` is 1,
/// `musician-task-03-S2` is 2; `None` for anything else (the `worked-by-session-id` variant).
fn session_number(worked_by: &str) -> Option<u32> {
    let rest = worked_by.strip_prefix("musician-task-")?;
    match rest.split_once("-S") {
        Some((_, number)) => number.parse().ok(),
        None => rest.bytes().all(|b| b.is_ascii_digit()).then_some(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_by_names_the_session_number_in_000s_form_only() {
        assert_eq!(session_number("musician-task-03"), Some(1));
        assert_eq!(session_number("musician-task-03-S2"), Some(2));
        assert_eq!(session_number("musician-task-120-S12"), Some(12));
        assert_eq!(session_number("3f2a81c0-1b2c-4d5e-8f90-123456789abc"), None);
        assert_eq!(session_number("musician-task-03-Sx"), None);
    }

    #[test]
    fn only_answers_have_a_state_to_finish() {
        assert_eq!(answered_state("approval"), Some(TaskState::ReviewApproved));
        assert_eq!(answered_state("rejection"), Some(TaskState::ReviewFailed));
        assert_eq!(answered_state("fix_proposal"), Some(TaskState::FixProposed));
        assert_eq!(answered_state("handoff"), None);
    }
}
