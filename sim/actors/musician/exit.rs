//! The end of a session (seed 000 "Clean Exit Protocol", "Terminal Write Atomicity"): the
//! completion, the clean exit with its HANDOFF, the stop hook and the session's report.

use crate::actors::handoff::{self};
use crate::actors::messages;
use crate::vocab::{Severity, Stmt, TaskState};
use crate::world::SqlFailure;
use rusqlite::types::Value;

use super::*;

/// What a session does with the fallback prompt of a blocked exit attempt.
#[derive(Clone, Copy)]
enum Blocked {
    /// Its clean exit is done (its row left `exit_requested`, D16): nothing; it tries again.
    CleanupDone,
    /// It read that it was replaced (docs/protocol.md C51, C170): nothing written; it tries again.
    Replaced,
}

impl Musician {
    /// 000 "Completion Flow" 5 and 004 "Mark Complete": resume, final message first, then
    /// `complete` as the absolute last database write; then the stop hook. Under
    /// `complete-from-approved` no `resume_working` first: 000's "On `review_approved`: …
    /// LAST STEP: … SET state = 'complete'" read literally, `review_approved → complete`
    /// (docs/protocol.md C20, D10).
    pub(super) async fn finish_complete(&mut self) -> Result<(), SqlFailure> {
        if !self.scenario.settings.complete_from_approved {
            self.owned_write(Stmt::ResumeWorking, vec![]).await?;
        }
        let report_path = messages::report_path(&self.launch.plan.task_id);
        self.ctx
            .write_file(
                &report_path,
                &format!("# {} completion report\n\nAll deliverables created, tests passing.\n", self.launch.plan.task_id),
            )
            .await;
        self.status(&format!("report written: {report_path}")).await;
        let mut report = self.report();
        report.key_outputs.insert(0, (report_path.clone(), "created"));
        let message = messages::completion(&self.launch.plan.task_id, &report, true);
        self.own_message(Stmt::SendCompletion, message).await?;
        self.status("task complete").await;
        self.stop_background_watcher();
        self.owned_write(Stmt::MarkComplete, vec![(":report_path", Value::Text(report_path))]).await?;
        self.stop_hook().await
    }

    /// Whether the conductor asked this session to exit (docs/protocol.md D16).
    pub(super) fn exit_requested(&self) -> bool {
        self.memory.borrow().exit_requested
    }

    /// A pause answered with `exit_requested`: under 000 and 002's reading ("Conductor requests
    /// musician to prepare handoff and exit", "States the Conductor Sets") the session takes it
    /// as the request; under 004's (`exit-requested-conductor-only`) it is no answer it knows.
    pub(super) async fn takes_exit_request(&mut self, answer: &str) -> bool {
        if TaskState::parse(answer) != Some(TaskState::ExitRequested) || !self.scenario.settings.exit_request_to_musician {
            return false;
        }
        self.memory.borrow_mut().exit_requested = true;
        self.status("conductor set exit_requested: preparing handoff now").await;
        true
    }

    /// At a safe point before a write of its own state (an error report, an escalation, a
    /// context warning): asked to exit, the session exits instead of writing over
    /// `exit_requested` (docs/protocol.md D16, C33). `None`: not asked, go on.
    pub(super) async fn exit_if_requested(&mut self) -> Result<Option<End>, SqlFailure> {
        if !self.exit_requested() {
            return Ok(None);
        }
        self.exit_on_request().await.map(Some)
    }

    /// The clean exit the conductor asked for, from the safe point the session has reached.
    pub(super) async fn exit_on_request(&mut self) -> Result<End, SqlFailure> {
        self.clean_exit("the conductor requested exit (exit_requested)").await
    }

