//! A session's work (seed 000 "Subagent Management"): steps of subagents as child actors,
//! heartbeats at step boundaries, failures, retries, absorption and error reports, and the
//! background watcher that runs beside the work: beside a subagent (`wait_for_subagent`) and
//! beside the musician's own work (`work_for`), relaunched the moment it exits.

use crate::actors::ctx::ActorMeta;
use crate::actors::handoff::Position;
use crate::actors::messages;
use crate::actors::session::WatcherReport;
use crate::actors::watcher;
use crate::vocab::{Stmt, TaskState, WatcherKind};
use crate::world::SqlFailure;
use rand::RngExt;
use rusqlite::types::Value;

use super::*;

/// How long a woken musician gives its watcher's overdue poll (C152): a read and a heartbeat
/// refresh take milliseconds, so a watcher still polling after this has found nothing.
const WAKE_POLL_GRACE_MS: i64 = 2_000;

/// How waiting for a subagent ended.
pub(super) enum SubagentEnd {
    /// It finished; `heads_up`: an informational emergency came meanwhile.
    Finished { heads_up: bool },
    /// An urgent emergency killed it.
    Killed,
    /// The conductor asked the session to exit (docs/protocol.md D16): it was stopped, as the
    /// clean exit stops every subagent (000 "Clean Exit Protocol" 1).
    Stopped,
}

/// What the conductor's messages read after a watcher exit ask of the musician.
#[derive(Default)]
pub(super) struct WatcherNews {
    pub urgent: bool,
    pub heads_up: bool,
    pub exit_requested: bool,
    /// The conductor's instructions to resume after an urgent emergency (C41).
    pub resume: bool,
}

impl Musician {
    /// The plan from `self.next` to the end, then the completion review and `complete`.
    pub(super) async fn work(&mut self) -> Result<End, SqlFailure> {
        let plan = self.launch.plan.clone();
        if let Some(end) = self.pending_checkpoint().await? {
            return Ok(end);
        }
        while self.next.step <= plan.steps {
            let step = self.next.step;
            if self.next.agent == 1 {
                self.step_boundary(&format!("step {step} started")).await?;
            }
            while self.next.agent <= plan.agents_in(step) {
                if self.scope == Scope::Limited(0) {
                    break;
                }
                // Between two agents: a safe point to stop at (docs/protocol.md D16).
                if self.exit_requested() {
                    return self.exit_on_request().await;
                }
                // 000 "Context Monitoring & Break Point Logic": context is tracked "with each
                // system message received", so the zones are read before the work wherever it
                // grew since the last evaluation (a checkpoint's verification and messages, a
                // correction task, a resumption), not only after an agent (C55).
                if let Some(end) = self.evaluate_context_if_grown().await? {
                    return Ok(end);
                }
                if self.scope == Scope::HandoffNow {
                    return self.clean_exit("context exhaustion (conductor: hand off now)").await;
                }
                if self.scope == Scope::Limited(0) {
                    break;
                }
                match self.run_agent(self.next).await? {
                    AgentOutcome::Redo => continue,
                    AgentOutcome::End(end) => return Ok(end),
                    AgentOutcome::Done => {}
                }
                if let Some(end) = self.after_agent().await? {
                    return Ok(end);
                }
            }
            let step_done = self.next.agent > plan.agents_in(step);
            if step_done {
                self.step_boundary(&format!("step {step} completed")).await?;
                self.next = Position { step: step + 1, agent: 1 };
            }
            let scheduled = step_done && plan.is_checkpoint(step);
            if self.scope == Scope::Limited(0)
                && !scheduled
                && self.last_checkpoint_step == Some(self.next.step - 1)
                && self.next.agent == 1
            {
                // Reduced to no agent right after an approved checkpoint (the evaluation before
                // the work, C55): nothing is left to verify, so the session hands off from the
                // approval (000 "Context escalation response states" 2: "Only complete N more
                // agents then prepare handoff", here N = 0).
                return self.clean_exit("context exhaustion (conductor-approved scope reduction)").await;
            }
            if self.scope == Scope::Limited(0) && !scheduled {
                // Reduced scope used up mid-plan: verify what is done, then hand off. It is
                // the next checkpoint, brought forward (000 Example: Context-Tight Break Point,
                // Step 5: "Run checkpoint 3 verification on completed work"), of the steps done.
                let done = self.next.step - 1;
                let review = if done == 0 {
                    Review::ContextWorry { step }
                } else {
                    let index = plan.checkpoints.iter().filter(|c| **c <= done).count() + 1;
                    Review::Checkpoint { index, total: plan.checkpoints.len() + 1, step: done }
                };
                if let Some(end) = self.review_under_ceiling(review).await? {
                    return Ok(end);
                }
                return self.clean_exit("context exhaustion (conductor-approved scope reduction)").await;
            }
            if scheduled {
                let index = plan.checkpoints.iter().position(|c| *c == step).expect("is a checkpoint") + 1;
                if let Some(end) = self.review_under_ceiling(Review::Checkpoint { index, total: plan.checkpoints.len() + 1, step }).await? {
                    return Ok(end);
                }
                if matches!(self.scope, Scope::HandoffAfterCheckpoint | Scope::Limited(_)) {
                    return self.clean_exit("context exhaustion (conductor-approved scope reduction)").await;
                }
            }
        }
        // 000 "Completion Flow": final verification, completion review, then the terminal write.
        if let Some(end) = self.review_under_ceiling(Review::Completion).await? {
            return Ok(end);
        }
        self.finish_complete().await?;
        Ok(End::Complete)
    }

