//! A musician session (seed 000). Bootstrap with the atomic claim (or the guard-block
//! fallback), resumption when a previous session worked the task (seed 003), steps of
//! subagent work with heartbeats at every boundary, context evaluation and escalation,
//! subagent failures and error reports, checkpoint and completion reviews in pause mode,
//! emergency messages, clean exit with a HANDOFF, and the stop hook.
//!
//! Everything the session knows lives in this struct and its watchers' shared memory; both
//! die with the session. What a successor needs is in temp/ files and the database.

use std::cell::RefCell;
use std::rc::Rc;

use rand::RngExt;
use rusqlite::types::Value;

use crate::ctx::ActorMeta;
use crate::ctx::Ctx;
use crate::event::Fact;
use crate::executor::ActorId;
use crate::handoff::{self, Position};
use crate::messages;
use crate::scenario::{Scenario, TaskPlan};
use crate::session::{PauseOutcome, SessionMemory, SharedMemory, WatcherReport};
use crate::vocab::{ActorName, SessionPlace, Stmt, WatcherKind};
use crate::watcher;
use crate::world::{FailureKind, SqlFailure};

/// Everything a session is launched with: its launch prompt, in effect.
#[derive(Clone, Debug)]
pub struct Launch {
    pub plan: TaskPlan,
    /// 1 for the first session of a task, 2 for `-S2`, … (000 Bootstrap 5).
    pub session_no: u32,
}

impl Launch {
    /// The actor name, e.g. `task-03.S1`: stable across runs, it names the random streams.
    /// `task-03.S2`; a double launch's twin is `task-03.S2b`.
    pub fn actor_name(&self, twin: bool) -> ActorName {
        ActorName::Session(SessionPlace { task: self.plan.number, session: self.session_no, twin })
    }

    /// 000 Bootstrap 5: `musician-task-03`, then `musician-task-03-S2`, `-S3`, …
    pub fn worked_by(&self) -> String {
        match self.session_no {
            1 => format!("musician-{}", self.plan.task_id),
            n => format!("musician-{}-S{n}", self.plan.task_id),
        }
    }
}

/// Why a session ended, for its trace row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Complete,
    ClaimBlocked,
    NoInstruction,
    CleanExit,
    RetriesExhausted,
    HardStop,
}

/// What the conductor's context reply set for the rest of the session (000 "Context
/// escalation response states").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    Normal,
    /// `fix_proposed`: this many more agents, then a checkpoint, then hand off.
    Limited(u64),
    /// `review_approved`: go on to the next checkpoint, then hand off.
    HandoffAfterCheckpoint,
    /// `review_failed` (or the ceiling): hand off now.
    HandoffNow,
}

enum AgentOutcome {
    Done,
    /// An urgent emergency killed the subagent: run it again.
    Redo,
    End(End),
}

/// When a review of one kind is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Review {
    Checkpoint {
        index: usize,
        total: usize,
        step: u64,
    },
    /// 000 "Checkpoint Types": a musician-initiated break when context runs short.
    ContextWorry {
        step: u64,
    },
    Completion,
}

struct Musician {
    ctx: Ctx,
    scenario: Rc<Scenario>,
    launch: Launch,
    memory: SharedMemory,
    background: Option<ActorId>,
    watcher_serial: u32,
    /// Context used, in percent of the session's window.
    context_pct: i64,
    /// Agents finished by this session and the context they cost, for REF-3 averages.
    agents_done: u64,
    agent_cost_total_pct: i64,
    self_correction: Option<String>,
    /// Deviations this session logged (the file holds earlier sessions' too).
    deviations: Vec<String>,
    deviations_before: usize,
    /// Error reports this session made; the claim resets `retry_count` to 0 (000 Bootstrap 3).
    errors_reported: u64,
    pause_timeouts: u32,
    evaluated_since_checkpoint: bool,
    scope: Scope,
    next: Position,
    last_checkpoint_step: Option<u64>,
    attempts: std::collections::BTreeMap<Position, u64>,
}

pub async fn session(ctx: Ctx, scenario: Rc<Scenario>, launch: Launch) {
    let mut musician = Musician {
        ctx,
        scenario,
        launch,
        memory: Rc::new(RefCell::new(SessionMemory::default())),
        background: None,
        watcher_serial: 0,
        context_pct: 0,
        agents_done: 0,
        agent_cost_total_pct: 0,
        self_correction: None,
        deviations: Vec::new(),
        deviations_before: 0,
        errors_reported: 0,
        pause_timeouts: 0,
        evaluated_since_checkpoint: false,
        scope: Scope::Normal,
        next: Position::START,
        last_checkpoint_step: None,
        attempts: std::collections::BTreeMap::new(),
    };
    match musician.run().await {
        Ok(end) => musician.ctx.note("session_end", format!("{end:?}")),
        Err(failure) => musician.ctx.note("session_sql_failure", format!("{}: {}", failure.stmt, failure.message)),
    }
    musician.stop_background_watcher();
}

