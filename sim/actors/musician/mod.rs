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

use rusqlite::types::Value;

use crate::actors::ctx::Ctx;
use crate::actors::handoff::{self, MessageMeta, Mismatch, Position, PriorRow};
use crate::actors::messages;
use crate::actors::session::{SessionMemory, SharedMemory};
use crate::input::scenario::{Scenario, TaskPlan};
use crate::vocab::{ActorName, MessageKind, SessionPlace, Stmt, TaskState};
use crate::world::event::Fact;
use crate::world::executor::ActorId;
use crate::world::SqlFailure;

mod context;
mod escalation;
mod exit;
mod reply;
mod review;
mod tally;
mod verification;
mod verification_task;
mod work;

/// How the RESUMPTION and the escalation name C42's trigger.
const WORKING_TASKS_REASON: &str = "more than 2 other tasks in `working`";

/// How a checked row write ended (`Musician::checked_write`).
enum Checked {
    Written,
    /// The row still names the session but the conductor had moved it to this state first.
    Answered(String),
}

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
    /// 000 "2. Session Identity": no `CLAUDE_SESSION_ID`, so no database access at all.
    NoSessionId,
    CleanExit,
    RetriesExhausted,
    HardStop,
    /// `replies-cite-request`: the row changed while it waited, with no reply to its own
    /// request (docs/protocol.md D15).
    NoOwnReply,
    /// Fault `early_stop`: the session ended its turn and no row named it any more, so its
    /// stop hook let it go (docs/protocol.md C141).
    StoppedEarly,
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
    /// `review_failed`: "Do not proceed, prepare handoff now".
    HandoffNow,
}

/// How an error report ended (000 "Example: Error Recovery & Retry Logic", Step 7).
enum ErrorAnswer {
    /// The conductor proposed a fix; the musician applied it and is `working` again.
    Fixed,
    /// The conductor's guidance is to skip the failed work (000 "Example: Error Recovery"
    /// Step 7, docs/protocol.md C40): `working` again, without it.
    Skipped,
    End(End),
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
    /// A self-correction without the ~6x bloat (the self code review's clean-up), reported as
    /// the flag when there was no other.
    self_correction_minor: Option<String>,
    verification: verification::VerificationState,
    /// Proposals this session created, pending the conductor's integration (000 "Proposal System").
    proposals: Vec<String>,
    /// Deviations this session logged (the file holds earlier sessions' too).
    deviations: Vec<String>,
    /// Earlier sessions' deviations, as the deviations file held them when this session
    /// resumed (the file is the task's, shared by every session: 000 "Temporary File
    /// Management").
    deviations_before: Vec<String>,
    /// How many of the task's deviations (earlier sessions' first, then this one's) an
    /// answered escalation covered (000 REF-6 counts the others).
    deviations_escalated: usize,
    /// The severities of the deviations not escalated yet, counted as they come.
    pending_tally: tally::PendingTally,
    /// Error reports this session made; the claim resets `retry_count` to 0 (000 Bootstrap 3).
    errors_reported: u64,
    pause_timeouts: u32,
    /// The zone of the context warning the conductor answered in this checkpoint segment
    /// (000 "Context Monitoring"): the musician asks again only past it.
    answered_zone: Option<context::Zone>,
    /// Whether the warning the conductor answered in this checkpoint segment projected past
    /// the ceiling (an escalation, > 80 %): its answer covers the crossing, which is not
    /// escalated again (docs/protocol.md C150).
    answered_past_ceiling: bool,
    /// When this session's claim succeeded (`YYYY-MM-DD HH:MM:SS`, as the messages' own
    /// `timestamp`): a hand-over sent before it is about an earlier holder of the task
    /// (docs/protocol.md C172).
    claimed_at: Option<String>,
    /// The context at the end of the last zone evaluation: the next piece of work is evaluated
    /// again only if context grew since (docs/protocol.md C55).
    evaluated_at_pct: Option<i64>,
    scope: Scope,
    next: Position,
    last_checkpoint_step: Option<u64>,
    attempts: std::collections::BTreeMap<Position, u64>,
    /// The stop hook's checks of this session so far: its iteration counter (004 "Hook
    /// System": at most 500).
    hook_checks: u32,
}