    /// 000 "Clean Exit Protocol": stop watchers, HANDOFF, report, final status line, the
    /// `handoff` message, then `exited` as the absolute last write. Each of the HANDOFF, the
    /// report and the final message costs a message's context (000 Example: Clean Exit &
    /// Handoff, "Context progression": 69 % → 70 → 71 → 72 "after state update").
    /// Asked to exit (docs/protocol.md D16), the session writes no state: the final message is
    /// its last write and the row stays `exit_requested` for the successor's claim.
    pub(super) async fn clean_exit(&mut self, reason: &str) -> Result<End, SqlFailure> {
        self.close_finished_step().await?;
        self.write_handoff_with_or_without_watcher().await?;
        let plan = self.launch.plan.clone();
        self.cost(&self.scenario.context.message_pct.clone());
        let timestamp = self.ctx.now_utc();
        let worked_by = self.launch.worked_by();
        let session_id = self.ctx.meta().session_id.clone();
        // 003 "HANDOFF Document Structure": the Deviations section is the list from the temp/
        // deviations file, which holds every session's: earlier sessions' and this one's.
        let all_deviations: Vec<String> = self.deviations_before.iter().chain(&self.deviations).cloned().collect();
        // "Context at exit": what the session will have used when it sets `exited`, the
        // report and the final message included (the example's HANDOFF says 72 % while its
        // status says "HANDOFF created [ctx: 70%]").
        let at_exit_pct = self.context_pct + 2 * self.scenario.context.message_pct.mean();
        let doc = handoff::render(&handoff::HandoffDoc {
            task_id: &plan.task_id,
            session_id: &session_id,
            worked_by: &worked_by,
            exit_reason: reason,
            context_pct: at_exit_pct,
            timestamp: &timestamp,
            steps: plan.steps,
            agents_per_step: plan.agents_in(self.next.step),
            next: self.next,
            deviations: &all_deviations,
            self_correction: self.self_correction_flag(),
            last_checkpoint_step: self.last_checkpoint_step,
            proposals: &self.proposals,
        });
        self.ctx.write_file(&self.temp("HANDOFF"), &doc).await;
        self.status(&format!("HANDOFF written: {}", self.temp("HANDOFF"))).await;
        self.cost(&self.scenario.context.message_pct.clone());
        let report_path = format!("docs/implementation/reports/{}-handoff-s{}.md", plan.task_id, self.launch.session_no);
        self.ctx
            .write_file(
                &report_path,
                &format!("# {} handoff report (S{})\n\nExit reason: {reason}\n", plan.task_id, self.launch.session_no),
            )
            .await;
        self.status(&format!("report written: {report_path}")).await;
        self.status("clean exit preparing").await;
        let last_completed = if self.next.agent > 1 {
            format!("{} (partial — agents 1-{})", self.next.step, self.next.agent - 1)
        } else {
            format!("{}", self.next.step.saturating_sub(1))
        };
        let rest = super::context::positions(&plan, self.next, plan.steps);
        let remaining = if rest.is_empty() {
            "final verification".to_string()
        } else {
            format!("{}, final verification", super::context::describe_positions(&rest))
        };
        let self_correction = self.self_correction.as_deref().map(|d| d.split(" —").next().unwrap_or(d).to_string());
        let mut key_outputs = vec![(report_path.clone(), "created")];
        key_outputs.extend(self.proposals.iter().map(|p| (p.clone(), "created")));
        self.cost(&self.scenario.context.message_pct.clone());
        let text = messages::exited(&messages::Exited {
            task_id: &plan.task_id,
            reason,
            context_pct: self.context_pct,
            self_correction: self_correction.as_deref(),
            last_completed: &last_completed,
            remaining: &remaining,
            proposals: &self.proposals,
            key_outputs: &key_outputs,
        });
        // Under heartbeat-until-exit the watcher has kept the heartbeat up to here.
        self.stop_background_watcher();
        self.own_message(Stmt::SendHandoff, text.clone()).await?;
        // 000 "Clean Exit Protocol" 7 and Bootstrap 5 ("Old session exits → writes HANDOFF,
        // sets state to `exited`"), asked to exit or not; under `exit-request-no-state` a
        // session asked to exit leaves the row `exit_requested` (docs/protocol.md D16).
        if !(self.exit_requested() && self.scenario.settings.exit_request_no_state) {
            self.mark_exited(Some(text)).await?;
        }
        self.stop_hook().await?;
        Ok(End::CleanExit)
    }

