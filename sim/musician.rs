//! A musician session (seed 000): bootstrap with an atomic claim, steps of subagent work with
//! heartbeats at every step boundary, checkpoint reviews in pause mode, the completion review
//! and `complete` as the very last write, then the stop hook.

use std::cell::RefCell;
use std::rc::Rc;

use rusqlite::types::Value;

use crate::ctx::Ctx;
use crate::engine::{ActorId, ActorMeta, SqlFailure};
use crate::messages;
use crate::scenario::{Scenario, TaskPlan};
use crate::session::{SessionMemory, SharedMemory, WatcherReport};
use crate::watcher;

/// Everything a session is launched with: its launch prompt, in effect.
#[derive(Clone, Debug)]
pub struct Launch {
    pub plan: TaskPlan,
    /// 1 for the first session of a task, 2 for `-S2`, … (000 Bootstrap 5).
    pub session_no: u32,
}

impl Launch {
    /// The actor name, e.g. `task-03.S1`: stable across runs, it names the random streams.
    pub fn actor_name(&self) -> String {
        format!("{}.S{}", self.plan.task_id, self.session_no)
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
enum End {
    Complete,
    ClaimBlocked,
    NoInstruction,
    PauseGaveUp,
    UnexpectedState,
}

struct Musician {
    ctx: Ctx,
    scenario: Rc<Scenario>,
    launch: Launch,
    memory: SharedMemory,
    background: Option<ActorId>,
    watcher_serial: u32,
    /// Context used, in percent of the session's window (000 "Context Monitoring").
    context_pct: i64,
    agents_done: u64,
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
    };
    match musician.run().await {
        Ok(end) => musician.ctx.note("session_end", format!("{end:?}")),
        Err(failure) => musician.ctx.note("session_sql_failure", format!("{}: {}", failure.statement, failure.message)),
    }
    musician.stop_all_watchers();
}

impl Musician {
    fn task(&self) -> Value {
        Value::Text(self.launch.plan.task_id.clone())
    }

    fn session(&self) -> Value {
        Value::Text(self.ctx.meta().session_id.clone())
    }