    /// After an agent is done: the next position, a reduced scope counted down, then what may
    /// end the session here: an attempt to stop (fault `early_stop`, docs/protocol.md C141:
    /// the turn ends, its row unfinished, and the stop hook decides what follows), the context
    /// evaluation (C16), or the conductor's "prepare handoff now" it brought.
    async fn after_agent(&mut self) -> Result<Option<End>, SqlFailure> {
        self.next.agent += 1;
        if let Scope::Limited(n) = self.scope {
            self.scope = Scope::Limited(n.saturating_sub(1));
        }
        if self.ctx.stops_early(self.agents_done) {
            return self.stop_early().await.map(Some);
        }
        if let Some(end) = self.evaluate_context().await? {
            return Ok(Some(end));
        }
        if self.scope == Scope::HandoffNow {
            return self.clean_exit("context exhaustion (conductor: hand off now)").await.map(Some);
        }
        Ok(None)
    }

    /// A return that is not integrated (`agent_returned` gave `None`): the hard stop of a full
    /// window, or the escalation and hand-off past the ceiling (C151) or past its margin
    /// (C162), or where no escalation is due the hand-off at once (C50). The agent is not
    /// integrated, so the HANDOFF continues from it.
    async fn not_integrated(&mut self, label: &str) -> Result<End, SqlFailure> {
        if self.context_pct >= 100 {
            return Ok(self.hard_stop());
        }
        if self.context_pct > self.scenario.context.ceiling_pct {
            return self.past_ceiling_on_return(label).await;
        }
        if self.escalates_at_ceiling() {
            return self.ceiling_margin_on_return(label).await;
        }
        self.clean_exit(&format!("context exhaustion ({label}'s return crossed the ceiling)")).await
    }

    /// A successor that continues right after a scheduled checkpoint's step which no review
    /// approved (its predecessor handed off between the step's last agent and the review)
    /// holds that checkpoint's review first (000 "Checkpoint workflow": verify, then report).
    async fn pending_checkpoint(&mut self) -> Result<Option<End>, SqlFailure> {
        let plan = &self.launch.plan;
        let Some(step) = self.next.step.checked_sub(1).filter(|s| *s >= 1 && self.next.agent == 1) else { return Ok(None) };
        if !plan.is_checkpoint(step) || self.last_checkpoint_step.is_some_and(|c| c >= step) {
            return Ok(None);
        }
        let index = plan.checkpoints.iter().position(|c| *c == step).expect("is a checkpoint") + 1;
        let total = plan.checkpoints.len() + 1;
        self.status(&format!("checkpoint {index} of step {step} not yet reviewed: reviewing it first")).await;
        self.review_under_ceiling(Review::Checkpoint { index, total, step }).await
    }

    /// 000 "Heartbeat Protocol": a heartbeat at every step start and step end.
    pub(super) async fn step_boundary(&mut self, what: &str) -> Result<(), SqlFailure> {
        self.read_returned_watcher().await?;
        self.status(what).await;
        self.owned_write(Stmt::Heartbeat, vec![]).await?;
        Ok(())
    }

    /// A background watcher that exited while the musician waited on nothing (its status lines
    /// between a checkpoint and the next step, a plan step without agents) is read and
    /// relaunched at the next step boundary, as `work_for` and `wait_for_subagent` read one at
    /// once: 000 "Background Watcher": "The musician detects the watcher exit, reads the
    /// message ... and immediately relaunches the background watcher" (docs/protocol.md C85,
    /// round 4: swarm-1-01080 seed 1 read an urgent emergency 25.7 s of status lines later).
    async fn read_returned_watcher(&mut self) -> Result<(), SqlFailure> {
        if self.background.is_none() || self.memory.borrow().inbox.is_empty() {
            return Ok(());
        }
        self.stop_background_watcher();
        self.handle_watcher_reports(false).await?;
        self.start_background_watcher();
        Ok(())
    }