impl Musician {
    fn task(&self) -> Value {
        Value::Text(self.launch.plan.task_id.clone())
    }

    fn session(&self) -> Value {
        Value::Text(self.ctx.meta().session_id.clone())
    }

    fn temp(&self, kind: &str) -> String {
        format!("temp/{}-{kind}", self.launch.plan.task_id)
    }

    fn cost(&mut self, dist: &crate::dist::Dist) -> i64 {
        let pct = self.ctx.draw(dist);
        self.context_pct += pct;
        pct
    }

    /// A write to the session's own task row. Under the fencing variant (PROTOCOL.md
    /// disagreement 11) a replaced session's write changes no row: the session has lost the
    /// task and stops at once, which `?` does by ending the session with this failure.
    async fn owned_write(&mut self, name: Stmt, extra: Vec<(&'static str, Value)>) -> Result<(), SqlFailure> {
        let mut params = vec![(":task_id", self.task()), (":session_id", self.session())];
        params.extend(extra);
        let outcome = self.ctx.sql(name, params).await?;
        if outcome.rows_affected == 0 {
            self.ctx.note("fenced_out", format!("`{name}` changed no row: another session owns {}", self.launch.plan.task_id));
            return Err(SqlFailure {
                stmt: name,
                kind: FailureKind::FencedOut,
                message: "fenced out: the task row belongs to another session".to_string(),
            });
        }
        Ok(())
    }

    /// 000 "Temporary File Management": every status line ends `[ctx: NN%]`.
    async fn status(&mut self, text: &str) {
        let line = format!("{text} [ctx: {}%]\n", self.context_pct);
        self.ctx.append_file(&self.temp("status"), &line).await;
    }

    /// 000 "Deviations & Escalation Thresholds": one line per deviation with its severity.
    async fn deviation(&mut self, text: &str) {
        self.deviations.push(text.to_string());
        self.ctx.append_file(&self.temp("deviations"), &format!("{text}\n")).await;
    }

    async fn run(&mut self) -> Result<End, SqlFailure> {
        // 000 Bootstrap 3: atomic claim; exactly one row must change.
        let claim = self
            .ctx
            .sql(
                Stmt::ClaimTask,
                vec![(":task_id", self.task()), (":session_id", self.session()), (":worked_by", Value::Text(self.launch.worked_by()))],
            )
            .await?;
        if claim.rows_affected != 1 {
            self.ctx.note("claim_blocked", format!("guard matched {} rows", claim.rows_affected));
            self.guard_block_fallback("state was not claimable").await?;
            return Ok(End::ClaimBlocked);
        }
        // 000 Bootstrap 7. The status file is the task's, shared with earlier sessions, so
        // a session writes to it only once its claim has succeeded.
        self.cost(&self.scenario.context.bootstrap_start_pct.clone());
        self.status("bootstrap started").await;
        self.cost(&self.scenario.context.claim_pct.clone());
        let claimed = format!("task claimed, session: {}, worked_by: {}", self.ctx.meta().session_id, self.launch.worked_by());
        self.status(&claimed).await;
        // 000 Bootstrap 6: the instruction message names the instruction file.
        let instruction = self.ctx.sql(Stmt::ReadInstruction, vec![(":task_id", self.task())]).await?;
        let (Some(instruction_id), Some(text)) = (instruction.int(0, 0), instruction.text(0, 1).map(str::to_string)) else {
            self.status("instructions missing: claim_blocked").await;
            self.guard_block_fallback("instructions are missing").await?;
            return Ok(End::NoInstruction);
        };
        {
            let mut memory = self.memory.borrow_mut();
            memory.last_processed_message_id = instruction_id;
            // The detect-by-timestamp reading starts from the instruction's timestamp.
            memory.last_processed_timestamp = self.ctx.now_utc();
        }
        let path = text.lines().next().and_then(|l| l.strip_prefix("TASK INSTRUCTION: ")).unwrap_or("(unparsed)").to_string();
        self.cost(&self.scenario.context.instructions_pct.clone());
        self.status(&format!("instructions loaded: {path}")).await;
        // 000 "Mid-Session Resumption Protocol": a successor reads what its predecessors left.
        if self.launch.session_no > 1 {
            self.resume().await?;
        } else {
            self.ctx.append_file(&self.temp("deviations"), "").await;
        }
        // 000 Bootstrap 8.
        self.start_background_watcher();
        self.work().await
    }

    /// 000 Bootstrap 4: a fallback row so the stop hook lets the session end, and a message.
    async fn guard_block_fallback(&mut self, why: &str) -> Result<(), SqlFailure> {
        self.ctx.sql(Stmt::InsertFallbackRow, vec![(":session_id", self.session())]).await?;
        let message = messages::claim_blocked(&self.launch.plan.task_id, why);
        self.ctx
            .sql(
                Stmt::SendClaimBlocked,
                vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(message))],
            )
            .await?;
        self.stop_hook().await
    }

    /// 003 "Resumption Decision Tree": read the temp/ files, assess, re-verify, report.
    async fn resume(&mut self) -> Result<(), SqlFailure> {
        let status = self.ctx.read_file(&self.temp("status")).await;
        let deviations = self.ctx.read_file(&self.temp("deviations")).await;
        let handoff_text = self.ctx.read_file(&self.temp("HANDOFF")).await;
        let handoff_age_s = handoff_text.as_deref().map(handoff::parse).and_then(|h| crate::clock::parse_utc(&h.timestamp)).map(|t_ms| {
            let now_ms = crate::clock::parse_utc(&self.ctx.now_utc()).expect("own format");
            (now_ms - t_ms) / 1000
        });
        // A HANDOFF older than the last two staleness windows predates the last session.
        let handoff_max_age_s = 2 * self.scenario.conductor.staleness_s.max(1800);
        let assessment = handoff::assess(
            handoff_text.as_deref(),
            handoff_age_s,
            handoff_max_age_s,
            status.as_deref(),
            deviations.as_deref(),
            self.launch.plan.subagents_per_step,
        );
        self.deviations_before = assessment.deviations;
        // Pending = the conductor's messages since the predecessor wrote its HANDOFF (the
        // handoff instructions); older ones were its predecessor's business (003 step 3).
        let since = handoff_text.as_deref().map(|h| handoff::parse(h).timestamp).unwrap_or_default();
        let found = self.read_conductor_messages().await?;
        let pending: Vec<&(i64, String, String)> = found.iter().filter(|(_, _, at)| *at >= since).collect();
        for (id, _, _) in &pending {
            self.ctx.observe(Fact::MessageHandled { session_id: self.ctx.meta().session_id.clone(), message_id: *id });
        }
        let pending = pending.len();
        // 003 "Post-Resumption Verification": ALWAYS re-run verification.
        let verify_ms = self.ctx.draw(&self.scenario.timing.verification_ms);
        self.ctx.sleep(verify_ms).await;
        self.cost(&self.scenario.context.verification_pct.clone());
        self.status("verification tests: all passing").await;
        let severities = deviations.as_deref().map_or("none".to_string(), severity_breakdown);
        let text = handoff::resumption_status(&self.launch.worked_by(), &assessment, self.context_pct, pending, &severities);
        // 003 "Verbose Resumption Status": to the status file and to the conductor.
        let block: String = text.lines().map(|l| format!("{l} [ctx: {}%]\n", self.context_pct)).collect();
        self.ctx.append_file(&self.temp("status"), &block).await;
        self.ctx
            .sql(Stmt::SendResumption, vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(text))])
            .await?;
        self.ctx.note(
            "resumption",
            format!(
                "HANDOFF {}, {:?}, resuming from step {} agent {}",
                assessment.handoff.word(),
                assessment.mismatch,
                assessment.resume_from.step,
                assessment.resume_from.agent
            ),
        );
        self.next = assessment.resume_from;
        self.last_checkpoint_step = handoff::status_progress(status.as_deref().unwrap_or("")).last_checkpoint_step;
        Ok(())
    }

    /// The plan from `self.next` to the end, then the completion review and `complete`.
    async fn work(&mut self) -> Result<End, SqlFailure> {
        let plan = self.launch.plan.clone();
        while self.next.step <= plan.steps {
            let step = self.next.step;
            if self.next.agent == 1 {
                self.step_boundary(&format!("step {step} started")).await?;
            }
            while self.next.agent <= plan.subagents_per_step {
                if self.scope == Scope::Limited(0) {
                    break;
                }
                match self.run_agent(self.next).await? {
                    AgentOutcome::Redo => continue,
                    AgentOutcome::End(end) => return Ok(end),
                    AgentOutcome::Done => {}
                }
                self.next.agent += 1;
                if let Scope::Limited(n) = self.scope {
                    self.scope = Scope::Limited(n.saturating_sub(1));
                }
                if let Some(end) = self.evaluate_context().await? {
                    return Ok(end);
                }
                if self.scope == Scope::HandoffNow {
                    return self.clean_exit("context exhaustion (conductor: hand off now)").await;
                }
            }
            let step_done = self.next.agent > plan.subagents_per_step;
            if step_done {
                self.step_boundary(&format!("step {step} completed")).await?;
                self.next = Position { step: step + 1, agent: 1 };
            }
            let scheduled = step_done && plan.is_checkpoint(step);
            if self.scope == Scope::Limited(0) && !scheduled {
                // Reduced scope used up mid-plan: verify what is done, then hand off.
                if let Some(end) = self.review(Review::ContextWorry { step }).await? {
                    return Ok(end);
                }
                return self.clean_exit("context exhaustion (conductor-approved scope reduction)").await;
            }
            if scheduled {
                let index = plan.checkpoints.iter().position(|c| *c == step).expect("is a checkpoint") + 1;
                if let Some(end) = self.review(Review::Checkpoint { index, total: plan.checkpoints.len() + 1, step }).await? {
                    return Ok(end);
                }
                if matches!(self.scope, Scope::HandoffAfterCheckpoint | Scope::Limited(_)) {
                    return self.clean_exit("context exhaustion (conductor-approved scope reduction)").await;
                }
            }
        }
        // 000 "Completion Flow": final verification, completion review, then the terminal write.
        if let Some(end) = self.review(Review::Completion).await? {
            return Ok(end);
        }
        self.finish_complete().await?;
        Ok(End::Complete)
    }

    /// 000 "Heartbeat Protocol": a heartbeat at every step start and step end.
    async fn step_boundary(&mut self, what: &str) -> Result<(), SqlFailure> {
        self.status(what).await;
        self.owned_write(Stmt::Heartbeat, vec![]).await?;
        Ok(())
    }

    /// One subagent with the retry policy of 000 "Retry Policy": retry 1 with the same prompt,
    /// retry 2 adjusted, then absorb or escalate; an unrecoverable failure is reported at once.
    async fn run_agent(&mut self, at: Position) -> Result<AgentOutcome, SqlFailure> {
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
            let before_pct = self.context_pct;
            self.cost(&self.scenario.context.agent_launch_pct.clone());
            self.status(&format!("{label} launched")).await;
            if !self.wait_for_subagent(&label).await? {
                return Ok(AgentOutcome::Redo);
            }
            let fails = match &script {
                Some(s) => overall < s.failures,
                None => self.ctx.rng().random_bool(self.scenario.subagents.failure_probability),
            };
            if !fails {
                self.agent_returned(step, agent, &label, script.as_ref().is_some_and(|s| s.self_correction)).await;
                self.agents_done += 1;
                self.agent_cost_total_pct += self.context_pct - before_pct;
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
            self.status(&format!("step {step} agent {agent} retry 2 FAILED — absorbing work")).await;
            let absorb_ms = self.ctx.draw(&self.scenario.timing.subagent_ms);
            self.ctx.sleep(absorb_ms).await;
            self.cost(&self.scenario.context.absorb_pct.clone());
            self.status(&format!("step {step} agent {agent} completed by musician (after 2 failed retries)")).await;
            self.deviation(&format!("step {step} agent {agent}: absorbed after 2 failed retries (Medium — direct work)")).await;
            self.agents_done += 1;
            return Ok(AgentOutcome::Done);
        }
        self.report_error(&format!("step {step} agent {agent} failed 3 times")).await
    }

    /// The subagent works while the background watcher keeps polling. Returns false when an
    /// urgent emergency killed the subagent (000 "Emergency Messages").
    async fn wait_for_subagent(&mut self, label: &str) -> Result<bool, SqlFailure> {
        let work_ms = self.ctx.draw(&self.scenario.timing.subagent_ms);
        let serial = self.watcher_serial_next();
        let meta = ActorMeta { name: self.ctx.meta().name.subagent(serial), ..self.ctx.meta().clone() };
        let subagent = self.ctx.spawn_child(meta, 0, move |ctx| async move { ctx.sleep(work_ms).await });
        // Bounded: each pass handles one watcher exit; a watcher exits at most once per poll.
        for _ in 0..10_000 {
            let mut waiting = vec![subagent];
            waiting.extend(self.background);
            let done = self.ctx.join_any(waiting).await;
            if done == subagent {
                return Ok(true);
            }
            self.background = None;
            if self.handle_watcher_reports().await? {
                self.ctx.kill(subagent);
                self.status(&format!("{label} stopped: urgent emergency, relaunching")).await;
                self.start_background_watcher();
                return Ok(false);
            }
            self.start_background_watcher();
        }
        unreachable!("a subagent of bounded duration outlived 10000 watcher exits")
    }

    fn watcher_serial_next(&mut self) -> u32 {
        self.watcher_serial += 1;
        self.watcher_serial
    }

    /// 000 "Handling Subagent Results": log the return, note self-correction, integrate.
    async fn agent_returned(&mut self, step: u64, agent: u64, label: &str, scripted_self_correction: bool) {
        let self_corrects = scripted_self_correction || self.ctx.rng().random_bool(self.scenario.context.self_correction_probability);
        let base = self.ctx.draw(&self.scenario.context.agent_return_pct);
        if self_corrects {
            // 000 "Self-correction flag": ~6x context for the affected segment.
            self.context_pct += base * self.scenario.context.self_correction_factor;
            let details = format!("step {step}, agent {agent} — test failure, rewrote the module");
            self.status(&format!("step {step} self-correction: agent {agent} test failure, rewrote the module")).await;
            self.self_correction = Some(details);
        } else {
            self.context_pct += base;
        }
        if let Some(spike) = self.ctx.context_spike_pct() {
            self.context_pct += spike;
        }
        self.status(&format!("{label} returned")).await;
        let integration_ms = self.ctx.draw(&self.scenario.timing.integration_ms);
        self.ctx.sleep(integration_ms).await;
        self.cost(&self.scenario.context.integration_pct.clone());
        self.status(&format!("step {step} agent {agent} integrated")).await;
    }

    /// Reads what a watcher exit reported; true when an urgent emergency says stop now.
    async fn handle_watcher_reports(&mut self) -> Result<bool, SqlFailure> {
        let reports: Vec<WatcherReport> = self.memory.borrow_mut().inbox.drain(..).collect();
        let mut urgent = false;
        for report in reports {
            match report {
                WatcherReport::Messages(_) => {
                    for text in self.consume_conductor_messages().await? {
                        if text.starts_with("EMERGENCY (urgent)") {
                            urgent = true;
                            self.status("emergency from conductor (urgent): stopping current subagent").await;
                        } else if text.starts_with("EMERGENCY") {
                            self.status("emergency from conductor (informational): acknowledged, continuing").await;
                        } else {
                            let first = text.lines().next().unwrap_or("").to_string();
                            self.status(&format!("conductor message while working: {first}")).await;
                        }
                    }
                }
                WatcherReport::IterationsExhausted => self.ctx.note("watcher_relaunch", "iteration cap"),
            }
        }
        Ok(urgent)
    }

    fn start_background_watcher(&mut self) {
        assert!(self.background.is_none(), "never two background watchers (000 Key Principles 6a)");
        let serial = self.watcher_serial_next();
        let meta = ActorMeta { name: self.ctx.meta().name.watcher(WatcherKind::Background, serial), ..self.ctx.meta().clone() };
        let last = self.memory.borrow().last_processed_message_id;
        let (scenario, memory) = (self.scenario.clone(), self.memory.clone());
        self.background = Some(self.ctx.spawn_child(meta, 0, move |ctx| watcher::background(ctx, scenario, memory, last)));
    }

    fn stop_background_watcher(&mut self) {
        if let Some(id) = self.background.take() {
            self.ctx.kill(id);
        }
    }

    /// 000 "Context Monitoring & Break Point Logic": at 50 % evaluate the way to the next
    /// checkpoint; < 70 % proceed, 70-80 % ask, > 80 % escalate. Once per checkpoint segment.
    async fn evaluate_context(&mut self) -> Result<Option<End>, SqlFailure> {
        let c = self.scenario.context.clone();
        if self.context_pct >= 100 {
            // Context exhaustion: the session stops dead, no HANDOFF, no final write.
            self.ctx.note("context_exhausted", format!("{}%: hard stop", self.context_pct));
            self.ctx
                .observe(Fact::Crashed { session_id: self.ctx.meta().session_id.clone(), why: "context exhausted (100 %)".to_string() });
            return Ok(Some(End::HardStop));
        }
        if self.context_pct >= c.ceiling_pct {
            self.status(&format!("context at the {}% ceiling: handing off now", c.ceiling_pct)).await;
            self.scope = Scope::HandoffNow;
            return Ok(None);
        }
        if self.context_pct < c.evaluate_at_pct || self.evaluated_since_checkpoint || self.scope != Scope::Normal {
            return Ok(None);
        }
        self.evaluated_since_checkpoint = true;
        self.status(&format!("CONTEXT EVALUATION triggered at {}%", self.context_pct)).await;
        let remaining = self.agents_to_next_checkpoint();
        let average = self.average_agent_cost_pct();
        // 000 example "Context-Tight Break Point": self-correction doubles the planning cost.
        let risk = if self.self_correction.is_some() { average * 2 } else { average };
        let estimate = self.context_pct + remaining as i64 * risk + c.verification_pct.mean();
        if estimate < c.proceed_below_pct {
            self.status(&format!("context estimate {estimate}% at next checkpoint: proceed")).await;
            return Ok(None);
        }
        let zone = if estimate <= c.escalate_above_pct { "ask" } else { "escalate" };
        // REF-3: agents that fit in the 65 % budget, rounded.
        let fit = ((c.budget_pct - self.context_pct) as f64 / risk.max(1) as f64).round() as i64;
        let deviations = format!("{}", self.deviations_before + self.deviations.len());
        let warning = messages::ContextWarning {
            context_pct: self.context_pct,
            self_correction: self.self_correction.as_deref(),
            agents_remaining: remaining,
            agent_cost_pct: average,
            risk_cost_pct: risk,
            agents_fit: fit,
            budget_pct: c.budget_pct,
            estimate_pct: estimate,
            deviations: &deviations,
            zone,
        };
        let text = messages::context_warning(&warning);
        self.status(&format!("context estimate {estimate}% at next checkpoint: {zone}, sending context warning")).await;
        // Message first, then the error state (000 Execution Queries 6; order as 004).
        self.ctx
            .sql(
                Stmt::SendContextWarning,
                vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(text))],
            )
            .await?;
        self.owned_write(Stmt::SetContextWarning, vec![]).await?;
        self.cost(&c.message_pct);
        let Some(answer) = self.wait_for_conductor().await? else {
            return self.clean_exit("conductor unresponsive (two pause timeouts)").await.map(Some);
        };
        let reply = self.consume_conductor_messages().await?;
        let reply_text = reply.last().cloned().unwrap_or_default();
        match answer.as_str() {
            "review_approved" => {
                self.scope = Scope::HandoffAfterCheckpoint;
                self.status("conductor review_approved: proceed to checkpoint, then hand off").await;
            }
            "fix_proposed" => {
                let agents = messages::parse_reduced_scope(&reply_text).unwrap_or(fit.max(0) as u64);
                self.scope = Scope::Limited(agents);
                self.status(&format!("conductor fix_proposed: reduced scope — {agents} more agents, then checkpoint and handoff")).await;
                if remaining > agents {
                    self.deviation(&format!(
                        "step {}: {} agents deferred per conductor (Low — instructed scope reduction)",
                        self.next.step,
                        remaining - agents
                    ))
                    .await;
                }
            }
            _ => {
                self.scope = Scope::HandoffNow;
                self.status(&format!("conductor {answer}: prepare handoff now")).await;
            }
        }
        self.owned_write(Stmt::ResumeWorking, vec![]).await?;
        self.start_background_watcher();
        Ok(None)
    }

    fn agents_to_next_checkpoint(&self) -> u64 {
        let plan = &self.launch.plan;
        let until_step = plan.checkpoints.iter().copied().find(|c| *c >= self.next.step).unwrap_or(plan.steps);
        if self.next.step > until_step {
            return 0;
        }
        let this_step = plan.subagents_per_step + 1 - self.next.agent.min(plan.subagents_per_step + 1);
        this_step + (until_step - self.next.step) * plan.subagents_per_step
    }

    /// REF-3: the average of this session's agents, or the model's mean before any returned.
    fn average_agent_cost_pct(&self) -> i64 {
        if self.agents_done > 0 {
            return (self.agent_cost_total_pct as f64 / self.agents_done as f64).round() as i64;
        }
        let c = &self.scenario.context;
        c.agent_launch_pct.mean() + c.agent_return_pct.mean() + c.integration_pct.mean()
    }

    /// 004 "Report Error": message first, then `error` with `retry_count + 1`; the 5th
    /// failure is terminal (004 "Terminal Failure (5th retry)"). Otherwise wait for the fix.
    async fn report_error(&mut self, error: &str) -> Result<AgentOutcome, SqlFailure> {
        self.errors_reported += 1;
        let retry = self.errors_reported;
        let text = messages::error_report(retry, self.context_pct, self.self_correction.is_some(), error, &self.launch.plan.task_id);
        self.ctx
            .sql(Stmt::SendError, vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(text))])
            .await?;
        self.owned_write(Stmt::SetError, vec![(":last_error", Value::Text(error.to_string()))]).await?;
        self.cost(&self.scenario.context.message_pct.clone());
        self.status(&format!("ERROR reported (retry {retry}/5): {error}")).await;
        if retry >= 5 {
            self.stop_background_watcher();
            self.status("5th failure: terminal exit").await;
            self.owned_write(Stmt::MarkExited, vec![]).await?;
            self.stop_hook().await?;
            return Ok(AgentOutcome::End(End::RetriesExhausted));
        }
        let Some(answer) = self.wait_for_conductor().await? else {
            return self.clean_exit("conductor unresponsive (two pause timeouts)").await.map(AgentOutcome::End);
        };
        self.consume_conductor_messages().await?;
        if answer != "fix_proposed" && answer != "review_approved" {
            self.status(&format!("conductor {answer} after error: prepare handoff")).await;
            return self.clean_exit("error escalated, conductor requested handoff").await.map(AgentOutcome::End);
        }
        // 000 "Response Handling" for fix_proposed: apply, then resume (fix_proposed → working).
        let rework_ms = self.ctx.draw(&self.scenario.timing.rework_ms);
        self.ctx.sleep(rework_ms).await;
        self.status(&format!("conductor {answer}: fix applied, resuming")).await;
        self.owned_write(Stmt::ResumeWorking, vec![]).await?;
        self.start_background_watcher();
        Ok(AgentOutcome::Redo)
    }

    /// 000 "Review Request Flow": verify, message first then `needs_review` (004 "Request
    /// Review"), pause until the conductor answers; on `review_failed` / `fix_proposed` apply
    /// the feedback, re-verify and resubmit (000 "Response Handling"). `Some(end)` ends it.
    async fn review(&mut self, review: Review) -> Result<Option<End>, SqlFailure> {
        let mut attempt = 0u64;
        loop {
            attempt += 1;
            let what = match review {
                Review::Checkpoint { index, .. } => format!("checkpoint {index}"),
                Review::ContextWorry { step } => format!("context checkpoint after step {step}"),
                Review::Completion => "final checkpoint".to_string(),
            };
            self.status(&format!("{what} reached")).await;
            // 000 "Verification Testing Protocol" and REF-8: full verification every time.
            let verify_ms = self.ctx.draw(&self.scenario.timing.verification_ms);
            self.ctx.sleep(verify_ms).await;
            self.cost(&self.scenario.context.verification_pct.clone());
            self.status("verification tests: all passing").await;
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
                // 000 Execution Queries 5 (PROTOCOL.md disagreement 3): UPDATE, then INSERT.
                self.owned_write(Stmt::SetNeedsReview, vec![]).await?;
                self.ctx.sql(statement, request).await?;
            } else {
                // 004 "Request Review": message FIRST, then state change.
                self.ctx.sql(statement, request).await?;
                self.owned_write(Stmt::SetNeedsReview, vec![]).await?;
            }
            self.cost(&self.scenario.context.message_pct.clone());
            let verb = if attempt == 1 { "submitted for review" } else { "resubmitted after feedback fixes" };
            self.status(&format!("{what} {verb}")).await;
            let Some(answer) = self.wait_for_conductor().await? else {
                return self.clean_exit("conductor unresponsive (two pause timeouts)").await.map(Some);
            };
            self.consume_conductor_messages().await?;
            match answer.as_str() {
                "review_approved" => {
                    let step = match review {
                        Review::Checkpoint { step, .. } | Review::ContextWorry { step } => step,
                        Review::Completion => self.launch.plan.steps,
                    };
                    self.cost(&self.scenario.context.message_pct.clone());
                    self.status(&format!("{what} approved (step {step})")).await;
                    self.last_checkpoint_step = Some(step);
                    self.evaluated_since_checkpoint = false;
                    if review != Review::Completion {
                        // 004 "After Approval (Resume Working)"; then a new background watcher.
                        self.owned_write(Stmt::ResumeWorking, vec![]).await?;
                        self.start_background_watcher();
                    }
                    return Ok(None);
                }
                "review_failed" | "fix_proposed" => {
                    self.status(&format!("{answer} — feedback to address")).await;
                    self.owned_write(Stmt::ResumeWorking, vec![]).await?;
                    self.start_background_watcher();
                    let rework_ms = self.ctx.draw(&self.scenario.timing.rework_ms);
                    self.ctx.sleep(rework_ms).await;
                    self.cost(&self.scenario.context.integration_pct.clone());
                    self.status(&format!("fixing: feedback on {what} applied")).await;
                    let severity = if answer == "review_failed" { "Medium" } else { "Low" };
                    self.deviation(&format!("{what}: {answer} (Smoothness 6/9) [{severity}]")).await;
                    self.stop_background_watcher();
                }
                other => {
                    self.status(&format!("unexpected state {other} while waiting for review: prepare handoff")).await;
                    return self.clean_exit(&format!("conductor left the task in {other}")).await.map(Some);
                }
            }
        }
    }

    /// 000 "Pause Watcher": stop the background watcher, block on a foreground watcher. On a
    /// TIMEOUT, report it (`error`) and wait again; a second TIMEOUT → `None` (hand off).
    async fn wait_for_conductor(&mut self) -> Result<Option<String>, SqlFailure> {
        self.stop_background_watcher();
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
                Some(PauseOutcome::Answered(state)) => return Ok(Some(state)),
                Some(PauseOutcome::TimedOut) | None => {
                    self.pause_timeouts += 1;
                    if self.pause_timeouts >= 2 {
                        self.status("second pause TIMEOUT: conductor unresponsive, handing off").await;
                        return Ok(None);
                    }
                    self.status("pause TIMEOUT: conductor heartbeat stale, reporting").await;
                    self.errors_reported += 1;
                    let text = messages::error_report(
                        self.errors_reported,
                        self.context_pct,
                        self.self_correction.is_some(),
                        "pause watcher TIMEOUT: conductor unresponsive",
                        &self.launch.plan.task_id,
                    );
                    self.ctx
                        .sql(
                            Stmt::SendError,
                            vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(text))],
                        )
                        .await?;
                    self.ctx
                        .sql(
                            Stmt::SetError,
                            vec![
                                (":task_id", self.task()),
                                (":session_id", self.session()),
                                (":last_error", Value::Text("conductor_timeout".to_string())),
                            ],
                        )
                        .await?;
                }
            }
        }
        Ok(None)
    }

    /// Reads the conductor's new messages so the next watcher does not report them again
    /// (000 "Message Deduplication"); returns their texts.
    async fn consume_conductor_messages(&mut self) -> Result<Vec<String>, SqlFailure> {
        Ok(self.consume_conductor_messages_with_times().await?.into_iter().map(|(text, _)| text).collect())
    }

    /// The same, with each message's `timestamp`; each one counts as handled.
    async fn consume_conductor_messages_with_times(&mut self) -> Result<Vec<(String, String)>, SqlFailure> {
        let found = self.read_conductor_messages().await?;
        for (id, _, _) in &found {
            self.ctx.observe(Fact::MessageHandled { session_id: self.ctx.meta().session_id.clone(), message_id: *id });
        }
        Ok(found.into_iter().map(|(_, text, at)| (text, at)).collect())
    }

    /// New conductor messages: by id (000 "Message Deduplication"), or under the
    /// detect-by-timestamp variant the newest one if its timestamp is newer than the last
    /// seen (004 "Check for Conductor Messages"), which misses same-second bursts.
    async fn read_conductor_messages(&mut self) -> Result<Vec<(i64, String, String)>, SqlFailure> {
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

    /// 000 "Completion Flow" 5 and 004 "Mark Complete": resume, final message first, then
    /// `complete` as the absolute last database write; then the stop hook.
    async fn finish_complete(&mut self) -> Result<(), SqlFailure> {
        self.owned_write(Stmt::ResumeWorking, vec![]).await?;
        let report_path = messages::report_path(&self.launch.plan.task_id);
        self.ctx
            .write_file(
                &report_path,
                &format!("# {} completion report\n\nAll deliverables created, tests passing.\n", self.launch.plan.task_id),
            )
            .await;
        self.status(&format!("report written: {report_path}")).await;
        let message = messages::completion(&self.launch.plan.task_id, &self.report(), true);
        self.ctx
            .sql(Stmt::SendCompletion, vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(message))])
            .await?;
        self.status("task complete").await;
        self.stop_background_watcher();
        self.owned_write(Stmt::MarkComplete, vec![(":report_path", Value::Text(report_path))]).await?;
        self.stop_hook().await
    }

    /// 000 "Clean Exit Protocol": stop watchers, HANDOFF, report, final status line, the
    /// `handoff` message, then `exited` as the absolute last write.
    async fn clean_exit(&mut self, reason: &str) -> Result<End, SqlFailure> {
        self.stop_background_watcher();
        let write_ms = self.ctx.draw(&self.scenario.timing.handoff_ms);
        self.ctx.sleep(write_ms).await;
        self.status("clean exit: all subagents and watchers stopped").await;
        let plan = self.launch.plan.clone();
        self.cost(&self.scenario.context.message_pct.clone());
        let timestamp = self.ctx.now_utc();
        let worked_by = self.launch.worked_by();
        let session_id = self.ctx.meta().session_id.clone();
        let all_deviations: Vec<String> = self.deviations.clone();
        let doc = handoff::render(&handoff::HandoffDoc {
            task_id: &plan.task_id,
            session_id: &session_id,
            worked_by: &worked_by,
            exit_reason: reason,
            context_pct: self.context_pct,
            timestamp: &timestamp,
            steps: plan.steps,
            agents_per_step: plan.subagents_per_step,
            next: self.next,
            deviations: &all_deviations,
            self_correction: self.self_correction.as_deref(),
            last_checkpoint_step: self.last_checkpoint_step,
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
        let remaining = format!("from step {} agent {}, final verification", self.next.step, self.next.agent);
        let text = messages::exited(&plan.task_id, reason, self.context_pct, self.self_correction.is_some(), &last_completed, &remaining);
        self.ctx
            .sql(Stmt::SendHandoff, vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(text))])
            .await?;
        self.owned_write(Stmt::MarkExited, vec![]).await?;
        self.stop_hook().await?;
        Ok(End::CleanExit)
    }

    /// 004 "Hook System": the session may end only when its row is `complete` or `exited`;
    /// otherwise the hook injects its fallback prompt and asks again, at most 500 times.
    async fn stop_hook(&mut self) -> Result<(), SqlFailure> {
        const ITERATIONS_MAX: u32 = 500;
        for iteration in 1..=ITERATIONS_MAX {
            let rows = self.ctx.sql(Stmt::StopHookState, vec![(":session_id", self.session())]).await?;
            let states: Vec<&str> = (0..rows.rows.len()).filter_map(|r| rows.text(r, 1)).collect();
            if states.iter().any(|s| *s == "complete" || *s == "exited") {
                self.ctx.note("stop_hook", format!("iteration {iteration}: states {states:?}, exit allowed"));
                return Ok(());
            }
            self.ctx.note("stop_hook", format!("iteration {iteration}: states {states:?}, exit blocked"));
            self.ctx.sleep(self.scenario.timing.stop_hook_retry_ms).await;
        }
        self.ctx.note("stop_hook", format!("{ITERATIONS_MAX} iterations: forced exit"));
        Ok(())
    }

    fn report(&self) -> messages::Report<'static> {
        let plan = &self.launch.plan;
        let done_before_next = (self.next.step - 1) * plan.subagents_per_step + (self.next.agent - 1);
        let agents_total = plan.steps * plan.subagents_per_step;
        messages::Report {
            context_pct: self.context_pct,
            self_correction: self.self_correction.is_some(),
            deviations: self.deviations_before + self.deviations.len(),
            agents_remaining: agents_total.saturating_sub(done_before_next),
            agent_cost_pct: self.average_agent_cost_pct(),
            summary: "work of the plan's steps so far, integrated and tested",
            files_modified: self.agents_done,
        }
    }
}

/// "N High, N Medium, N Low" of a deviations file, as verify-temp-files.sh counts them.
fn severity_breakdown(deviations: &str) -> String {
    let count = |word: &str| deviations.lines().filter(|l| l.to_lowercase().contains(word)).count();
    format!("{} High, {} Medium, {} Low", count("high"), count("medium"), count("low"))
}