pub async fn session(ctx: Ctx, scenario: Rc<Scenario>, launch: Launch) {
    if scenario.settings.lease_self_check {
        // Issue 28 (what was assumption A2): the session and every actor it starts check its lease.
        ctx.hold_lease(Rc::new(crate::actors::lease::Lease::new(&scenario, ctx.id())));
    }
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
        self_correction_minor: None,
        verification: verification::VerificationState::default(),
        proposals: Vec::new(),
        deviations: Vec::new(),
        deviations_before: Vec::new(),
        deviations_escalated: 0,
        pending_tally: tally::PendingTally::default(),
        errors_reported: 0,
        pause_timeouts: 0,
        answered_zone: None,
        answered_past_ceiling: false,
        claimed_at: None,
        evaluated_at_pct: None,
        scope: Scope::Normal,
        next: Position::START,
        last_checkpoint_step: None,
        attempts: std::collections::BTreeMap::new(),
        hook_checks: 0,
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

    /// 000 "Self-correction flag": "Binary: did musician correct its own code in this
    /// session?" — a rewrite's details, or else the clean-up's.
    fn self_correction_flag(&self) -> Option<&str> {
        self.self_correction.as_deref().or(self.self_correction_minor.as_deref())
    }

    fn cost(&mut self, dist: &crate::base::dist::Dist) -> i64 {
        let pct = self.ctx.draw(dist);
        // A context window holds at most 100 % (docs/protocol.md C151).
        self.context_pct = (self.context_pct + pct).min(100);
        pct
    }

    /// A write to the session's own task row. Under the fencing variant (docs/protocol.md
    /// D11) a replaced session's write changes no row: the session has lost the
    /// task and stops at once, which `?` does by ending the session with this failure.
    async fn owned_write(&mut self, name: Stmt, extra: Vec<(&'static str, Value)>) -> Result<(), SqlFailure> {
        let mut params = vec![(":task_id", self.task()), (":session_id", self.session())];
        params.extend(extra);
        let issued_ms = self.ctx.now_ms();
        let outcome = self.ctx.sql(name, params).await?;
        if outcome.rows_affected == 0 {
            return Err(self.fenced_out(name));
        }
        self.read_messages_after_late_write(issued_ms).await
    }

    /// `name` changed no row because another session holds the task: said, and the failure
    /// that ends the session.
    fn fenced_out(&self, name: Stmt) -> SqlFailure {
        self.ctx.note("fenced_out", format!("`{name}` changed no row: another session owns {}", self.launch.plan.task_id));
        SqlFailure::fenced_out(name)
    }

    /// A row write under variant `checked-transitions` (scenarios/variants/checked-transitions.sql),
    /// which also checks the row's state: no row changed while the row still names this session
    /// means the conductor moved it first (an answer), and the session gets that state to act
    /// on; a row another session holds is fenced out, as at `owned_write`. Without the variant
    /// it is `owned_write`. Telling an answer from a hand-over needs `release-stale` (a hand-over
    /// clears `session_id`); without it a hand-over's `fix_proposed` still names the session, so
    /// the session takes no state for an answer and stops, writing nothing, as fenced out.
    async fn checked_write(&mut self, name: Stmt, extra: Vec<(&'static str, Value)>) -> Result<Checked, SqlFailure> {
        if !self.scenario.settings.checked_transitions {
            return self.owned_write(name, extra).await.map(|()| Checked::Written);
        }
        let mut params = vec![(":task_id", self.task()), (":session_id", self.session())];
        params.extend(extra);
        let issued_ms = self.ctx.now_ms();
        if self.ctx.sql(name, params).await?.rows_affected > 0 {
            self.read_messages_after_late_write(issued_ms).await?;
            return Ok(Checked::Written);
        }
        let row = self.ctx.sql(Stmt::ReadTaskRecord, vec![(":task_id", self.task())]).await?;
        let state = row.text(0, 0).unwrap_or("").to_string();
        let task = &self.launch.plan.task_id;
        if row.text(0, 1) != Some(self.ctx.meta().session_id.as_str()) {
            return Err(self.fenced_out(name));
        }
        if !self.scenario.settings.release_stale {
            self.ctx.note(
                "state_moved",
                format!("`{name}` changed no row: {task} is `{state}`, an answer or a hand-over (no `release-stale`)"),
            );
            return Err(SqlFailure::refused(
                name,
                format!("the row is `{state}`: an answer or a hand-over, not told apart without release-stale"),
            ));
        }
        self.ctx.note("answer_first", format!("`{name}` changed no row: the conductor moved {task} to `{state}` first"));
        Ok(Checked::Answered(state))
    }

    /// A report's state write (`set_error`, `set_escalation`, `set_context_warning`), checked
    /// under `checked-transitions`: `Some` is how the session ended because the conductor had
    /// moved the row first. Asked to exit meanwhile, it exits as asked (docs/protocol.md D16);
    /// any other state answers no report it made, and it hands off from there (`clean_exit`
    /// leaves by 002's path).
    async fn report_state(&mut self, name: Stmt, extra: Vec<(&'static str, Value)>) -> Result<Option<End>, SqlFailure> {
        let Checked::Answered(state) = self.checked_write(name, extra).await? else { return Ok(None) };
        if self.takes_exit_request(&state).await {
            return self.exit_on_request().await.map(Some);
        }
        let reason = format!("the conductor moved the task to {state} before the report's `{name}`");
        self.clean_exit(&reason).await.map(Some)
    }

    /// A message about the session's own task. The seeds' INSERT always adds its row; under
    /// fencing (scenarios/variants/fencing.sql) a request from a session the row does not name
    /// adds none, and the session stops as at a fenced row write.
    async fn owned_message(&mut self, name: Stmt, params: Vec<(&'static str, Value)>) -> Result<(), SqlFailure> {
        let issued_ms = self.ctx.now_ms();
        if self.ctx.sql(name, params).await?.rows_affected == 0 {
            self.ctx.note("fenced_out", format!("`{name}` added no message: another session owns {}", self.launch.plan.task_id));
            return Err(SqlFailure::fenced_out(name));
        }
        self.read_messages_after_late_write(issued_ms).await
    }

    /// docs/protocol.md C171: a write of the session's own, issued at `issued_ms`, that
    /// returned later than any statement takes (a hang held it before or after it ran) is a
    /// wait that ended late, as C152 reads one: before anything else the session reads what
    /// its watcher's overdue poll found, and a hand-over of its own task stops it there (C51).
    async fn read_messages_after_late_write(&mut self, issued_ms: i64) -> Result<(), SqlFailure> {
        let due_ms = issued_ms + self.scenario.timing.statement_ms.upper();
        self.read_messages_after_wake(due_ms).await.map(|_| ())
    }

    /// A watcher's heartbeat changed no row under fencing (issue 28, proof-random-faults seeds
    /// 4811 and 2620): the session stops as at a fenced write of its own.
    fn fenced_by_watcher(&self) -> SqlFailure {
        self.ctx.note("fenced_out", format!("the watcher's heartbeat changed no row: another session owns {}", self.launch.plan.task_id));
        SqlFailure::fenced_out(Stmt::Heartbeat)
    }

    /// A message of the session's own after its claim (an error report, a context warning,
    /// the resumption status, the final completion or handoff): under fencing each is fenced
    /// like the row writes (scenarios/variants/fencing.sql), so a replaced session that wakes
    /// into any of them stops there instead of writing on while its successor claims (issue
    /// 28: proof-random-faults seed 3034, a woken session's final `send_completion` added no
    /// row and the session went on to its `mark_complete`). The seeds' INSERTs always add
    /// their row, so the seeds' protocol is unchanged.
    async fn own_message(&mut self, name: Stmt, text: String) -> Result<(), SqlFailure> {
        let params = vec![(":task_id", self.task()), (":session_id", self.session()), (":message", Value::Text(text))];
        self.owned_message(name, params).await
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
        // 000 "2. Session Identity": "Validate it is present. If missing, the hook failed —
        // log an error message explaining the failure and exit immediately (this is the one
        // pre-bootstrap case where direct output is necessary since orchestration DB
        // communication requires a session ID)." The trace note is that direct output.
        if self.ctx.session_id_missing(self.launch.plan.number, self.launch.session_no) {
            self.ctx.note("session_id_missing", "CLAUDE_SESSION_ID missing from the system prompt: the SessionStart hook failed; exiting");
            return Ok(End::NoSessionId);
        }
        // A successor reads the task record first (000 "Example: Mid-Session Resumption" Step
        // 3): who held the task immediately before is what makes a HANDOFF current (003).
        let prior = if self.launch.session_no > 1 { Some(self.read_task_record().await?) } else { None };
        // 000 Bootstrap 3: atomic claim; exactly one row must change. The seeds' SQL uses the
        // first three; the others are for a designer's own claim (`Stmt::supplied`).
        let previous = prior.as_ref().and_then(|p| p.session_id.clone()).map_or(Value::Null, Value::Text);
        let label = match self.ctx.meta().name {
            ActorName::Session(place) => place.label(),
            other => other.to_string(),
        };
        let claim = self
            .ctx
            .sql(
                Stmt::ClaimTask,
                vec![
                    (":task_id", self.task()),
                    (":session_id", self.session()),
                    (":worked_by", Value::Text(self.launch.worked_by())),
                    (":previous_session_id", previous),
                    (":label", Value::Text(label)),
                    (":attempt", Value::Integer(i64::from(self.launch.session_no))),
                ],
            )
            .await?;
        if claim.rows_affected != 1 {
            self.ctx.note("claim_blocked", format!("guard matched {} rows", claim.rows_affected));
            self.guard_block_fallback("state was not claimable").await?;
            return Ok(End::ClaimBlocked);
        }
        let started_at = self.ctx.now_utc();
        self.claimed_at = Some(started_at.clone());
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
            self.ctx.note("instruction_missing", "no instruction message for this task");
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
        // 000 "Example: Bootstrap & First Execution", Summary: "Bootstrap takes ~5 minutes":
        // reading the instruction file and setting up, before the first step (N18).
        // 0 by default (docs/protocol.md N18: variant `bootstrap-5min`): nothing is drawn then.
        if self.scenario.timing.bootstrap_ms.upper() > 0 {
            let bootstrap_ms = self.ctx.draw(&self.scenario.timing.bootstrap_ms);
            self.ctx.sleep(bootstrap_ms).await;
        }
        self.cost(&self.scenario.context.instructions_pct.clone());
        self.status(&format!("instructions loaded: {path}")).await;
        self.verification.tests_total = self.scenario.verification.tests_at_start;
        // 000 "Mid-Session Resumption Protocol": a successor reads what its predecessors left.
        if let Some(prior) = prior {
            if let Some(end) = self.resume(&prior, &started_at).await? {
                return Ok(end);
            }
        } else {
            self.ctx.append_file(&self.temp("deviations"), "").await;
            // 000 Bootstrap 8.
            self.start_background_watcher();
        }
        // 000 Bootstrap 8 (an escalation on resumption already started it when it resumed).
        if self.background.is_none() {
            self.start_background_watcher();
        }
        self.work().await
    }

    /// 000 "Mid-Session Resumption Protocol" 5 and "Deviations & Escalation Thresholds"
    /// (">2 tasks in `working` state (potential crash indicator)"), read with 000's sibling
    /// query (`read_sibling_states`): the reason to report when more than two other tasks are
    /// `working` — every such task by default, only those whose heartbeat is older than
    /// `conductor.staleness_s` under `working-count-stale-only` (docs/protocol.md C42).
    async fn working_tasks_trigger(&mut self) -> Result<Option<String>, SqlFailure> {
        let rows = self.ctx.sql(Stmt::ReadSiblingStates, vec![(":task_id", self.task())]).await?;
        let stale_only = self.scenario.settings.working_count_stale_only;
        let staleness_s = self.scenario.conductor.staleness_s as f64;
        let working: Vec<&str> = (0..rows.rows.len())
            .filter(|&r| rows.state(r, 1) == Some(TaskState::Working))
            .filter(|&r| !stale_only || rows.real(r, 3).is_none_or(|age_s| age_s > staleness_s))
            .filter_map(|r| rows.text(r, 0))
            .collect();
        if working.len() <= 2 {
            return Ok(None);
        }
        let which = if stale_only { " with a stale heartbeat" } else { "" };
        Ok(Some(format!("{WORKING_TASKS_REASON} ({}{which}: {})", working.len(), working.join(", "))))
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

    /// 000 "Example: Mid-Session Resumption" Step 3: a successor queries the task record
    /// before its claim, which overwrites the `session_id` and `worked_by` naming the session
    /// that held the task immediately before.
    async fn read_task_record(&mut self) -> Result<PriorRow, SqlFailure> {
        let row = self.ctx.sql(Stmt::ReadTaskRecord, vec![(":task_id", self.task())]).await?;
        Ok(PriorRow {
            state: row.text(0, 0).unwrap_or("").to_string(),
            session_id: row.text(0, 1).map(str::to_string),
            worked_by: row.text(0, 2).map(str::to_string),
            started_at: row.text(0, 3).map(str::to_string),
        })
    }

    /// 003 "Resumption Decision Tree": read the temp/ files, the task's messages and the
    /// conductor's, assess (003 "State Reconciliation"), re-verify, report, and escalate what
    /// needs guidance. `prior` is the task row before this session's claim, `started_at` the
    /// claim's time. `Some(end)` if the session ends during its escalation.
    async fn resume(&mut self, prior: &PriorRow, started_at: &str) -> Result<Option<End>, SqlFailure> {
        let status = self.ctx.read_file(&self.temp("status")).await;
        let deviations = self.ctx.read_file(&self.temp("deviations")).await;
        let handoff_text = self.ctx.read_file(&self.temp("HANDOFF")).await;
        let rows = self.ctx.sql(Stmt::ReadTaskMessages, vec![(":task_id", self.task())]).await?;
        let messages: Vec<MessageMeta> = (0..rows.rows.len())
            .map(|r| MessageMeta {
                id: rows.int(r, 0).unwrap_or(0),
                from_session: rows.text(r, 1).unwrap_or("").to_string(),
                kind: rows.text(r, 2).unwrap_or("").to_string(),
                timestamp: rows.text(r, 3).unwrap_or("").to_string(),
            })
            .collect();
        let mut assessment = handoff::assess(&handoff::Found {
            handoff: handoff_text.as_deref(),
            status: status.as_deref(),
            deviations: deviations.as_deref(),
            prior,
            messages: &messages,
            started_at,
            step_agents: &self.launch.plan.step_agents,
            rule: self.escalation_rule(),
            // docs/protocol.md C25: the previous holder's (default), or the age against this
            // claim, the seeds' one staleness (000 "Heartbeat Protocol": 9 minutes).
            recent_within_s: self.scenario.settings.handoff_stale_by_age.then_some(self.scenario.conductor.staleness_s),
        });
        self.deviations_before = deviations.as_deref().unwrap_or("").lines().filter(|l| !l.trim().is_empty()).map(str::to_string).collect();
        // The tally counts over `deviations_before`: a new list is counted afresh, whatever its length.
        self.pending_tally = tally::PendingTally::default();
        self.deviations_escalated = assessment.deviations_escalated;
        // 003 step 3: read the conductor's messages; those the previous session had not
        // answered (the handoff instructions, at least) are this session's to handle.
        if self.scenario.settings.durable_cursor {
            // Issue 28: the predecessor's receipts say what it read; the receipt read below
            // returns exactly the rest, and each of those is pending for this session.
            let cursor = predecessor_cursor(&rows, prior.session_id.as_deref(), &self.ctx.meta().session_id);
            let mut memory = self.memory.borrow_mut();
            memory.last_processed_message_id = memory.last_processed_message_id.max(cursor);
        }
        let read = self.read_conductor_messages().await?;
        if self.scenario.settings.durable_cursor {
            assessment.pending_messages = read.iter().map(|(id, _, _)| *id).collect();
        }
        // Read by a receipt, every pending message was observed handled at its commit, by the
        // world (sim/world/receipt.rs): observing it here again would count it twice.
        if !self.reads_by_receipt() {
            for (id, _, _) in read.iter().filter(|(id, _, _)| assessment.pending_messages.contains(id)) {
                self.ctx.observe(Fact::MessageHandled { session_id: self.ctx.meta().session_id.clone(), message_id: *id });
            }
        }
        // 000 "Mid-Session Resumption Protocol" 5 (after its step 3, the conductor's messages):
        // "If >2 tasks with deviations (temp vs. comms mismatch) OR >2 tasks in `working` state
        // — Report to conductor for further instruction" (docs/protocol.md C42).
        if let Some(reason) = self.working_tasks_trigger().await? {
            assessment.report_reasons.push(reason);
        }
        self.cost(&self.scenario.context.resumption_read_pct.clone());
        // 000 Bootstrap 8, as a resumption is a "full bootstrap" (000 Mid-Session Resumption
        // Protocol 1): the background watcher runs from here on, once the pending messages
        // are read (so it does not report them again), through the re-verification: "No
        // active work without a running watcher" (000 Key Principles 6a). 000's worked
        // example launches it later, after the RESUMPTION status (Step 10).
        if self.background.is_none() {
            self.start_background_watcher();
        }
        // Where work continues, known before the re-verification: a HANDOFF written during
        // it (the ceiling reached while fixing a test) continues from there.
        self.next = assessment.resume_from;
        self.last_checkpoint_step = assessment.last_checkpoint_step;
        // 003 "Post-Resumption Verification": ALWAYS re-run verification; the RESUMPTION
        // reports what it found.
        let verified = match self.verify_on_resumption(assessment.resume_from).await? {
            Ok(summary) => summary,
            Err(end) => return Ok(Some(end)),
        };
        // 000 "Mid-Session Resumption Protocol" 4, before the escalation check (5) and the
        // resumption status (6): a verification task for differing states (C54).
        if let Some(end) = self.verification_task(&assessment).await? {
            return Ok(Some(end));
        }
        let text = handoff::resumption_status(&self.launch.worked_by(), &assessment, self.context_pct, &verified);
        let text = format!("{text}\n  Estimated remaining work: {}", self.remaining_work_estimate(assessment.resume_from));
        // 003 "Verbose Resumption Status": to the status file and to the conductor.
        let block: String = text.lines().map(|l| format!("{l} [ctx: {}%]\n", self.context_pct)).collect();
        self.ctx.append_file(&self.temp("status"), &block).await;
        self.own_message(Stmt::SendResumption, text).await?;
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
        self.report_resumption(&assessment).await
    }

    /// 003's outcome of a resumption, after its RESUMPTION status: notes for each path of the
    /// decision tree, and the report to the conductor when a trigger is met. `Some(end)` if
    /// the session ends during its escalation.
    async fn report_resumption(&mut self, assessment: &handoff::Assessment) -> Result<Option<End>, SqlFailure> {
        // Coverage counts these notes (tests/coverage/required.txt): each path of 003's tree.
        if assessment.mismatch == Mismatch::Benign {
            // 003 "State Reconciliation", Benign: "Auto-correct using temp/ files" — the one
            // field that differs is corrected, no report.
            self.ctx.note("resumption_benign_mismatch", assessment.mismatches.join("; "));
        }
        if assessment.handoff == handoff::HandoffState::Stale {
            // 003 "Resumption Decision Tree" 2: "HANDOFF missing or stale: Forced exit".
            self.ctx.note("resumption_stale_handoff", assessment.handoff_detail.clone());
        }
        if assessment.mismatch == Mismatch::Contradictory {
            // 003 "State Reconciliation", Contradictory: "Escalate to conductor immediately".
            self.ctx.note("resumption_contradiction", assessment.mismatches.join("; "));
        }
        // 003 "Resumption Decision Tree" 5: ">2 deviations OR multiple mismatches OR temp/comms
        // mismatch: Report to conductor for guidance" (deviations by 000's REF-6, to which 003
        // defers); 003 "State Reconciliation", Contradictory → "Escalate to conductor
        // immediately". `Assessment::report_reasons` says which triggers are met.
        if assessment.report_reasons.is_empty() {
            return Ok(None);
        }
        // One note per trigger met, for coverage (tests/coverage/required.txt).
        let triggers = [
            (assessment.escalation_due, "resumption_report_deviations"),
            (assessment.mismatches.len() >= 2, "resumption_report_multiple_mismatches"),
            (assessment.report_reasons.iter().any(|r| r.contains("temp/comms")), "resumption_report_temp_comms"),
            (assessment.report_reasons.iter().any(|r| r.starts_with(WORKING_TASKS_REASON)), "resumption_report_working_tasks"),
        ];
        for (_, note) in triggers.iter().filter(|(met, _)| *met) {
            self.ctx.note(note, assessment.report_reasons.join(", "));
        }
        let contradictory = assessment.mismatch == Mismatch::Contradictory;
        // The reasons name the deviation threshold when it is met; the details list those deviations.
        let what = format!("resumption needs guidance: {}", assessment.report_reasons.join(", "));
        let mut details: Vec<String> = assessment.mismatches.clone();
        if assessment.escalation_due {
            details.extend(self.deviations_before.iter().skip(self.deviations_escalated).cloned());
        }
        let last_error = if contradictory {
            "resumption_contradiction"
        } else if assessment.escalation_due && assessment.mismatches.is_empty() {
            "deviation_escalation"
        } else if assessment.mismatches.is_empty() {
            // Only the fleet trigger (C42): no mismatch of this task's own.
            "resumption_working_tasks"
        } else {
            "resumption_mismatch"
        };
        self.escalate(last_error, &what, &details, assessment.escalation_due).await
    }
}

/// Variant `durable-cursor`: the id of the latest receipt (`review::RECEIPT_PREFIX`, the 5th
/// column of the variant's `read_task_messages`) of the session the row named before this
/// one's claim; every conductor message below it was read by that session or before it. A
/// predecessor that wrote none (it crashed before reading anything), or a row the hand-over
/// cleared (`release-stale`), leaves the latest receipt of any other session. Only receipts
/// written before the conductor's latest `handoff` count: a replaced session that wakes after
/// its hand-over and reads the task's messages is not their owner, and its receipt must not
/// hide them from its successor. 0 when there is none: the instruction's id bounds the read.
fn predecessor_cursor(rows: &crate::world::db::SqlOutcome, previous: Option<&str>, me: &str) -> i64 {
    let handed_over_at = (0..rows.rows.len())
        .filter(|r| {
            rows.text(*r, 1) == Some(crate::vocab::CONDUCTOR_TASK_ID) && rows.text(*r, 2).is_some_and(|kind| MessageKind::Handoff.is(kind))
        })
        .filter_map(|r| rows.int(r, 0))
        .max()
        .unwrap_or(i64::MAX);
    let receipts: Vec<(i64, &str)> = (0..rows.rows.len())
        .filter(|r| rows.text(*r, 4).is_some_and(|text| text.starts_with(review::RECEIPT_PREFIX)))
        .filter_map(|r| Some((rows.int(r, 0)?, rows.text(r, 1)?)))
        .filter(|(id, from)| *from != me && *id < handed_over_at)
        .collect();
    let latest_of = |who: Option<&str>| receipts.iter().filter(|(_, from)| who.is_none_or(|w| w == *from)).map(|(id, _)| *id).max();
    latest_of(previous).or_else(|| latest_of(None)).unwrap_or(0)
}