    /// One subagent with the retry policy of 000 "Retry Policy": retry 1 with the same prompt,
    /// retry 2 adjusted, then absorb or escalate; an unrecoverable failure is reported at once.
    pub(super) async fn run_agent(&mut self, at: Position) -> Result<AgentOutcome, SqlFailure> {
        let (step, agent) = (at.step, at.agent);
        let script = self.scenario.subagent_script(self.launch.plan.number, step, agent).cloned();
        // Attempts of this agent in this session so far: a redo after a fix continues the
        // count, so a scripted failure happens once, not once per redo.
        let earlier = *self.attempts.entry(at).or_insert(0);
        for attempt in 0..3u64 {
            *self.attempts.get_mut(&at).expect("entered above") += 1;
            let overall = earlier + attempt;
            let label =
                if attempt == 0 { format!("step {step} agent {agent}") } else { format!("step {step} agent {agent} retry {attempt}") };
            // 000 "Context Monitoring": the ceiling is checked before every launch, with room
            // kept for the checkpoint a context answer asked for (C150).
            let predicted = self.agent_upper_pct() + self.checkpoint_reserve_pct();
            if self.would_cross_ceiling(predicted) {
                return self.ceiling_handoff_before_agent(&format!("{label} launch"), predicted).await.map(AgentOutcome::End);
            }
            let before_pct = self.context_pct;
            self.cost(&self.scenario.context.agent_launch_pct.clone());
            self.status(&format!("{label} launched")).await;
            match self.wait_for_subagent(&label).await? {
                SubagentEnd::Killed => return self.stop_all_work(&label).await,
                SubagentEnd::Stopped => return self.exit_on_request().await.map(AgentOutcome::End),
                SubagentEnd::Finished { heads_up: true } => {
                    // 000 "Emergency Messages": "Wait for current subagent to finish
                    // (informational: 'heads up about future step')", then act on it.
                    self.status(&format!("emergency heads-up taken into account now that {label} finished")).await;
                }
                SubagentEnd::Finished { heads_up: false } => {}
            }
            let fails = match &script {
                Some(s) => overall < s.failures,
                None => self.ctx.rng().random_bool(self.scenario.subagents.failure_probability),
            };
            if !fails {
                let returned = self.agent_returned(step, agent, &label, script.as_ref().is_some_and(|s| s.self_correction)).await?;
                let Some(extra) = returned else { return self.not_integrated(&label).await.map(AgentOutcome::End) };
                self.agents_done += 1;
                // REF-3's average is the nominal cost: a self-correction's extra is the risk
                // the estimate adds apart (000 Example: Context-Tight Break Point: "~4% each
                // nominal" after step 3 agent 2 self-corrected).
                self.agent_cost_total_pct += self.context_pct - before_pct - extra;
                if attempt > 0 {
                    self.deviation(&format!(
                        "step {step} agent {agent}: succeeded after {attempt} retr{} (Low — adjusted prompt)",
                        if attempt == 1 { "y" } else { "ies" }
                    ))
                    .await;
                }
                return Ok(AgentOutcome::Done);
            }
            let unrecoverable = match &script {
                Some(s) => s.unrecoverable && overall == 0,
                None => self.ctx.rng().random_bool(self.scenario.subagents.unrecoverable_probability),
            };
            self.cost(&self.scenario.context.agent_return_pct.clone());
            if unrecoverable {
                self.status(&format!("{label} FAILED: unrecoverable (source file missing)")).await;
                return self.report_error(&format!("{label}: source file does not exist")).await;
            }
            self.status(&format!("{label} FAILED: retryable (unexpected format)")).await;
        }
        // After 2 failed retries (000 "After 2 Failures").
        if self.ctx.rng().random_bool(self.scenario.subagents.absorb_probability) {
            let predicted = self.scenario.context.absorb_pct.upper() + self.checkpoint_reserve_pct();
            if self.would_cross_ceiling(predicted) {
                return self
                    .ceiling_handoff_before_agent(&format!("absorbing step {step} agent {agent}"), predicted)
                    .await
                    .map(AgentOutcome::End);
            }
            self.status(&format!("step {step} agent {agent} retry 2 FAILED — absorbing work")).await;
            let absorb_ms = self.ctx.draw(&self.scenario.timing.subagent_ms);
            self.work_for(absorb_ms).await?;
            self.cost(&self.scenario.context.absorb_pct.clone());
            self.add_new_tests();
            self.status(&format!("step {step} agent {agent} completed by musician (after 2 failed retries)")).await;
            self.deviation(&format!("step {step} agent {agent}: absorbed after 2 failed retries (Medium — direct work)")).await;
            self.agents_done += 1;
            return Ok(AgentOutcome::Done);
        }
        // 000 "Retry Policy": "After 2 Failures: Option A: Absorb work ... Option B: Escalate
        // to conductor" — the odds chose B.
        self.ctx.note("subagent_escalated", format!("step {step} agent {agent}: 2 failed retries, not absorbed"));
        self.report_error(&format!("step {step} agent {agent} failed 3 times")).await
    }