    async fn run(&mut self) -> Result<End, SqlFailure> {
        // 000 Bootstrap 3: atomic claim; exactly one row must change.
        let claim = self
            .ctx
            .sql(
                "claim_task",
                vec![(":task_id", self.task()), (":session_id", self.session()), (":worked_by", Value::Text(self.launch.worked_by()))],
            )
            .await?;
        if claim.rows_affected != 1 {
            self.ctx.note("claim_blocked", format!("guard matched {} rows", claim.rows_affected));
            self.guard_block_fallback("state was not claimable").await?;
            return Ok(End::ClaimBlocked);
        }
        self.ctx.note("claimed", self.launch.worked_by());
        // 000 Bootstrap 6: the instruction message names the instruction file.
        let instruction = self.ctx.sql("read_instruction", vec![(":task_id", self.task())]).await?;
        let Some(instruction_id) = instruction.int(0, 0) else {
            self.ctx.note("instruction_missing", "");
            self.guard_block_fallback("instructions are missing").await?;
            return Ok(End::NoInstruction);
        };
        self.memory.borrow_mut().last_processed_message_id = instruction_id;
        // 000 Bootstrap 7: bootstrap costs context (~12-15 %).
        self.context_pct += self.ctx.draw(&self.scenario.context.bootstrap_pct);
        // 000 Bootstrap 8.
        self.start_background_watcher();
        let checkpoints_total = self.launch.plan.checkpoints.len() + 1;
        for step in 1..=self.launch.plan.steps {
            self.step_boundary(&format!("step {step} started")).await?;
            for agent in 1..=self.launch.plan.subagents_per_step {
                self.run_subagent(step, agent).await?;
                self.check_watcher_reports();
            }
            self.step_boundary(&format!("step {step} completed")).await?;
            if self.launch.plan.is_checkpoint(step) {
                let index = self.launch.plan.checkpoints.iter().position(|c| *c == step).expect("is a checkpoint") + 1;
                match self.review(Review::Checkpoint { index, total: checkpoints_total }).await? {
                    Some(end) => return Ok(end),
                    None => self.resume_after_approval().await?,
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

    /// 000 Bootstrap 4: a fallback row so the stop hook lets the session end, and a message.
    async fn guard_block_fallback(&mut self, why: &str) -> Result<(), SqlFailure> {
        self.ctx.sql("insert_fallback_row", vec![(":session_id", self.session())]).await?;
        let message = messages::claim_blocked(&self.launch.plan.task_id, why);
        self.ctx
            .sql("send_claim_blocked", vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(message))])
            .await?;
        self.stop_hook().await
    }

    /// 000 "Heartbeat Protocol": a heartbeat at every step start and step end.
    async fn step_boundary(&mut self, what: &str) -> Result<(), SqlFailure> {
        self.ctx.note("status", format!("{what} [ctx: {}%]", self.context_pct));
        self.ctx.sql("heartbeat", vec![(":task_id", self.task())]).await?;
        Ok(())
    }

    /// One subagent: launched, works, returns; then the musician integrates its result
    /// (000 "Hybrid Work Distribution"). Its context cost is drawn (000 REF-3, default 8 %).
    async fn run_subagent(&mut self, step: u64, agent: u64) -> Result<(), SqlFailure> {
        self.ctx.note("subagent_launched", format!("step {step} agent {agent} [ctx: {}%]", self.context_pct));
        let work_ms = self.ctx.draw(&self.scenario.timing.subagent_ms);
        self.ctx.sleep(work_ms).await;
        self.context_pct += self.ctx.draw(&self.scenario.context.subagent_pct);
        self.agents_done += 1;
        self.ctx.note("subagent_returned", format!("step {step} agent {agent} [ctx: {}%]", self.context_pct));
        let integration_ms = self.ctx.draw(&self.scenario.timing.integration_ms);
        self.ctx.sleep(integration_ms).await;
        Ok(())
    }

    /// 000 "Background Watcher": on a watcher exit the musician reads what it saw and
    /// relaunches it at once (000 Key Principles 6a: watcher continuity).
    fn check_watcher_reports(&mut self) {
        let reports: Vec<WatcherReport> = self.memory.borrow_mut().inbox.drain(..).collect();
        if reports.is_empty() {
            return;
        }
        for report in reports {
            match report {
                WatcherReport::Messages(ids) => {
                    let newest = *ids.iter().max().expect("a report names at least one message");
                    self.ctx.note("conductor_message_handled", format!("messages {ids:?}: informational, continuing"));
                    let mut memory = self.memory.borrow_mut();
                    memory.last_processed_message_id = memory.last_processed_message_id.max(newest);
                }
                WatcherReport::IterationsExhausted => self.ctx.note("watcher_relaunch", "iteration cap"),
            }
        }
        self.background = None;
        self.start_background_watcher();
    }

    fn start_background_watcher(&mut self) {
        assert!(self.background.is_none(), "never two background watchers (000 Key Principles 6a)");
        self.watcher_serial += 1;
        let meta = ActorMeta { name: format!("{}.bg-watcher-{}", self.ctx.meta().name, self.watcher_serial), ..self.ctx.meta().clone() };
        let last = self.memory.borrow().last_processed_message_id;
        let (scenario, memory) = (self.scenario.clone(), self.memory.clone());
        self.background = Some(self.ctx.spawn_child(meta, 0, move |ctx| watcher::background(ctx, scenario, memory, last)));
    }

    fn stop_all_watchers(&mut self) {
        if let Some(id) = self.background.take() {
            self.ctx.kill(id);
        }
    }

    /// 000 "Review Request Flow": verify, message first then `needs_review` (004 "Request
    /// Review"), pause mode until the conductor answers. Loops on `review_failed` /
    /// `fix_proposed` (000 "Response Handling"). `Some(end)` ends the session.
    async fn review(&mut self, review: Review) -> Result<Option<End>, SqlFailure> {
        loop {
            // 000 "Verification Testing Protocol": tests run at every checkpoint (~2-3 %).
            let verify_ms = self.ctx.draw(&self.scenario.timing.verification_ms);
            self.ctx.sleep(verify_ms).await;
            self.context_pct += self.ctx.draw(&self.scenario.context.verification_pct);
            let report = self.report();
            let (statement, message) = match review {
                Review::Checkpoint { index, total } => ("send_review_request", messages::review_request(index, total, &report)),
                Review::Completion => ("send_completion", messages::completion(&self.launch.plan.task_id, &report, false)),
            };
            self.ctx
                .sql(statement, vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(message))])
                .await?;
            self.ctx.sql("set_needs_review", vec![(":task_id", self.task())]).await?;
            let answer = self.pause().await;
            match answer.as_deref() {
                Some("review_approved") => return Ok(None),
                Some(state @ ("review_failed" | "fix_proposed")) => {
                    // Apply the feedback, then re-verify and resubmit (000 "Response Handling").
                    self.ctx.note("review_feedback", format!("{state}: applying feedback and resubmitting"));
                    self.consume_conductor_messages().await?;
                    self.ctx.sql("resume_working", vec![(":task_id", self.task())]).await?;
                    let rework_ms = self.ctx.draw(&self.scenario.timing.integration_ms);
                    self.ctx.sleep(rework_ms).await;
                }
                Some(other) => {
                    self.ctx.note("unexpected_state", format!("conductor left the task in {other}"));
                    return Ok(Some(End::UnexpectedState));
                }
                None => {
                    self.ctx.note("pause_gave_up", "no answer from the conductor");
                    return Ok(Some(End::PauseGaveUp));
                }
            }
        }
    }

