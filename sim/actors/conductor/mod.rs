//! The scripted conductor (task-00). Its skill is not in the seeds (docs/protocol.md C1–C11,
//! C34–C35): its policy — poll interval, review time, odds of approve / reject / fix, replies to
//! context warnings — is a scenario setting. What it writes follows the seeds: it creates
//! the task rows and instructions, launches sessions, answers reviews, warnings and errors
//! (message first, then state), applies the 9-minute staleness rule, relaunches after a clean
//! exit once it has read the HANDOFF (000 Bootstrap 5 "Session Handoff"), asks sessions to
//! exit when a scenario scripts it or its context reply says so (`exit_request.rs`,
//! docs/protocol.md D16), and ends in `complete` (or `exit_requested` when it had to give a
//! task up). Its reviews are in `review.rs`; a session relaunched after a crash rebuilds its
//! view in `recover.rs`; the `launcher.rs` starts it and relaunches it.

mod answer;
mod claim_blocked;
mod launcher;
mod recover;
mod review;
mod still_asking;

pub use launcher::{conductor_meta, launcher, launcher_meta};

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use rusqlite::types::Value;

use crate::actors::ctx::ActorMeta;
use crate::actors::ctx::Ctx;
use crate::actors::messages;
use crate::actors::musician::{self, Launch};
use crate::input::scenario::{ContextReply, Scenario};
use crate::vocab::{ActorName, MessageKind, Stmt, TaskState};
use crate::world::event::Fact;
use crate::world::SqlFailure;

pub use crate::vocab::{CONDUCTOR_SESSION_ID, CONDUCTOR_TASK_ID};

mod exit_request;

/// What a musician asked of the conductor, answered once the task is in the matching state.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Pending {
    /// The `number`-th review request of the task (resubmissions count).
    Review {
        completion: bool,
        number: u64,
    },
    /// The agents the warning recommends before the checkpoint, and which they are.
    ContextWarning {
        recommended: u64,
        which: Option<String>,
    },
    Error,
    /// Deviations past the threshold, or a contradictory resumption: answered with a
    /// correction task (003 "Resumption Decision Tree").
    Escalation,
}

/// The musician message a pending answer replies to: its id and the session that wrote it.
#[derive(Clone, Debug)]
struct Request {
    message_id: i64,
    from_session: String,
}

#[derive(Clone)]
struct TaskView {
    task_id: String,
    state: String,
    session_id: String,
    retry_count: i64,
    seconds_stale: f64,
    /// Whether the row has a heartbeat at all (`seconds_stale` reads 0 when it has none).
    has_heartbeat: bool,
    /// When the poll that read this row ran.
    polled_at_ms: i64,
}

impl TaskView {
    /// The polled row is in `state` (its text, as the poll returned it, names that state).
    fn is(&self, state: TaskState) -> bool {
        self.state == state.as_str()
    }
}

struct Conductor<'a> {
    ctx: &'a Ctx,
    scenario: &'a Rc<Scenario>,
    /// Sessions launched per task; the last one is the task's current session number.
    sessions: BTreeMap<String, u32>,
    /// Per task: sessions replaced because they went silent, which `uncap-lost-sessions`
    /// leaves out of C8's cap (`sessions_counted`).
    sessions_lost: BTreeMap<String, u32>,
    pending: BTreeMap<String, (Pending, Request)>,
    reviews_seen: BTreeMap<String, u64>,
    /// Tasks set to `fix_proposed` whose next session has not claimed yet.
    awaiting_claim: BTreeSet<String>,
    /// Per task: when its latest launched session starts, until the task is claimed.
    launch_started: BTreeMap<String, i64>,
    /// Session ids whose exit or staleness was already handled.
    handled_sessions: BTreeSet<String>,
    /// While a relaunched session reads every message from id 0: task → the sessions that
    /// wrote to it (`recover.rs`).
    writers: Option<BTreeMap<String, BTreeSet<String>>>,
    given_up: BTreeSet<String>,
    emergencies_sent: Vec<bool>,
    /// Per emergency: its resume instructions sent (urgent ones only, docs/protocol.md C41).
    resumes_sent: Vec<bool>,
    exit_requests_sent: Vec<bool>,
    /// Per task: the session asked to exit (docs/protocol.md D16) and when, until the task
    /// is handed to its successor or the row leaves `exit_requested` by another write.
    asked_to_exit: BTreeMap<String, (String, i64)>,
    /// Tasks whose asked session's final `handoff` message the conductor has read.
    exit_confirmed: BTreeSet<String>,
    /// Per task: the `claim_blocked` message not yet acted on (docs/protocol.md C39).
    claim_blocked: BTreeMap<String, i64>,
    last_message_id: i64,
    last_launch_delay_ms: i64,
    twin_after_ms: i64,
    /// The reviews running as actors of their own (docs/protocol.md C3), shared with them.
    desk: review::SharedDesk,
    /// Review actors started so far: the next one's number in its name.
    reviews_started: u32,
}