    /// 000 "Emergency Messages": "Kill current subagent immediately (urgent: \"stop all
    /// work\")"; 000 "Background Watcher": the musician "decides whether to interrupt current
    /// work (urgent) or continue (informational), and immediately relaunches the background
    /// watcher". The seeds say no more: no report, no state (the conductor sent the stop, and
    /// 000 "Mode Transitions" enters pause mode only at a "checkpoint or error"). So by
    /// default (docs/protocol.md C41) the work stops, `working`, with the background watcher
    /// running (its heartbeat refresh keeps the session visibly alive), until the conductor's
    /// next message: its instructions to resume run the killed agent again; an exit request
    /// is a clean exit; anything else is read and the wait goes on. Under
    /// `emergency-stop-escalates` the stop is reported (an `error` message and the error
    /// state, no retry counted) and answered like an escalation. (Before issue 27 the killed
    /// agent was launched again at once, so work never stopped.)
    async fn stop_all_work(&mut self, label: &str) -> Result<AgentOutcome, SqlFailure> {
        if self.scenario.settings.emergency_stop_escalates {
            let what = format!("urgent emergency: all work stopped, {label} killed; awaiting instructions");
            return Ok(match self.escalate("emergency_stop", &what, &[], false).await? {
                Some(end) => AgentOutcome::End(end),
                None => AgentOutcome::Redo,
            });
        }
        self.ctx.note("emergency_stop_wait", format!("{label} killed: all work stopped until the conductor's next message"));
        self.status(&format!("all work stopped ({label} killed): waiting for the conductor's instructions")).await;
        // Ends with the run's time limit if no message ever comes: the session waits, as 000 says.
        loop {
            if self.background.is_none() {
                self.start_background_watcher();
            }
            let watcher = self.background.expect("started above");
            self.ctx.join_any(vec![watcher]).await;
            self.background = None;
            let news = self.handle_watcher_reports(false).await?;
            if news.exit_requested {
                return self.exit_on_request().await.map(AgentOutcome::End);
            }
            if news.resume {
                self.start_background_watcher();
                self.status(&format!("resuming after the emergency stop: {label} runs again")).await;
                return Ok(AgentOutcome::Redo);
            }
        }
    }

    /// The subagent works while the background watcher keeps polling. An urgent emergency
    /// kills it; an informational one is kept for when it has finished (000 "Emergency
    /// Messages").
    pub(super) async fn wait_for_subagent(&mut self, label: &str) -> Result<SubagentEnd, SqlFailure> {
        let work_ms = self.ctx.draw(&self.scenario.timing.subagent_ms);
        let serial = self.watcher_serial_next();
        let meta = ActorMeta { name: self.ctx.meta().name.subagent(serial), ..self.ctx.meta().clone() };
        let subagent = self.ctx.spawn_child(meta, 0, move |ctx| async move { ctx.sleep(work_ms).await });
        let due_ms = self.ctx.now_ms() + work_ms;
        let mut heads_up = false;
        // Bounded: each pass handles one watcher exit; a watcher exits at most once per poll.
        for _ in 0..10_000 {
            let mut waiting = vec![subagent];
            waiting.extend(self.background);
            let done = self.ctx.join_any(waiting).await;
            if done == subagent {
                // The watcher may have been fenced out at the same instant (proof-random-faults
                // seed 6185): the session stops before it logs the return.
                if self.memory.borrow().inbox.contains(&WatcherReport::FencedOut) {
                    return Err(self.fenced_by_watcher());
                }
                heads_up |= self.read_messages_after_wake(due_ms).await?.heads_up;
                return Ok(SubagentEnd::Finished { heads_up });
            }
            self.background = None;
            let news = self.handle_watcher_reports(true).await?;
            heads_up |= news.heads_up;
            if news.exit_requested {
                // 000 "Clean Exit Protocol" 1: "Exit all active subagents"; the agent is not
                // done, so the HANDOFF continues from it.
                self.ctx.kill(subagent);
                self.status(&format!("{label} stopped: the conductor asked for exit")).await;
                return Ok(SubagentEnd::Stopped);
            }
            if news.urgent {
                self.ctx.kill(subagent);
                self.status(&format!("{label} stopped: urgent emergency, all work stopped")).await;
                return Ok(SubagentEnd::Killed);
            }
            self.start_background_watcher();
        }
        unreachable!("a subagent of bounded duration outlived 10000 watcher exits")
    }