    /// 000 "Pause Watcher": stop the background watcher, block on a foreground watcher.
    async fn pause(&mut self) -> Option<String> {
        self.stop_all_watchers();
        self.memory.borrow_mut().pause_outcome = None;
        self.watcher_serial += 1;
        let meta = ActorMeta { name: format!("{}.pause-watcher-{}", self.ctx.meta().name, self.watcher_serial), ..self.ctx.meta().clone() };
        let (scenario, memory) = (self.scenario.clone(), self.memory.clone());
        let pause = self.ctx.spawn_child(meta, 0, move |ctx| watcher::pause(ctx, scenario, memory));
        self.ctx.join(pause).await;
        self.memory.borrow_mut().pause_outcome.take()
    }

    /// 000 "Response Handling" for `review_approved`: read the approval, resume working
    /// (004 "After Approval"), relaunch the background watcher.
    async fn resume_after_approval(&mut self) -> Result<(), SqlFailure> {
        self.consume_conductor_messages().await?;
        self.ctx.sql("resume_working", vec![(":task_id", self.task())]).await?;
        self.start_background_watcher();
        Ok(())
    }

    /// Reads the conductor's answer so the next watcher does not report it again
    /// (000 "Message Deduplication").
    async fn consume_conductor_messages(&mut self) -> Result<(), SqlFailure> {
        let last = self.memory.borrow().last_processed_message_id;
        let found = self
            .ctx
            .sql("read_new_conductor_messages", vec![(":task_id", self.task()), (":last_processed_message_id", Value::Integer(last))])
            .await?;
        if let Some(newest) = (0..found.rows.len()).filter_map(|r| found.int(r, 0)).max() {
            self.memory.borrow_mut().last_processed_message_id = newest;
        }
        Ok(())
    }

    /// 000 "Completion Flow" 5 and 004 "Mark Complete": resume, final message first, then
    /// `complete` as the absolute last database write; then the stop hook.
    async fn finish_complete(&mut self) -> Result<(), SqlFailure> {
        self.consume_conductor_messages().await?;
        self.ctx.sql("resume_working", vec![(":task_id", self.task())]).await?;
        let message = messages::completion(&self.launch.plan.task_id, &self.report(), true);
        self.ctx
            .sql("send_completion", vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(message))])
            .await?;
        self.stop_all_watchers();
        let report_path = messages::report_path(&self.launch.plan.task_id);
        self.ctx.sql("mark_complete", vec![(":task_id", self.task()), (":report_path", Value::Text(report_path))]).await?;
        self.stop_hook().await
    }

    /// 004 "Hook System": the session may end only when its row is `complete` or `exited`.
    async fn stop_hook(&mut self) -> Result<(), SqlFailure> {
        let rows = self.ctx.sql("stop_hook_state", vec![(":session_id", self.session())]).await?;
        let states: Vec<&str> = (0..rows.rows.len()).filter_map(|r| rows.text(r, 1)).collect();
        let allowed = states.iter().any(|s| *s == "complete" || *s == "exited");
        self.ctx.note("stop_hook", format!("states {states:?}: exit {}", if allowed { "allowed" } else { "blocked" }));
        Ok(())
    }

    fn report(&self) -> messages::Report<'static> {
        let plan = &self.launch.plan;
        let agents_total = plan.steps * plan.subagents_per_step;
        messages::Report {
            context_pct: self.context_pct,
            self_correction: false,
            deviations: 0,
            agents_remaining: agents_total - self.agents_done,
            agent_cost_pct: self.scenario.context.subagent_pct.mean(),
            summary: "work of the plan's steps so far, integrated and tested",
            files_modified: self.agents_done,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Review {
    Checkpoint { index: usize, total: usize },
    Completion,
}