    /// `exited`. Under `checked-transitions` the write also checks the row's state: a conductor
    /// answer that landed while the HANDOFF was being written (a fix proposed, a review
    /// approved, after two pause TIMEOUTs) is left by 002's own path out of it, `working`, and
    /// then `exited` (002 `fix_proposed → working`, `review_approved → working`,
    /// `working → exited`), with the final message (if the exit sends one) again between the
    /// two (000 "Terminal Write Atomicity": the final message, then the terminal state). The
    /// session leaves as it decided: the answer's message is either already read by its
    /// background watcher (kept through the HANDOFF under `heartbeat-until-exit`), and goes with
    /// it, or left for the successor, which finds it after this session's last receipt
    /// (`durable-cursor`).
    pub(super) async fn mark_exited(&mut self, final_message: Option<String>) -> Result<(), SqlFailure> {
        let Checked::Answered(state) = self.checked_write(Stmt::MarkExited, vec![]).await? else { return Ok(()) };
        if !matches!(TaskState::parse(&state), Some(TaskState::FixProposed | TaskState::ReviewApproved)) {
            // 002 has no way from this state to `exited` for the musician: stop, writing nothing
            // more; the row, still the session's, goes stale and is handed over.
            self.ctx.note("exit_refused", format!("`mark_exited` from `{state}`: 002 has no way out to `exited`"));
            return Err(SqlFailure::refused(
                Stmt::MarkExited,
                format!("the row is `{state}`, which the session cannot leave for `exited`"),
            ));
        }
        self.owned_write(Stmt::ResumeWorking, vec![]).await?;
        if let Some(text) = final_message {
            self.own_message(Stmt::SendHandoff, text).await?;
        }
        self.owned_write(Stmt::MarkExited, vec![]).await
    }

    /// A hand-off decided right after a step's last agent (the context check follows every
    /// agent) finds the step done but not closed: it closes it first (000 "9. Begin
    /// Execution": "Update heartbeat at each step boundary"), so the HANDOFF continues from the
    /// next step. Without this it read "Step 4 agents 3-2" and "Continue from step 4 agent 3",
    /// the status file said step 5, and the successor, seeing a mismatch, redid step 4
    /// (scenarios/faults/context-exhaustion.toml). A checkpoint of the closed step is still
    /// due: the successor reviews it before going on (`pending_checkpoint`).
    async fn close_finished_step(&mut self) -> Result<(), SqlFailure> {
        let step = self.next.step;
        if step > self.launch.plan.steps || self.next.agent <= self.launch.plan.agents_in(step) {
            return Ok(());
        }
        self.step_boundary(&format!("step {step} completed")).await?;
        self.next = Position { step: step + 1, agent: 1 };
        Ok(())
    }

    /// The time spent writing the HANDOFF and the report. 000 "Clean Exit Protocol" 1-2: every
    /// subagent and watcher stopped first, so nothing refreshes the heartbeat meanwhile
    /// (docs/protocol.md D14, C24). Under `heartbeat-until-exit` the background watcher runs
    /// on, relaunched if it exits, until the final message (000 "Reference: Watcher Protocol
    /// Detail": "A watcher must always be running while the task is active … until terminal
    /// state").
    async fn write_handoff_with_or_without_watcher(&mut self) -> Result<(), SqlFailure> {
        if !self.scenario.settings.watcher_until_exit {
            self.stop_background_watcher();
            let write_ms = self.ctx.draw(&self.scenario.timing.handoff_ms);
            self.ctx.sleep(write_ms).await;
            self.status("clean exit: all subagents and watchers stopped").await;
            return Ok(());
        }
        if self.background.is_none() {
            self.start_background_watcher();
        }
        let write_ms = self.ctx.draw(&self.scenario.timing.handoff_ms);
        self.work_for(write_ms).await?;
        self.status("clean exit: all subagents stopped, the background watcher kept until the final write").await;
        Ok(())
    }

    /// 004 "Hook System": the session may end only when its row is `complete` or `exited`;
    /// otherwise the hook injects its fallback prompt and asks again, at most 500 times. A
    /// session no row names has no hook. The checks are counted per session (the hook's
    /// iteration counter), so a session the hook blocked before (C141) goes on from its count.
    pub(super) async fn stop_hook(&mut self) -> Result<(), SqlFailure> {
        self.exit_attempts(Blocked::CleanupDone).await
    }