    /// The musician's own work for `ms` (integration, verification, rework, absorbed work)
    /// with its background watcher beside it: when the watcher exits (a message, its
    /// iteration cap, its death), the musician reads what it reported and relaunches it at
    /// once, then works on. 000 Background Watcher: "The musician detects the watcher exit,
    /// reads the message ... and immediately relaunches the background watcher"; 000 Key
    /// Principles 6a: "No active work without a running watcher".
    pub(super) async fn work_for(&mut self, ms: i64) -> Result<(), SqlFailure> {
        let until_ms = self.ctx.now_ms() + ms;
        loop {
            let left_ms = (until_ms - self.ctx.now_ms()).max(0);
            let Some(watcher) = self.background else {
                self.ctx.sleep(left_ms).await;
                return Ok(());
            };
            if self.ctx.join_any_for(vec![watcher], left_ms).await.is_none() {
                self.read_messages_after_wake(until_ms).await?;
                return Ok(());
            }
            self.background = None;
            self.handle_watcher_reports(false).await?;
            self.start_background_watcher();
            if self.ctx.now_ms() >= until_ms {
                return Ok(());
            }
        }
    }

    /// docs/protocol.md C152: a session suspended for longer than its watcher's poll interval
    /// (a hang) resumes with that watcher's poll overdue, under way beside the result it waited
    /// for. 000 "Background Watcher": "On message detected: The watcher immediately exits. The
    /// musician detects the watcher exit, reads the message from the database, decides whether
    /// to interrupt current work (urgent) or continue"; so the woken musician lets that poll
    /// finish and reads what it found before it writes anything (a status line included): a
    /// hand-over of its own task stops it there, with no write (C51). `due_ms` is when the
    /// wait would have ended without the suspension; a wait that ended on time reads nothing.
    /// A watcher whose overdue step was its heartbeat check has not polled the messages since
    /// the wake, and sleeps on: the musician then polls them itself (C180).
    pub(super) async fn read_messages_after_wake(&mut self, due_ms: i64) -> Result<WatcherNews, SqlFailure> {
        let late_ms = self.ctx.now_ms() - due_ms;
        let Some(watcher) = self.background.filter(|_| late_ms > self.scenario.timing.background_poll_ms) else {
            return Ok(WatcherNews::default());
        };
        self.ctx.note("woke_late", format!("{late_ms} ms past its due time: the watcher's overdue poll first"));
        // The overdue poll is a read and at most a heartbeat refresh: a watcher still running
        // after this found nothing, or its overdue step was the heartbeat check.
        if self.ctx.join_any_for(vec![watcher], WAKE_POLL_GRACE_MS).await.is_none() {
            // C180's own poll is there to read a hand-over; under `messages-logged-only` (C23's
            // earlier reading, kept to show D11) the session reads none, as before.
            // Under `no-wake-poll` (000 read literally) the musician reads only a watcher exit's.
            let settings = &self.scenario.settings;
            if self.memory.borrow().empty_poll_issued_ms >= due_ms || !settings.reads_handover || !settings.wake_poll {
                return Ok(WatcherNews::default());
            }
            return self.poll_messages_after_wake().await;
        }
        self.background = None;
        let news = self.handle_watcher_reports(false).await?;
        self.start_background_watcher();
        Ok(news)
    }

    /// docs/protocol.md C180: the woken musician's own message poll, the watcher's step 1
    /// (000 "Background Watcher": "Query `orchestration_messages` for new messages from
    /// conductor"), when its watcher's last poll was issued before the suspension. What it
    /// finds is read as a watcher exit's messages are (a hand-over of its own task stops it,
    /// C51); the watcher, which would report them again (000 "Message Deduplication"), is
    /// relaunched after them. Nothing found: the watcher sleeps on untouched.
    async fn poll_messages_after_wake(&mut self) -> Result<WatcherNews, SqlFailure> {
        self.ctx.note("woke_late_poll", "the watcher has not polled the messages since the wake: polling them itself");
        let read = self.read_messages_with_times_or_stop().await?;
        let mut news = WatcherNews::default();
        if read.is_empty() {
            return Ok(news);
        }
        self.stop_background_watcher();
        self.handle_messages(read, false, &mut news).await;
        self.start_background_watcher();
        Ok(news)
    }