pub async fn conductor(ctx: Ctx, scenario: Rc<Scenario>) {
    let mut conductor = Conductor {
        ctx: &ctx,
        scenario: &scenario,
        sessions: BTreeMap::new(),
        sessions_lost: BTreeMap::new(),
        pending: BTreeMap::new(),
        reviews_seen: BTreeMap::new(),
        awaiting_claim: BTreeSet::new(),
        launch_started: BTreeMap::new(),
        handled_sessions: BTreeSet::new(),
        writers: None,
        given_up: BTreeSet::new(),
        emergencies_sent: vec![false; scenario.conductor.emergencies.len()],
        resumes_sent: vec![false; scenario.conductor.emergencies.len()],
        exit_requests_sent: vec![false; scenario.conductor.exit_requests.len()],
        asked_to_exit: BTreeMap::new(),
        exit_confirmed: BTreeSet::new(),
        claim_blocked: BTreeMap::new(),
        last_message_id: 0,
        last_launch_delay_ms: 0,
        twin_after_ms: 0,
        desk: Rc::new(RefCell::new(review::Desk::default())),
        reviews_started: 0,
    };
    if let Err(failure) = conductor.run().await {
        ctx.note("conductor_sql_failure", format!("{}: {}", failure.stmt, failure.message));
    }
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

impl Conductor<'_> {
    async fn run(&mut self) -> Result<(), SqlFailure> {
        let ctx = self.ctx;
        match ctx.meta().name.conductor_session() {
            Some(1) | None => self.bootstrap().await?,
            Some(_) => self.resume().await?,
        }
        // Bounded: the run's time limit ends the simulation long before this many polls.
        let polls_max = (self.scenario.run.sim_time_max_ms / self.scenario.conductor.poll_ms).max(1) + 1;
        for _poll in 0..polls_max {
            ctx.sql(Stmt::ConductorHeartbeat, vec![]).await?;
            self.read_messages().await?;
            let tasks = match self.poll_tasks().await {
                Ok(tasks) => tasks,
                // Fault `poll_error` (docs/protocol.md C71): the conductor's own code catches
                // the poll's error and the tick ends there; the next one comes as usual.
                Err(failure) if failure.kind == crate::world::FailureKind::Swallowed => {
                    ctx.sleep(self.scenario.conductor.poll_ms).await;
                    continue;
                }
                Err(failure) => return Err(failure),
            };
            let unfinished = tasks.iter().filter(|t| !t.is(TaskState::Complete) && !self.given_up.contains(&t.task_id)).count();
            if !tasks.is_empty() && unfinished == 0 {
                self.wait_for_reviews().await;
                let end = if self.given_up.is_empty() { TaskState::Complete } else { TaskState::ExitRequested };
                set_own_state(ctx, end).await?;
                ctx.note(
                    "conductor_done",
                    format!("{} tasks complete, {} given up", tasks.len() - self.given_up.len(), self.given_up.len()),
                );
                return self.stop_hook().await;
            }
            // Before the answers: a scripted exit request replaces the answer to a pending
            // request (the musician's pause ends on the state change either way).
            self.send_exit_requests(&tasks).await?;
            for task in &tasks {
                self.handle(task).await?;
            }
            if !self.scenario.conductor.poll_during_reviews {
                // docs/protocol.md C3: the poll waits for the reviews it started.
                self.wait_for_reviews().await;
            }
            self.send_emergencies(&tasks).await?;
            ctx.sleep(self.scenario.conductor.poll_ms).await;
        }
        ctx.note("conductor_gave_up", "poll limit reached");
        Ok(())
    }

    /// The run's first conductor session on the run's fresh database: its row, every task's
    /// row and instruction (004 "Initial State": rows before launches), then the launches.
    async fn bootstrap(&mut self) -> Result<(), SqlFailure> {
        let ctx = self.ctx;
        ctx.sql(Stmt::ConductorRegister, vec![(":session_id", text(&ctx.meta().session_id))]).await?;
        for plan in &self.scenario.tasks {
            self.create_task(&plan.task_id).await?;
            self.send_instruction(&plan.task_id).await?;
        }
        for plan in self.scenario.tasks.clone() {
            self.launch(&plan.task_id, false);
            // Fault: a second session launched for the same task at the same instant.
            if let Some(after_ms) = self.ctx.twin_after_ms(plan.number) {
                self.twin_after_ms = after_ms;
                self.launch(&plan.task_id, true);
            }
        }
        Ok(())
    }

    async fn create_task(&self, task_id: &str) -> Result<(), SqlFailure> {
        let path = messages::instruction_path(task_id);
        self.ctx.sql(Stmt::CreateTask, vec![(":task_id", text(task_id)), (":instruction_path", text(&path))]).await.map(|_| ())
    }

    async fn send_instruction(&self, task_id: &str) -> Result<(), SqlFailure> {
        let message = messages::instruction(task_id, &messages::instruction_path(task_id));
        self.ctx.sql(Stmt::SendInstruction, vec![(":task_id", text(task_id)), (":message", Value::Text(message))]).await.map(|_| ())
    }

    async fn read_messages(&mut self) -> Result<(), SqlFailure> {
        let found = self.ctx.sql(Stmt::ReadMusicianMessages, vec![(":last_id", Value::Integer(self.last_message_id))]).await?;
        for row in 0..found.rows.len() {
            self.last_message_id = self.last_message_id.max(found.int(row, 0).unwrap_or(0));
            let task_id = found.text(row, 1).unwrap_or("").to_string();
            if let Some(writers) = &mut self.writers {
                writers.entry(task_id.clone()).or_default().insert(found.text(row, 2).unwrap_or("").to_string());
            }
            let body = found.text(row, 4).unwrap_or("");
            let kind = found.text(row, 3).unwrap_or("");
            let pending = match MessageKind::parse(kind) {
                Some(MessageKind::ReviewRequest) => Some(self.next_review(&task_id, false)),
                // The final `completion` (004 "Mark Complete") follows approval: not a review.
                Some(MessageKind::Completion) if body.contains("Awaiting final review") => Some(self.next_review(&task_id, true)),
                Some(MessageKind::ContextWarning) => {
                    // A warning without a recommendation: as many agents as fit (REF-3).
                    let (recommended, which) = messages::parse_recommendation(body)
                        .unwrap_or_else(|| (messages::parse_agents_fit(body).unwrap_or(0).max(0) as u64, None));
                    Some(Pending::ContextWarning { recommended, which })
                }
                Some(MessageKind::Error) if body.starts_with(messages::ESCALATION) => Some(Pending::Escalation),
                Some(MessageKind::Error) => Some(Pending::Error),
                Some(MessageKind::ClaimBlocked) => {
                    self.note_claim_blocked(&task_id, found.int(row, 0).unwrap_or(0));
                    self.ctx.note("conductor_read", format!("claim_blocked from {task_id}: {}", body.lines().next().unwrap_or("")));
                    None
                }
                Some(MessageKind::Handoff) => {
                    self.note_final_handoff(&task_id, found.text(row, 2).unwrap_or(""));
                    self.ctx.note("conductor_read", format!("handoff from {task_id}: {}", body.lines().next().unwrap_or("")));
                    None
                }
                _ => {
                    self.ctx.note("conductor_read", format!("{kind} from {task_id}: {}", body.lines().next().unwrap_or("")));
                    None
                }
            };
            if let Some(pending) = pending {
                let request =
                    Request { message_id: found.int(row, 0).unwrap_or(0), from_session: found.text(row, 2).unwrap_or("").to_string() };
                if self.closed_by_hand_over(&task_id, &request) {
                    continue;
                }
                self.pending.insert(task_id, (pending, request));
            }
        }
        Ok(())
    }

    /// docs/protocol.md D15 and C5, `replies-cite-request`: a hand-over ends the replaced
    /// session's claim on the conductor's answers. A request it sends afterwards (a zombie's,
    /// docs/protocol.md D11) is not answered: its answer would change the row under the
    /// successor, and a request pending since before the hand-over would take the review the
    /// successor's own request needs (`drop_replaced_request`). The seeds' conductor answers it.
    fn closed_by_hand_over(&self, task_id: &str, request: &Request) -> bool {
        let closed = self.scenario.settings.replies_cite_request && self.handled_sessions.contains(&request.from_session);
        if closed {
            self.ctx.note("request_closed", format!("{task_id}: request {} of a session handed over, not answered", request.message_id));
        }
        closed
    }

    /// `replies-cite-request`: at a hand-over, the pending request of the session handed over
    /// is closed with it (see `closed_by_hand_over`).
    fn drop_replaced_request(&mut self, task_id: &str) {
        let Some((_, request)) = self.pending.get(task_id) else { return };
        if self.closed_by_hand_over(task_id, request) {
            self.pending.remove(task_id);
        }
    }

    fn next_review(&mut self, task_id: &str, completion: bool) -> Pending {
        let number = self.reviews_seen.entry(task_id.to_string()).or_insert(0);
        *number += 1;
        Pending::Review { completion, number: *number }
    }

    async fn poll_tasks(&mut self) -> Result<Vec<TaskView>, SqlFailure> {
        let rows = self.ctx.sql(Stmt::PollTasks, vec![]).await?;
        let mut tasks = Vec::with_capacity(rows.rows.len());
        for r in 0..rows.rows.len() {
            tasks.push(TaskView {
                task_id: rows.text(r, 0).unwrap_or("").to_string(),
                state: rows.text(r, 1).unwrap_or("").to_string(),
                session_id: rows.text(r, 4).unwrap_or("").to_string(),
                retry_count: rows.int(r, 5).unwrap_or(0),
                seconds_stale: rows.real(r, 3).unwrap_or(0.0),
                has_heartbeat: rows.real(r, 3).is_some(),
                polled_at_ms: self.ctx.now_ms(),
            });
        }
        Ok(tasks)
    }

    async fn handle(&mut self, task: &TaskView) -> Result<(), SqlFailure> {
        // Nothing else is answered, handed over or relaunched while a review of the task runs:
        // its answer would land on whatever the conductor did meanwhile.
        if self.desk.borrow().is_under_review(&task.task_id) {
            return Ok(());
        }
        if !is_claimable(&task.state) {
            // Claimed (or moved on): a hand-over no longer waits for its successor's claim.
            self.awaiting_claim.remove(&task.task_id);
            self.launch_started.remove(&task.task_id);
        }
        if self.follow_exit_request(task).await? {
            return Ok(());
        }
        if task.is(TaskState::Error) && task.retry_count >= 5 && matches!(self.pending.get(&task.task_id), Some((Pending::Error, _))) {
            // 004 "Terminal Failure (5th retry)": after its 5th error report the session writes
            // `exited` ("Session will terminate via hook exit criteria"); there is no fix to
            // propose, and the exit is given up when it comes (`relaunch_after_exit`).
            self.pending.remove(&task.task_id);
            self.ctx.note("conductor_read", format!("{}: 5th error report, no fix proposed: the session exits", task.task_id));
            return Ok(());
        }
        if let Some((kind, request)) = self.pending.get(&task.task_id).cloned() {
            if answers(&task.state, &kind) {
                self.forget_claim_blocked_at_answer(&task.task_id);
                return self.answer_request(task, kind, request).await;
            }
        }
        if self.intervene_on_claim_blocked(task).await? {
            return Ok(());
        }
        if task.is(TaskState::Exited) && !self.handled_sessions.contains(&task.session_id) {
            self.handled_sessions.insert(task.session_id.clone());
            return self.relaunch_after_exit(task).await;
        }
        if self.relaunch_unclaimed(task).await? {
            return Ok(());
        }
        // 000 "Heartbeat Protocol": a stale heartbeat on an active task means a lost session.
        // A fix proposed to a session that then went silent is one too (docs: the conductor's
        // policy for a session lost while it waited for an answer); a task handed over waits
        // for its successor's claim instead (`relaunch_unclaimed`).
        let lost_waiting = self.scenario.settings.relaunch_unclaimed && task.is(TaskState::FixProposed);
        let watched = is_active(&task.state) || lost_waiting;
        let stale = watched && task.seconds_stale > self.scenario.conductor.staleness_s as f64;
        if stale && !self.handled_sessions.contains(&task.session_id) && !self.awaiting_claim.contains(&task.task_id) {
            let Some(seen) = self.confirm_stale(task).await? else { return Ok(()) };
            let task = &seen;
            self.handled_sessions.insert(task.session_id.clone());
            self.ctx.note("stale_detected", format!("{} heartbeat {:.0} s old in {}", task.task_id, task.seconds_stale, task.state));
            self.ctx.observe(Fact::StaleDeclared {
                task_id: task.task_id.clone(),
                session_id: task.session_id.clone(),
                seconds_stale: task.seconds_stale,
                polled_at_ms: task.polled_at_ms,
            });
            let why = format!("went stale (heartbeat {:.0} s old)", task.seconds_stale);
            let stale_after_s = self.scenario.conductor.staleness_s as f64;
            if !self.hand_over_silent_session(&task.task_id, &why, Some(stale_after_s)).await? {
                // It beat again: a later silence is declared afresh.
                self.handled_sessions.remove(&task.session_id);
            }
            return Ok(());
        }
        Ok(())
    }

    /// 002 "Guard Clause Rules": the conductor "detects the stale heartbeat, reviews state",
    /// then hands over. Its poll may be minutes old (it reviews other tasks between polls), so
    /// it reads the row again; the task is still stale only if that read says so. `None`: the
    /// session beat or the task moved on since the poll. Variant `act-on-poll` skips the read.
    async fn confirm_stale(&mut self, task: &TaskView) -> Result<Option<TaskView>, SqlFailure> {
        if self.scenario.settings.act_on_poll {
            return Ok(Some(task.clone()));
        }
        let row = self.ctx.sql(Stmt::ReadTaskState, vec![(":task_id", text(&task.task_id))]).await?;
        let state = row.text(0, 0).unwrap_or("").to_string();
        let seconds_stale = row.real(0, 3).unwrap_or(0.0);
        let watched =
            is_active(&state) || (TaskState::parse(&state) == Some(TaskState::FixProposed) && self.scenario.settings.relaunch_unclaimed);
        if !watched || seconds_stale <= self.scenario.conductor.staleness_s as f64 {
            self.ctx.note(
                "stale_recovered",
                format!("{}: {} s old at the poll, {seconds_stale:.0} s old in {state} now", task.task_id, task.seconds_stale as i64),
            );
            return Ok(None);
        }
        Ok(Some(TaskView { state, seconds_stale, polled_at_ms: self.ctx.now_ms(), ..task.clone() }))
    }

    /// The simulator's policy for a launched session that never claims (it died before its
    /// first write; the seeds are silent): once the claim is `conductor.claim_overdue_s`
    /// overdue (a staleness window unless set), the conductor launches the task's next session. A row left `watching` has no heartbeat, so
    /// no staleness rule of the seeds ever sees it. Variant `no-relaunch-unclaimed` turns this
    /// off. Returns whether it relaunched (or gave the task up).
    async fn relaunch_unclaimed(&mut self, task: &TaskView) -> Result<bool, SqlFailure> {
        if !self.scenario.settings.relaunch_unclaimed || !is_claimable(&task.state) {
            return Ok(false);
        }
        let Some(started_ms) = self.launch_started.get(&task.task_id).copied() else { return Ok(false) };
        if self.ctx.now_ms() - started_ms <= self.scenario.claim_overdue_s() * 1000 {
            return Ok(false);
        }
        if self.scenario.settings.confirm_unclaimed && self.claimed_since_poll(task).await? {
            return Ok(false);
        }
        self.count_lost(&task.task_id, 1);
        let launched = self.sessions_counted(&task.task_id);
        if launched as u64 >= self.scenario.conductor.sessions_per_task_max {
            self.ctx.note("task_given_up", format!("{}: {launched} sessions launched (conductor.sessions_per_task_max)", task.task_id));
            self.given_up.insert(task.task_id.clone());
            self.launch_started.remove(&task.task_id);
            return Ok(true);
        }
        self.ctx.note("claim_overdue", format!("{}: the session launched to start at t={started_ms} ms never claimed it", task.task_id));
        self.launch(&task.task_id, false);
        Ok(true)
    }

    /// Variant `patient-relaunch` (issue 28): the poll that found the row unclaimed may be
    /// reviews old (C3: no polling during a review), and a hung session may have woken and
    /// claimed since; like `confirm_stale`, the row is read again before a relaunch.
    async fn claimed_since_poll(&mut self, task: &TaskView) -> Result<bool, SqlFailure> {
        let row = self.ctx.sql(Stmt::ReadTaskState, vec![(":task_id", text(&task.task_id))]).await?;
        let state = row.text(0, 0).unwrap_or("").to_string();
        if is_claimable(&state) {
            return Ok(false);
        }
        self.ctx.note("claim_seen", format!("{}: {} at the poll, {state} now: no relaunch", task.task_id, task.state));
        Ok(true)
    }

    /// docs/protocol.md C3: whether reviews run as actors of their own, beside the poll loop.
    fn reviews_as_actors(&self) -> bool {
        let c = &self.scenario.conductor;
        c.poll_during_reviews || c.reviews_in_flight > 1
    }

    /// Starts a review actor once one of `conductor.reviews_in_flight` is free. Polling during
    /// reviews, a full desk leaves the request pending for a later poll; otherwise the loop
    /// waits for a review to end, as a conductor busy with N reviews would.
    async fn start_review(&mut self, job: review::Job) -> Result<(), SqlFailure> {
        let c = &self.scenario.conductor;
        while self.desk.borrow().in_flight() as u64 >= c.reviews_in_flight {
            if c.poll_during_reviews {
                return Ok(());
            }
            self.wait_for_a_review().await;
        }
        if self.pending.remove(&job.task_id).is_none() {
            return Ok(());
        }
        self.reviews_started += 1;
        let me = self.ctx.meta();
        let session_no = me.name.conductor_session().unwrap_or(1);
        let meta = ActorMeta {
            name: ActorName::Review(session_no, self.reviews_started),
            task_id: me.task_id.clone(),
            session_id: me.session_id.clone(),
        };
        let (scenario, desk, task_id) = (self.scenario.clone(), self.desk.clone(), job.task_id.clone());
        let actor = self.ctx.spawn_child(meta, 0, move |ctx| review::actor(ctx, scenario, job, desk));
        self.desk.borrow_mut().add(&task_id, actor);
        Ok(())
    }

    async fn wait_for_a_review(&self) {
        let running = self.desk.borrow().actors();
        if !running.is_empty() {
            self.ctx.join_any(running).await;
        }
    }

    async fn wait_for_reviews(&self) {
        while self.desk.borrow().in_flight() > 0 {
            self.wait_for_a_review().await;
        }
    }

    /// 000 "Context escalation response states".
    /// `"fix"` accepts the musician's recommendation (000 Example: Context-Tight Break Point,
    /// Step 5: "accept the musician's recommendation … Total: 3 more agents + checkpoint").
    /// `"exit_request"` says "prepare handoff now" with `exit_requested` (docs/protocol.md D16).
    async fn answer_context_warning(
        &mut self,
        task: &TaskView,
        recommended: u64,
        which: Option<&str>,
        request_id: Option<i64>,
    ) -> Result<(), SqlFailure> {
        let task_id = task.task_id.as_str();
        match self.scenario.conductor.context_reply {
            ContextReply::Approve => {
                self.answer(
                    task_id,
                    MessageKind::Approval,
                    "Proceed as planned to checkpoint, then stop and report back for clean handoff.".to_string(),
                    TaskState::ReviewApproved,
                    request_id,
                )
                .await
            }
            ContextReply::Fix => {
                self.answer(
                    task_id,
                    MessageKind::FixProposal,
                    messages::reduced_scope(recommended, which),
                    TaskState::FixProposed,
                    request_id,
                )
                .await
            }
            ContextReply::Adjust => {
                self.answer(task_id, MessageKind::FixProposal, messages::adjusted_approach(), TaskState::FixProposed, request_id).await
            }
            ContextReply::Handoff => {
                self.answer(
                    task_id,
                    MessageKind::Rejection,
                    "Do not proceed, prepare handoff now.".to_string(),
                    TaskState::ReviewFailed,
                    request_id,
                )
                .await
            }
            ContextReply::ExitRequest => {
                self.request_exit(task_id, &task.session_id, "context warning: prepare handoff now", request_id).await
            }
        }
    }

    /// `request_id`: the request it answers, named in the message under `replies-cite-request`
    /// (docs/protocol.md D15); a hand-over answers none.
    async fn answer(
        &mut self,
        task_id: &str,
        kind: MessageKind,
        message: String,
        state: TaskState,
        request_id: Option<i64>,
    ) -> Result<(), SqlFailure> {
        send_answer(self.ctx, task_id, kind, cite(self.scenario, message, request_id), state).await
    }

    /// A message with no state (a hand-over that leaves the row claimable as it is).
    async fn send(&mut self, task_id: &str, kind: MessageKind, message: String) -> Result<(), SqlFailure> {
        send(self.ctx, task_id, kind, message).await
    }

    /// 000 Bootstrap 5 "Session Handoff": read the HANDOFF, then `fix_proposed` with a handoff
    /// message and the next session. A 5th-retry exit (004 "Terminal Failure") is given up.
    async fn relaunch_after_exit(&mut self, task: &TaskView) -> Result<(), SqlFailure> {
        let handoff = self.ctx.read_file(&format!("temp/{}-HANDOFF", task.task_id)).await;
        if task.retry_count >= 5 {
            self.ctx.note("task_given_up", format!("{} exited after its 5th failure", task.task_id));
            self.given_up.insert(task.task_id.clone());
            return Ok(());
        }
        if !self.scenario.settings.relaunch_exited {
            // docs/protocol.md D9, read strictly: `exited` "cannot transition back".
            self.ctx.note("task_given_up", format!("{} exited; exited is terminal (strict-terminal)", task.task_id));
            self.given_up.insert(task.task_id.clone());
            return Ok(());
        }
        let why = if handoff.is_some() { "exited cleanly" } else { "exited without a HANDOFF" };
        self.hand_over(&task.task_id, why).await
    }

    /// 000 Bootstrap 5 "Session Handoff": a `handoff` message, `fix_proposed`, the next session.
    async fn hand_over(&mut self, task_id: &str, why: &str) -> Result<(), SqlFailure> {
        self.hand_over_leaving(task_id, why, Some(TaskState::FixProposed)).await
    }

    /// The hand-over of a session that went silent (a stale heartbeat, a row it holds and no
    /// longer beats on): under `release-stale` (issue 28) the row is released first
    /// (`release_task`: the state, and `session_id` cleared) and only if its heartbeat is still
    /// older than `stale_after_s` at that write (`None`: no condition), then the `handoff`
    /// message and the next session follow. The session, if it only hung, is fenced out at its
    /// first row write once it wakes; if it woke and beat between the conductor's read and the
    /// release, nothing is handed over. Otherwise `hand_over`. Returns whether it handed over.
    async fn hand_over_silent_session(&mut self, task_id: &str, why: &str, stale_after_s: Option<f64>) -> Result<bool, SqlFailure> {
        self.release_and_hand_over(task_id, why, stale_after_s, TaskState::FixProposed).await
    }

    /// `hand_over_silent_session`, releasing the row into `state` (`exit_requested` for an asked
    /// session, which keeps the state the conductor set: `release-asked-exit`, C81).
    async fn release_and_hand_over(
        &mut self,
        task_id: &str,
        why: &str,
        stale_after_s: Option<f64>,
        state: TaskState,
    ) -> Result<bool, SqlFailure> {
        if !self.scenario.settings.release_stale {
            self.hand_over(task_id, why).await?;
            return Ok(true);
        }
        self.count_lost(task_id, 1);
        if self.give_up_if_spent(task_id) {
            return Ok(true);
        }
        let stale_after = stale_after_s.map_or(Value::Null, Value::Real);
        let params = vec![(":task_id", text(task_id)), (":state", state_value(state)), (":stale_after_s", stale_after)];
        let released = self.ctx.sql(Stmt::ReleaseTask, params).await?;
        if released.rows_affected == 0 {
            self.count_lost(task_id, -1);
            self.ctx.note("stale_recovered", format!("{task_id}: the session beat or wrote again before the release: nothing handed over"));
            return Ok(false);
        }
        self.hand_over_leaving(task_id, why, None).await?;
        Ok(true)
    }

    /// Whether the task has had its `conductor.sessions_per_task_max` sessions: then it is given
    /// up instead of handed over.
    fn give_up_if_spent(&mut self, task_id: &str) -> bool {
        let launched = self.sessions_counted(task_id);
        if (launched as u64) < self.scenario.conductor.sessions_per_task_max {
            return false;
        }
        self.ctx.note("task_given_up", format!("{task_id}: {launched} sessions launched (conductor.sessions_per_task_max)"));
        self.given_up.insert(task_id.to_string());
        true
    }

    /// The sessions of the task that count against C8's cap: every one launched, less, under
    /// `uncap-lost-sessions` (issue 28), those replaced because they went silent. A crash or
    /// hang is the environment's doing and the fault model says faults stop, while the cap is
    /// there for a task no session can finish (proof-random-faults seeds 307 and 790: five
    /// sessions lost to faults during the fault phase, and the task was given up).
    fn sessions_counted(&self, task_id: &str) -> u32 {
        let launched = self.sessions.get(task_id).copied().unwrap_or(0);
        launched.saturating_sub(self.sessions_lost.get(task_id).copied().unwrap_or(0))
    }

    /// Under `uncap-lost-sessions`: `delta` more (or, when a release finds the session alive
    /// after all, fewer) of the task's sessions were lost.
    fn count_lost(&mut self, task_id: &str, delta: i32) {
        if self.scenario.settings.uncap_lost_sessions {
            let lost = self.sessions_lost.entry(task_id.to_string()).or_insert(0);
            *lost = lost.saturating_add_signed(delta);
        }
    }

    /// The hand-over with the state it sets: `None` leaves the row as it is, claimable already
    /// (`exit_requested`, docs/protocol.md D16, or released by `hand_over_silent_session`).
    async fn hand_over_leaving(&mut self, task_id: &str, why: &str, state: Option<TaskState>) -> Result<(), SqlFailure> {
        if self.give_up_if_spent(task_id) {
            return Ok(());
        }
        self.drop_replaced_request(task_id);
        let launched = self.sessions.get(task_id).copied().unwrap_or(0);
        let message = messages::conductor_handoff(task_id, launched, why);
        match state {
            Some(state) => self.answer(task_id, MessageKind::Handoff, message, state, None).await?,
            None => self.send(task_id, MessageKind::Handoff, message).await?,
        }
        self.awaiting_claim.insert(task_id.to_string());
        self.launch(task_id, false);
        Ok(())
    }

    async fn send_emergencies(&mut self, tasks: &[TaskView]) -> Result<(), SqlFailure> {
        for (index, emergency) in self.scenario.conductor.emergencies.clone().iter().enumerate() {
            if self.emergencies_sent[index] && !self.resumes_sent[index] && self.resume_due(emergency, tasks) {
                // docs/protocol.md C41: an urgent emergency stopped the work; the conductor's
                // instructions resume it (000 "Emergency Messages" says no more).
                self.resumes_sent[index] = true;
                let task_id = crate::input::scenario::task_id(emergency.task);
                self.send(&task_id, MessageKind::Emergency, messages::emergency_resume(&task_id)).await?;
            }
            if self.emergencies_sent[index] || self.ctx.now_ms() < emergency.at_ms {
                continue;
            }
            self.emergencies_sent[index] = true;
            let task_id = crate::input::scenario::task_id(emergency.task);
            let message = messages::emergency(&task_id, emergency.kind());
            // 000 "Emergency Messages": one INSERT per task, watched by that task's watcher.
            self.send(&task_id, MessageKind::Emergency, message).await?;
        }
        Ok(())
    }

    /// An urgent emergency's resume instructions are due `resume_after_ms` after it, unless
    /// its musician reports the stop instead (`emergency-stop-escalates`) or the task's row
    /// is finished (nobody would read them).
    fn resume_due(&self, emergency: &crate::input::scenario::Emergency, tasks: &[TaskView]) -> bool {
        let task_id = crate::input::scenario::task_id(emergency.task);
        let finished = tasks.iter().any(|t| t.task_id == task_id && TaskState::parse(&t.state).is_some_and(TaskState::is_terminal));
        emergency.kind() == crate::input::scenario::EmergencyKind::Urgent
            && !self.scenario.settings.emergency_stop_escalates
            && !finished
            && self.ctx.now_ms() >= emergency.at_ms + emergency.resume_after_ms
    }

    /// 004 "Hook System": the conductor may end on `exit_requested` or `complete`, max 1000.
    async fn stop_hook(&mut self) -> Result<(), SqlFailure> {
        const ITERATIONS_MAX: u32 = 1000;
        for iteration in 1..=ITERATIONS_MAX {
            let rows = self.ctx.sql(Stmt::StopHookState, vec![(":session_id", text(&self.ctx.meta().session_id))]).await?;
            let state = rows.text(0, 1).unwrap_or("").to_string();
            if matches!(TaskState::parse(&state), Some(TaskState::Complete | TaskState::ExitRequested)) {
                self.ctx.note("stop_hook", format!("iteration {iteration}: {state}, exit allowed"));
                return Ok(());
            }
            self.ctx.note("stop_hook", format!("iteration {iteration}: {state}, exit blocked"));
            self.ctx.sleep(self.scenario.timing.stop_hook_retry_ms).await;
        }
        Ok(())
    }

    /// Starts the task's next session after the launch delay. Its session id is drawn from
    /// its own name, as the SessionStart hook would hand it one.
    fn launch(&mut self, task_id: &str, twin: bool) {
        let number = self.sessions.entry(task_id.to_string()).or_insert(0);
        if !twin {
            *number += 1;
        }
        let plan = self.scenario.tasks.iter().find(|p| p.task_id == task_id).expect("a scenario task").clone();
        let launch = Launch { plan, session_no: *number };
        // A twin gets its own name (and so its own session id and streams): `task-01.S1b`.
        let name = launch.actor_name(twin);
        let meta = ActorMeta { session_id: self.ctx.derive_uuid(&name.to_string()), task_id: task_id.to_string(), name };
        let delay_ms =
            if twin { self.last_launch_delay_ms + self.twin_after_ms } else { self.ctx.draw(&self.scenario.timing.launch_delay_ms) };
        self.last_launch_delay_ms = delay_ms;
        if !twin {
            self.launch_started.insert(task_id.to_string(), self.ctx.now_ms() + delay_ms);
        }
        self.ctx.observe(Fact::Launched {
            at_ms: self.ctx.now_ms() + delay_ms,
            label: name.place().map(|p| p.label()).unwrap_or_default(),
            session_id: meta.session_id.clone(),
            task_id: task_id.to_string(),
        });
        self.ctx.note("launch", format!("{} as {} in {delay_ms} ms", meta.name, launch.worked_by()));
        let scenario = self.scenario.clone();
        self.ctx.launch(meta, delay_ms, move |ctx| musician::session(ctx, scenario, launch));
    }
}