    /// Every exit attempt of the session passes the stop hook (000 "Implementation-Hook
    /// Integration": it "Fires when Claude attempts to exit"), each one iteration of its
    /// counter, `timing.stop_hook_retry_ms` apart (docs/protocol.md C30), until the hook lets
    /// the session go or its 500 iterations force the exit. What the session does with the
    /// fallback prompt of a blocked attempt is `blocked`'s.
    async fn exit_attempts(&mut self, blocked: Blocked) -> Result<(), SqlFailure> {
        const ITERATIONS_MAX: u32 = 500;
        while self.hook_checks < ITERATIONS_MAX {
            let Some(states) = self.stop_hook_check().await? else { return Ok(()) };
            match blocked {
                // A session whose own cleanup is done has nothing to do with the fallback
                // prompt: it stops again when the hook next lets it.
                Blocked::CleanupDone => {}
                Blocked::Replaced => self.fallback_prompt_to_a_replaced_session(&states),
            }
            self.ctx.sleep(self.scenario.timing.stop_hook_retry_ms).await;
        }
        self.ctx.note("stop_hook_forced_exit", format!("{ITERATIONS_MAX} iterations"));
        Ok(())
    }

    /// docs/protocol.md C170: a session that read it was replaced (C51) tries to exit. While
    /// the row still names it unfinished (the hand-over's `fix_proposed`, before the
    /// successor's claim) its stop hook blocks and injects the fallback prompt; the session
    /// writes nothing, not even the cleanup the prompt asks for (the row, the HANDOFF and the
    /// status file are its successor's), and tries to exit again. Its watchers stop first
    /// (000 "Clean Exit Protocol" 2), and under `lease-self-check` it holds no lease any more:
    /// no heartbeat of its own refreshes a row it does not own while it waits.
    pub(super) async fn leave_replaced(&mut self) -> Result<(), SqlFailure> {
        self.stop_background_watcher();
        if let Some(lease) = self.ctx.lease() {
            lease.release();
        }
        self.exit_attempts(Blocked::Replaced).await
    }

    /// The blocked exit attempt of a replaced session: the prompt is read (it costs a
    /// message's context) and answered by the next attempt, with no write (C170).
    fn fallback_prompt_to_a_replaced_session(&mut self, states: &[String]) {
        let prompt = messages::stop_hook_fallback_prompt(&self.launch.plan.task_id, states, self.hook_checks);
        self.ctx.note("stop_hook_fallback_prompt", prompt);
        self.cost(&self.scenario.context.message_pct.clone());
        let retry_ms = self.scenario.timing.stop_hook_retry_ms;
        self.ctx.note(
            "replaced_exit_retry",
            format!("the prompt's cleanup is of a row this session no longer owns: nothing written, exit attempted again in {retry_ms} ms"),
        );
    }

    /// One check of the stop hook (004 "Hook System"): `None` if it lets the session go, else
    /// the states of the rows that name the session. The hook reads through its own `sqlite3`
    /// connection, opened for the check (004 "Database": "comms-link MCP (sessions) + sqlite3
    /// (stop hook)"): under WAL its read sees every transaction committed before the check
    /// began and none after (docs/protocol.md C140). The session's statements each commit
    /// when their tool call returns, so the run's one connection, read at the check's instant,
    /// holds exactly that snapshot.
    async fn stop_hook_check(&mut self) -> Result<Option<Vec<String>>, SqlFailure> {
        self.hook_checks += 1;
        let iteration = self.hook_checks;
        let rows = self.ctx.sql(Stmt::StopHookState, vec![(":session_id", self.session())]).await?;
        let states: Vec<&str> = (0..rows.rows.len()).filter_map(|r| rows.text(r, 1)).collect();
        // 004 "Hook System": the hook "activates automatically when a session's
        // CLAUDE_SESSION_ID is found in orchestration_tasks.session_id"; once a successor's
        // claim names another session (after an exit on request, D16), it lets this one go.
        if states.is_empty() {
            self.ctx.note("stop_hook", format!("iteration {iteration}: no row names this session, exit allowed"));
            return Ok(None);
        }
        if states.iter().any(|s| TaskState::parse(s).is_some_and(TaskState::is_terminal)) {
            self.ctx.note("stop_hook", format!("iteration {iteration}: states {states:?}, exit allowed"));
            return Ok(None);
        }
        self.ctx.note("stop_hook", format!("iteration {iteration}: states {states:?}, exit blocked"));
        Ok(Some(states.into_iter().map(str::to_string).collect()))
    }