    pub(super) fn watcher_serial_next(&mut self) -> u32 {
        self.watcher_serial += 1;
        self.watcher_serial
    }

    /// 000 "Handling Subagent Results": log the return, note self-correction, integrate.
    /// Returns what a self-correction cost beyond the plain return (0 without one), or `None`
    /// when the return took the session past what the check before the launch allowed (a
    /// context spike, a self-correction's ~6x): then it integrates nothing and hands off
    /// next (docs/protocol.md C50; 000 "Context Monitoring & Break Point Logic": the musician
    /// "tracks context with each system message received").
    pub(super) async fn agent_returned(
        &mut self,
        step: u64,
        agent: u64,
        label: &str,
        scripted_self_correction: bool,
    ) -> Result<Option<i64>, SqlFailure> {
        let self_corrects = scripted_self_correction || self.ctx.rng().random_bool(self.scenario.context.self_correction_probability);
        let base = self.ctx.draw(&self.scenario.context.agent_return_pct);
        // 000 "Self-correction flag": ~6x context for the affected segment.
        let extra = if self_corrects { base * (self.scenario.context.self_correction_factor - 1) } else { 0 };
        let spike = self.ctx.context_spike_pct().unwrap_or(0);
        // A context window holds at most 100 % (docs/protocol.md C151).
        self.context_pct = (self.context_pct + base + extra + spike).min(100);
        if self_corrects {
            self.self_correction = Some(format!("step {step}, agent {agent} — test failure, rewrote the module"));
        }
        let ceiling = self.scenario.context.ceiling_pct;
        // Full (100 %): the session stops dead, writing nothing more; past the ceiling: its
        // next act is the escalation or the hand-off, not this return's status line (C151).
        // Under `ceiling-after-agent` the hand-off takes the returned agent's result in first.
        let s = &self.scenario.settings;
        let integrates_into_handoff = !s.ceiling_escalates && !s.ceiling_before_work;
        if self.context_pct >= 100 || (self.context_pct > ceiling && !integrates_into_handoff) {
            return Ok(None);
        }
        let past_ceiling = self.context_pct > ceiling;
        if past_ceiling {
            let pct = self.context_pct;
            self.status(&format!(
                "{label} returned: context {pct}% is past the {ceiling}% ceiling, handing off now (its result integrated first)"
            ))
            .await;
        }
        if self_corrects {
            self.status(&format!("step {step} self-correction: agent {agent} test failure, rewrote the module")).await;
            self.propose_anti_pattern(step, agent).await;
        }
        if !past_ceiling {
            self.status(&format!("{label} returned")).await;
        }
        let integration_upper_pct = self.scenario.context.integration_pct.upper();
        if self.would_cross_ceiling(integration_upper_pct) {
            // Under the ceiling, but its integration and a clean exit would cross it: the caller
            // escalates first where an escalation is due (C162), else this line is the hand-off's.
            if !self.escalates_at_ceiling() {
                self.status(&format!("context past the {ceiling}% ceiling margin on {label}'s return: handing off now, not integrated"))
                    .await;
            }
            return Ok(None);
        }
        let integration_ms = self.ctx.draw(&self.scenario.timing.integration_ms);
        self.work_for(integration_ms).await?;
        self.cost(&self.scenario.context.integration_pct.clone());
        self.add_new_tests();
        if past_ceiling {
            self.status(&format!("step {step} agent {agent} integrated into the hand-off")).await;
        } else if self.context_pct > ceiling {
            // Only where no check before the work kept room (`ceiling-after-agent`): the
            // evaluation right after hands off (C151), and this line says so.
            self.status(&format!("step {step} agent {agent} integrated — context past the {ceiling}% ceiling, handing off now")).await;
        } else {
            self.status(&format!("step {step} agent {agent} integrated")).await;
        }
        Ok(Some(extra))
    }