/// Message first, then the state (000 "Review Request Flow" 4: the musician reads both).
async fn send_answer(ctx: &Ctx, task_id: &str, kind: MessageKind, message: String, state: TaskState) -> Result<(), SqlFailure> {
    send(ctx, task_id, kind, message).await?;
    ctx.sql(Stmt::SetTaskState, vec![(":task_id", text(task_id)), (":state", state_value(state))]).await?;
    Ok(())
}

/// One conductor message to a task (`send_conductor_message`).
async fn send(ctx: &Ctx, task_id: &str, kind: MessageKind, message: String) -> Result<(), SqlFailure> {
    let params = vec![(":task_id", text(task_id)), (":message", Value::Text(message)), (":message_type", text(kind.as_str()))];
    ctx.sql(Stmt::SendConductorMessage, params).await.map(|_| ())
}

/// `message`, citing the request it answers under `replies-cite-request` (docs/protocol.md
/// D15); the seeds' messages name none.
fn cite(scenario: &Scenario, message: String, request_id: Option<i64>) -> String {
    match request_id {
        Some(id) if scenario.settings.replies_cite_request => messages::citing_request(message, id),
        _ => message,
    }
}

/// `task-00`'s own state (004 "Conductor States"); the write refreshes its heartbeat too.
async fn set_own_state(ctx: &Ctx, state: TaskState) -> Result<(), SqlFailure> {
    ctx.sql(Stmt::ConductorSetState, vec![(":state", state_value(state))]).await.map(|_| ())
}

/// Whether a task in `state` gets the answer to `pending` now (the cases `handle` answers).
fn answers(state: &str, pending: &Pending) -> bool {
    matches!(
        (TaskState::parse(state), pending),
        (Some(TaskState::NeedsReview), Pending::Review { .. })
            | (Some(TaskState::Error), Pending::ContextWarning { .. } | Pending::Error | Pending::Escalation)
    )
}

/// 002 "Guard Clause Rules": the states a new session may claim from. The conductor's rows are
/// the text its queries returned (a `--sql` file's may return any), read as states here.
fn is_claimable(state: &str) -> bool {
    TaskState::parse(state).is_some_and(TaskState::is_claimable)
}

/// The states in which a session is at work on the row, so a stale heartbeat means it is lost.
fn is_active(state: &str) -> bool {
    matches!(
        TaskState::parse(state),
        Some(TaskState::Working | TaskState::NeedsReview | TaskState::Error | TaskState::ReviewApproved | TaskState::ReviewFailed)
    )
}

/// `state` as the `:state` parameter binds it.
fn state_value(state: TaskState) -> Value {
    text(state.as_str())
}