    /// Fault `early_stop` (docs/protocol.md C141): the session ends its turn with its row
    /// unfinished, as a model that believes it is done may. Claude's attempt to stop fires the
    /// stop hook (000 "Implementation-Hook Integration": "Fires when Claude attempts to exit");
    /// a row that names the session in neither `complete` nor `exited` blocks it and the hook
    /// "injects `fallback_prompt`". The session, kept alive, does its cleanup (000 "Design
    /// Rationale": "the hook blocks exit — keeping the session alive for cleanup … all cleanup
    /// (HANDOFF, messages, reports) completes before the session can terminate"): the clean
    /// exit protocol, whose `exited` the hook's next check lets go. A session no row names any
    /// more (its task handed over and claimed) is let go at once.
    pub(super) async fn stop_early(&mut self) -> Result<End, SqlFailure> {
        let Some(states) = self.stop_hook_check().await? else { return Ok(End::StoppedEarly) };
        let prompt = messages::stop_hook_fallback_prompt(&self.launch.plan.task_id, &states, self.hook_checks);
        self.ctx.note("stop_hook_fallback_prompt", prompt);
        // The injected prompt is a message the session reads (000 "Context Monitoring":
        // context is tracked "with each system message received").
        self.cost(&self.scenario.context.message_pct.clone());
        let task = self.launch.plan.task_id.clone();
        self.status(&format!("stop hook blocked the exit ({task} is `{}`): fallback prompt read, cleaning up", states.join("`, `"))).await;
        self.clean_exit("stopped before its terminal write; kept alive by the stop hook's fallback prompt").await
    }

    pub(super) fn report(&self) -> messages::Report<'static> {
        let plan = &self.launch.plan;
        let done_before_next = plan.agents_of_steps(1, self.next.step - 1) + (self.next.agent - 1);
        let agents_total = plan.agents_of_steps(1, plan.steps);
        messages::Report {
            context_pct: self.context_pct,
            self_correction: self.self_correction.clone(),
            self_correction_minor: self.self_correction_minor.clone(),
            deviations: self.deviations_before.len() + self.deviations.len(),
            deviation_summary: self.deviation_summary(),
            smoothness: self.smoothness(),
            agents_remaining: agents_total.saturating_sub(done_before_next),
            agent_cost_pct: self.average_agent_cost_pct(),
            proposal: self.proposals.last().cloned(),
            summary: "work of the plan's steps so far, integrated and tested",
            files_modified: self.agents_done,
            tests: self.tests_field(),
            verification: self.verification.notes.clone(),
            key_outputs: self.proposals.iter().map(|p| (p.clone(), "created")).collect(),
            commits: self.commits(),
            escalation: self.pending_escalation(),
        }
    }

    /// The commits of the agents this session integrated since the last approved checkpoint
    /// (004 "Request Review": "Commits: [SHA]"). The simulator writes no code: a commit is the
    /// first 7 hex digits of a SHA-256 of the session, task and agent, stable per run.
    pub(super) fn commits(&self) -> Vec<String> {
        use sha2::{Digest, Sha256};
        let after = self.last_checkpoint_step.unwrap_or(0);
        self.attempts
            .keys()
            .filter(|p| **p < self.next && p.step > after)
            .map(|p| {
                let what = format!("{} {} step {} agent {}", self.ctx.meta().session_id, self.launch.plan.task_id, p.step, p.agent);
                Sha256::digest(what.as_bytes()).iter().take(4).map(|b| format!("{b:02x}")).collect::<String>()[..7].to_string()
            })
            .collect()
    }

    /// The smoothness the musician reports, 1 (smooth) to 9 (rough), from what this session
    /// went through. Fitted to the seed's three figures: 1/9 with no deviation and no
    /// self-correction (000 "Completion Report"), 4/9 with a self-correction and one Medium
    /// deviation (000 "Review Request"), 6/9 for a checkpoint the conductor rejected (000
    /// Example: Conductor Pause & Feedback Cycle: "review_failed (Smoothness 6/9)"): 1, +2 for
    /// a self-correction, +1 per Medium, +3 per High, +4 per rejected review.
    pub(super) fn smoothness(&self) -> i64 {
        let mut score = 1 + if self.self_correction.is_some() { 2 } else { 0 };
        for line in &self.deviations {
            score += match super::context::severity(line) {
                Some(Severity::High) => 3,
                Some(Severity::Medium) => 1,
                _ => 0,
            };
            if line.contains(TaskState::ReviewFailed.as_str()) {
                score += 4;
            }
        }
        score.min(9)
    }
}