    /// 000 "Proposal System": a failure is worth an ANTI_PATTERN proposal, created JIT in
    /// docs/implementation/proposals/ as `YYYY-MM-DD-brief-description.md`, pending until the
    /// conductor integrates it (000 Example: Clean Exit & Handoff: "Proposals Pending: 1
    /// (anti-pattern)").
    pub(super) async fn propose_anti_pattern(&mut self, step: u64, agent: u64) {
        let date: String = self.ctx.now_utc().chars().take(10).collect();
        let path =
            format!("docs/implementation/proposals/{date}-{}-step-{step}-agent-{agent}-rewrite-antipattern.md", self.launch.plan.task_id);
        let body = format!(
            "# ANTI_PATTERN: step {step} agent {agent} needed self-correction\n\nType: ANTI_PATTERN\nWhat: the agent's work failed its tests and was rewritten.\nWhy it failed: the prompt left the module's contract implicit.\nWhy it matters: self-correction costs ~6x context (000 Self-correction flag).\n"
        );
        self.ctx.write_file(&path, &body).await;
        self.status(&format!("proposal created: {path} (ANTI_PATTERN)")).await;
        self.proposals.push(path);
    }

    /// Reads what a watcher exit reported: the musician "judges urgency based on the message
    /// content" (000 "Emergency Messages") and answers each of the three kinds its own way.
    /// Without a running subagent (the musician's own work) there is nothing to stop or wait
    /// for: the musician acknowledges it and works on.
    pub(super) async fn handle_watcher_reports(&mut self, subagent_running: bool) -> Result<WatcherNews, SqlFailure> {
        let reports: Vec<WatcherReport> = self.memory.borrow_mut().inbox.drain(..).collect();
        let mut news = WatcherNews::default();
        for report in reports {
            match report {
                WatcherReport::Messages(_) => {
                    let read = self.read_messages_with_times_or_stop().await?;
                    self.handle_messages(read, subagent_running, &mut news).await;
                }
                WatcherReport::IterationsExhausted => self.ctx.note("watcher_relaunch", "iteration cap"),
                WatcherReport::FencedOut => return Err(self.fenced_by_watcher()),
                WatcherReport::ExitRequested => {
                    // "The musician then reads the new state and latest message from the
                    // database" (000 "Pause Watcher"): the request's message, if the watcher
                    // found the state first.
                    self.read_messages_or_stop().await?;
                    news.exit_requested = true;
                    self.status("conductor set exit_requested: preparing handoff at the next safe point").await;
                }
            }
        }
        Ok(news)
    }

    /// The conductor's messages just read, each answered by its kind (000 "Emergency
    /// Messages"); what they ask of the musician goes into `news`.
    async fn handle_messages(&mut self, read: Vec<(String, String)>, subagent_running: bool, news: &mut WatcherNews) {
        for (text, at) in read {
            if self.asks_this_session_to_exit(&text, &at) {
                // C181: the request itself, as the state would say it (D16).
                news.exit_requested = true;
                self.memory.borrow_mut().exit_requested = true;
                let first = text.lines().next().unwrap_or("");
                self.status(&format!("conductor asked for exit ({first}): preparing handoff at the next safe point")).await;
            } else if messages::is_emergency_resume(&text) {
                news.resume = true;
                self.status("emergency from conductor (resume): instructions to resume the stopped work").await;
            } else if let Some(kind) = messages::emergency_kind(&text) {
                let answer = match kind {
                    messages::EmergencyKind::Urgent if subagent_running => {
                        news.urgent = true;
                        "stopping current subagent"
                    }
                    messages::EmergencyKind::Informational if subagent_running => {
                        news.heads_up = true;
                        "waiting for the current subagent to finish"
                    }
                    messages::EmergencyKind::Urgent => "no subagent running, acknowledged",
                    messages::EmergencyKind::Informational => "no subagent running, heads-up taken into account",
                    messages::EmergencyKind::Advisory => "acknowledged, continuing",
                };
                self.status(&format!("emergency from conductor ({}): {answer}", kind.word())).await;
            } else {
                let first = text.lines().next().unwrap_or("").to_string();
                self.status(&format!("conductor message while working: {first}")).await;
            }
        }
    }

    pub(super) fn start_background_watcher(&mut self) {
        assert!(self.background.is_none(), "never two background watchers (000 Key Principles 6a)");
        let serial = self.watcher_serial_next();
        let meta = ActorMeta { name: self.ctx.meta().name.watcher(WatcherKind::Background, serial), ..self.ctx.meta().clone() };
        let last = self.memory.borrow().last_processed_message_id;
        let (scenario, memory) = (self.scenario.clone(), self.memory.clone());
        self.background = Some(self.ctx.spawn_child(meta, 0, move |ctx| watcher::background(ctx, scenario, memory, last)));
    }

    pub(super) fn stop_background_watcher(&mut self) {
        if let Some(id) = self.background.take() {
            self.ctx.kill(id);
        }
    }

    /// An agent's error report: run the agent again once the conductor's fix is applied.
    pub(super) async fn report_error(&mut self, error: &str) -> Result<AgentOutcome, SqlFailure> {
        Ok(match self.report_error_and_wait(error).await? {
            ErrorAnswer::Fixed => AgentOutcome::Redo,
            // Not counted among the agents done: its work was deferred, not done.
            ErrorAnswer::Skipped => AgentOutcome::Done,
            ErrorAnswer::End(end) => AgentOutcome::End(end),
        })
    }

    /// 004 "Report Error": message first, then `error` with `retry_count + 1`; the 5th
    /// failure is terminal (004 "Terminal Failure (5th retry)", 002 `error → exited`).
    /// Otherwise wait for the fix, apply it and resume. Checked against the ceiling first
    /// (000 "Context Monitoring"): a report the session could not follow with a clean exit
    /// below the ceiling becomes that clean exit.
    pub(super) async fn report_error_and_wait(&mut self, error: &str) -> Result<ErrorAnswer, SqlFailure> {
        if let Some(end) = self.exit_if_requested().await? {
            return Ok(ErrorAnswer::End(end));
        }
        let predicted = self.scenario.context.message_pct.upper();
        if self.would_cross_ceiling(predicted) {
            self.status(&format!("error not reported: {error}")).await;
            return self.ceiling_handoff("the error report", predicted).await.map(ErrorAnswer::End);
        }
        self.errors_reported += 1;
        let retry = self.errors_reported;
        let terminal = retry >= 5;
        let text = messages::error_report(
            retry,
            self.context_pct,
            self.self_correction_flag().is_some(),
            error,
            &self.launch.plan.task_id,
            terminal,
        );
        self.own_message(Stmt::SendError, text).await?;
        if let Some(end) = self.report_state(Stmt::SetError, vec![(":last_error", Value::Text(error.to_string()))]).await? {
            return Ok(ErrorAnswer::End(end));
        }
        self.cost(&self.scenario.context.message_pct.clone());
        self.status(&format!("ERROR reported (retry {retry}/5): {error}")).await;
        if terminal {
            self.stop_background_watcher();
            self.status("5th failure: terminal exit").await;
            let mut final_message = None;
            if self.scenario.settings.terminal_error_message {
                // 000 "Terminal Write Atomicity": "(1) write message to orchestration_messages
                // first, (2) then update task state" — a final `handoff` message, as 000
                // Execution Queries 10 sends before `exited`. (004's template writes `exited`
                // alone: the `terminal-error-no-message` variant, docs/protocol.md D13.)
                let text =
                    messages::retries_exhausted(&self.launch.plan.task_id, self.context_pct, self.self_correction_flag().is_some(), error);
                self.own_message(Stmt::SendHandoff, text.clone()).await?;
                final_message = Some(text);
            }
            self.mark_exited(final_message).await?;
            self.stop_hook().await?;
            return Ok(ErrorAnswer::End(End::RetriesExhausted));
        }
        let (answer, skip) = match self.answer_or_end().await? {
            Ok(answer) => (answer.state, messages::is_skip_guidance(&answer.reply)),
            Err(end) => return Ok(ErrorAnswer::End(end)),
        };
        if self.takes_exit_request(&answer).await {
            return self.exit_on_request().await.map(ErrorAnswer::End);
        }
        if !matches!(TaskState::parse(&answer), Some(TaskState::FixProposed | TaskState::ReviewApproved)) {
            self.status(&format!("conductor {answer} after error: prepare handoff")).await;
            return self.clean_exit("error escalated, conductor requested handoff").await.map(ErrorAnswer::End);
        }
        // 000 "Response Handling" for fix_proposed: "Launch background watcher", apply, then
        // resume (002 `fix_proposed → working`, "musician resumes after fix"; 000 Example:
        // Error Recovery Step 7) and run the agent again.
        self.start_background_watcher();
        let rework_ms = self.ctx.draw(&self.scenario.timing.rework_ms);
        self.work_for(rework_ms).await?;
        if self.exit_requested() {
            return self.exit_on_request().await.map(ErrorAnswer::End);
        }
        if skip {
            self.status(&format!("conductor {answer}: skipping the failed work on its guidance, resuming")).await;
            self.owned_write(Stmt::ResumeWorking, vec![]).await?;
            return Ok(ErrorAnswer::Skipped);
        }
        self.status(&format!("conductor {answer}: fix applied, resuming")).await;
        self.owned_write(Stmt::ResumeWorking, vec![]).await?;
        Ok(ErrorAnswer::Fixed)
    }
}
