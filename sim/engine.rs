//! The discrete-event engine: a deterministic executor for actor futures over simulated time.
//!
//! Actors (conductor, musician sessions, watchers) are `async` code that reaches the world
//! only through `Ctx` (sim/ctx.rs): each `await` on a SQL statement, a sleep or a join hands
//! one *request* to the engine and suspends. The engine keeps one queue of events ordered by
//! (simulated ms, insertion sequence); when an actor's event comes up it performs that
//! actor's pending request at that instant (SQL runs with the clock at the event's time),
//! hands back the response and polls the actor to its next request.
//!
//! **Architecture Invariant:** between two requests of an actor the engine holds the actor's
//! whole in-memory state in its suspended future, so dropping the future is exactly a crashed
//! process (DESIGN.md, invariant 5), and any interleaving of actors is one queue order away.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use rand_chacha::ChaCha8Rng;

use crate::clock::SimClock;
use crate::ctx::Ctx;
use crate::db::{CommsDb, Params, SqlOutcome};
use crate::dist::Dist;
use crate::error::{Error, Result};
use crate::faults::{self, FaultPlan, Timed};
use crate::oracle::{Checker, Fact, Role, SqlFact};
use crate::rng;
use crate::trace::{TraceRow, TraceSink};

pub type ActorId = u32;

/// Who an actor is, as the trace shows it.
#[derive(Clone, Debug, Default)]
pub struct ActorMeta {
    /// Unique and stable across runs, e.g. `conductor`, `task-01.S1`, `task-01.S1.bg-watcher-2`.
    /// It also names the actor's random stream.
    pub name: String,
    /// The task row this actor works on (`task-00` for the conductor).
    pub task_id: String,
    /// The session id it writes as (`CLAUDE_SESSION_ID`), empty before it has one.
    pub session_id: String,
}

/// A SQL statement failed inside SQLite (constraint, busy, …). The actor decides what follows.
#[derive(Clone, Debug)]
pub struct SqlFailure {
    pub statement: &'static str,
    pub message: String,
}

pub(crate) enum Request {
    Sql {
        name: &'static str,
        params: Params,
    },
    Sleep {
        ms: i64,
    },
    /// Resumes when any of these actors has finished (or at once if one already has).
    JoinAny {
        actors: Vec<ActorId>,
    },
    /// temp/ file effects, relative to the run folder (000 "Temporary File Management").
    AppendFile {
        path: String,
        text: String,
    },
    WriteFile {
        path: String,
        text: String,
    },
    ReadFile {
        path: String,
    },
}

pub(crate) enum Response {
    Sql(std::result::Result<SqlOutcome, SqlFailure>),
    Woke,
    /// The first of the joined actors found finished.
    Joined(ActorId),
    FileWritten,
    File(Option<String>),
}

/// The mailbox between one actor's future and the engine.
#[derive(Default)]
pub(crate) struct Slot {
    pub request: Option<Request>,
    pub response: Option<Response>,
}

type ActorFuture = Pin<Box<dyn Future<Output = ()>>>;

pub(crate) struct Spawn {
    pub id: ActorId,
    /// A child (watcher, subagent) dies with its parent; a launched session has no parent.
    pub parent: Option<ActorId>,
    pub meta: ActorMeta,
    pub delay_ms: i64,
    pub slot: Rc<RefCell<Slot>>,
    pub future: ActorFuture,
}

/// State shared between the engine and every `Ctx`: the clock, spawn and kill requests, and
/// the trace. Actors read it; only the engine acts on it.
pub(crate) struct Runtime {
    pub seed: u64,
    pub clock: SimClock,
    pub epoch_unix_ms: i64,
    pub next_id: Cell<ActorId>,
    pub spawns: RefCell<Vec<Spawn>>,
    pub kills: RefCell<Vec<ActorId>>,
    pub trace: RefCell<TraceSink>,
    /// The first trace write error, surfaced by the engine after the event.
    pub trace_error: RefCell<Option<Error>>,
    /// Facts actors report for the oracles (decisions that are not database effects).
    pub facts: RefCell<Vec<Fact>>,
}

impl Runtime {
    pub fn now_ms(&self) -> i64 {
        self.clock.now_unix_ms() - self.epoch_unix_ms
    }

    pub fn record(&self, row: TraceRow) {
        if let Err(e) = self.trace.borrow_mut().push(row) {
            self.trace_error.borrow_mut().get_or_insert(e);
        }
    }
}

struct ActorRec {
    meta: ActorMeta,
    future: ActorFuture,
    slot: Rc<RefCell<Slot>>,
    /// Bumped whenever the actor is scheduled; an event with an older token is stale.
    token: u64,
    /// Draws the engine makes on the actor's behalf (statement latency), kept apart from
    /// the actor's own stream so protocol choices do not shift engine draws.
    latency_rng: ChaCha8Rng,
    /// Actors waiting for this one to finish, with the wait token they were parked under.
    joiners: Vec<(ActorId, u64)>,
    children: Vec<ActorId>,
    /// While hung (a fault), the actor's events wait until this instant.
    hung_until_unix_ms: Option<i64>,
}

/// Settings of the engine itself.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub seed: u64,
    pub epoch_unix_ms: i64,
    /// Round trip of one statement through a session's tool call.
    pub statement_ms: Dist,
    pub sim_time_max_ms: i64,
    pub events_max: u64,
}

/// How the event loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every actor finished.
    Quiescent,
    /// Simulated time reached `sim_time_max_ms` with actors still running.
    TimeLimit,
}

pub struct Engine {
    config: EngineConfig,
    runtime: Rc<Runtime>,
    db: CommsDb,
    actors: BTreeMap<ActorId, ActorRec>,
    queue: BTreeMap<(i64, u64), Scheduled>,
    seq: u64,
    events: u64,
    /// The run folder: temp/ files are written below it.
    files_root: std::path::PathBuf,
    /// The files sessions wrote (path under `files_root` → content), flushed at the end.
    files: BTreeMap<String, String>,
    faults: FaultPlan,
    checker: Checker,
    /// The virtual write lock: free from this instant (DESIGN.md, invariant 7).
    lock_free_unix_ms: i64,
    pub contention: Contention,
}

/// Lock contention in virtual time, for summaries and benchmarks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Contention {
    pub lock_waits: u64,
    pub lock_wait_ms_total: i64,
    pub busy_errors: u64,
}

/// What an entry of the event queue wakes: an actor (with the token it was scheduled
/// under) or a timed fault.
#[derive(Clone, Copy, Debug)]
enum Scheduled {
    Actor(ActorId, u64),
    Fault(usize),
}

impl Engine {
    pub fn new(
        config: EngineConfig,
        clock: SimClock,
        db: CommsDb,
        trace: TraceSink,
        files_root: std::path::PathBuf,
        faults: FaultPlan,
        checker: Checker,
    ) -> Engine {
        assert_eq!(clock.now_unix_ms(), config.epoch_unix_ms, "the clock starts at the epoch");
        let runtime = Rc::new(Runtime {
            seed: config.seed,
            clock,
            epoch_unix_ms: config.epoch_unix_ms,
            next_id: Cell::new(0),
            spawns: RefCell::new(Vec::new()),
            kills: RefCell::new(Vec::new()),
            trace: RefCell::new(trace),
            trace_error: RefCell::new(None),
            facts: RefCell::new(Vec::new()),
        });
        let mut engine = Engine {
            config,
            runtime,
            db,
            actors: BTreeMap::new(),
            queue: BTreeMap::new(),
            seq: 0,
            events: 0,
            files_root,
            files: BTreeMap::new(),
            faults,
            checker,
            lock_free_unix_ms: 0,
            contention: Contention::default(),
        };
        let epoch = engine.config.epoch_unix_ms;
        for (index, (at_ms, _)) in engine.faults.timed.clone().iter().enumerate() {
            engine.seq += 1;
            engine.queue.insert((epoch + at_ms, engine.seq), Scheduled::Fault(index));
        }
        for (name, value) in engine.faults.drawn.clone() {
            engine.runtime.record(TraceRow {
                event: "swarm".to_string(),
                actor: "engine".to_string(),
                detail: format!("{name}={value}"),
                ..TraceRow::default()
            });
        }
        engine
    }

    /// Adds a top-level actor that starts after `delay_ms`.
    pub fn spawn<F, Fut>(&mut self, meta: ActorMeta, delay_ms: i64, make: F) -> ActorId
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + 'static,
    {
        let id = Ctx::queue_spawn(&self.runtime, None, meta, delay_ms, make);
        self.drain_requests();
        id
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn now_ms(&self) -> i64 {
        self.runtime.now_ms()
    }

    /// Runs until no actor is left, or the time limit. The event cap is a harness error: a
    /// run that needs more events than its scenario allows is a livelock, not a verdict.
    pub fn run(&mut self) -> Result<Ending> {
        let deadline_unix_ms = self.config.epoch_unix_ms + self.config.sim_time_max_ms;
        while let Some((&(at_unix_ms, seq), &scheduled)) = self.queue.iter().next() {
            if at_unix_ms > deadline_unix_ms {
                self.runtime.clock.advance_to(deadline_unix_ms);
                return Ok(Ending::TimeLimit);
            }
            self.queue.remove(&(at_unix_ms, seq));
            self.events += 1;
            if self.events > self.config.events_max {
                return Err(Error::harness(format!(
                    "event cap reached: {} events by t={} ms (run.events_max); seed {}",
                    self.config.events_max,
                    self.runtime.now_ms(),
                    self.config.seed
                )));
            }
            self.runtime.clock.advance_to(at_unix_ms);
            match scheduled {
                Scheduled::Fault(index) => self.apply_timed_fault(index),
                Scheduled::Actor(actor, token) => {
                    // A hung actor's event waits until the hang ends, token unchanged.
                    let hung_until = self.actors.get(&actor).and_then(|a| a.hung_until_unix_ms).filter(|until| *until > at_unix_ms);
                    match hung_until {
                        Some(until) => {
                            self.seq += 1;
                            self.queue.insert((until, self.seq), Scheduled::Actor(actor, token));
                        }
                        None => self.fire(actor, token)?,
                    }
                }
            }
            self.drain_facts();
            if let Some(e) = self.runtime.trace_error.borrow_mut().take() {
                return Err(e);
            }
        }
        assert!(self.actors.is_empty(), "an actor is suspended with no event and no join: {:?}", self.actors.keys().collect::<Vec<_>>());
        Ok(Ending::Quiescent)
    }

    /// Writes every file the sessions wrote under `files_root`, whatever way the run ended,
    /// so the seed's scripts and a person can read them (temp/ was emptied at the start).
    pub fn flush_files(&mut self) -> Result<()> {
        for (path, content) in &self.files {
            let full = self.files_root.join(path);
            if let Some(parent) = full.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::harness(format!("cannot create {}: {e}", parent.display())))?;
            }
            std::fs::write(&full, content).map_err(|e| Error::harness(format!("cannot write {}: {e}", full.display())))?;
        }
        Ok(())
    }

    /// Hands the database, the trace and the oracles back once the loop is over.
    pub fn into_parts(mut self) -> (CommsDb, TraceSink, Checker) {
        self.drain_facts();
        drop(self.actors);
        let runtime = Rc::try_unwrap(self.runtime).unwrap_or_else(|_| panic!("a Ctx outlived its engine"));
        (self.db, runtime.trace.into_inner(), self.checker)
    }

    fn drain_facts(&mut self) {
        let facts: Vec<Fact> = self.runtime.facts.borrow_mut().drain(..).collect();
        for fact in facts {
            self.checker.on_fact(fact);
        }
    }

    /// Every actor of a session (the session and its watchers and subagents).
    fn session_actors(&self, session_id: &str) -> Vec<ActorId> {
        self.actors.iter().filter(|(_, a)| a.meta.session_id == session_id).map(|(id, _)| *id).collect()
    }

    /// The session id of the live session `task`/`session` (first launched if twins).
    fn session_of(&self, task: u64, session: u32) -> Option<String> {
        self.actors
            .values()
            .find(|a| crate::faults::place(&a.meta.name).is_some_and(|p| p.task == task && p.session == session && !p.watcher))
            .map(|a| a.meta.session_id.clone())
    }

    /// A crash: every actor of the session is dropped at once; nothing in memory survives.
    fn crash_session(&mut self, session_id: &str, why: &str) {
        let victims = self.session_actors(session_id);
        if victims.is_empty() {
            return;
        }
        self.runtime.record(TraceRow {
            t_ms: self.runtime.now_ms(),
            actor: "engine".to_string(),
            session: session_id.to_string(),
            event: "fault_crash".to_string(),
            detail: why.to_string(),
            ..TraceRow::default()
        });
        for victim in victims {
            if self.actors.contains_key(&victim) {
                self.finish(victim, "crashed");
            }
        }
        self.runtime.facts.borrow_mut().push(Fact::Crashed {
            t_ms: self.runtime.now_ms(),
            session_id: session_id.to_string(),
            why: why.to_string(),
        });
    }

    /// A hang: the session's actors stop for `ms` and then go on as if nothing happened.
    fn hang_actors(&mut self, victims: &[ActorId], ms: i64, who: &str, session_id: &str) {
        let until = self.runtime.clock.now_unix_ms() + ms;
        for victim in victims {
            if let Some(actor) = self.actors.get_mut(victim) {
                actor.hung_until_unix_ms = Some(until);
            }
        }
        self.runtime.record(TraceRow {
            t_ms: self.runtime.now_ms(),
            actor: "engine".to_string(),
            session: session_id.to_string(),
            event: "fault_hang".to_string(),
            detail: format!("{who} hangs for {ms} ms"),
            ..TraceRow::default()
        });
        self.runtime.facts.borrow_mut().push(Fact::Hung {
            t_ms: self.runtime.now_ms(),
            session_id: session_id.to_string(),
            until_ms: self.runtime.now_ms() + ms,
        });
    }

    fn apply_timed_fault(&mut self, index: usize) {
        let (_, fault) = self.faults.timed[index].clone();
        match fault {
            Timed::Crash { task, session } => {
                if let Some(sid) = self.session_of(task, session) {
                    self.crash_session(&sid, &format!("scripted crash of task {task} S{session}"));
                }
            }
            Timed::Hang { task, session, ms } => {
                if let Some(sid) = self.session_of(task, session) {
                    let victims = self.session_actors(&sid);
                    self.hang_actors(&victims, ms, &format!("task {task} S{session}"), &sid);
                }
            }
            Timed::WatcherDeath { task, session } => {
                let Some(sid) = self.session_of(task, session) else { return };
                let watchers: Vec<ActorId> = self
                    .actors
                    .iter()
                    .filter(|(_, a)| a.meta.session_id == sid && a.meta.name.contains("watcher"))
                    .map(|(id, _)| *id)
                    .collect();
                for watcher in watchers {
                    self.finish(watcher, "fault_watcher_death");
                }
                self.runtime.facts.borrow_mut().push(Fact::WatcherDied { t_ms: self.runtime.now_ms(), session_id: sid });
            }
            Timed::ConductorDown { ms } => {
                let conductor: Vec<ActorId> = self.actors.iter().filter(|(_, a)| a.meta.name == "conductor").map(|(id, _)| *id).collect();
                self.hang_actors(&conductor, ms, "the conductor", crate::vocab::CONDUCTOR_SESSION_ID);
            }
        }
    }

    fn fire(&mut self, actor: ActorId, token: u64) -> Result<()> {
        let Some(rec) = self.actors.get_mut(&actor) else {
            return Ok(());
        };
        if rec.token != token {
            return Ok(());
        }
        let request = rec.slot.borrow_mut().request.take();
        let response = match request {
            None => None, // first poll
            Some(Request::Sleep { .. }) => Some(Response::Woke),
            Some(Request::JoinAny { actors }) => {
                let done = actors.iter().copied().find(|a| !self.actors.contains_key(a)).expect("woken because one finished");
                Some(Response::Joined(done))
            }
            Some(Request::AppendFile { path, text }) => Some(self.perform_file(actor, &path, &text, true)?),
            Some(Request::WriteFile { path, text }) => Some(self.perform_file(actor, &path, &text, false)?),
            Some(Request::ReadFile { path }) => Some(self.perform_read(actor, &path)?),
            Some(Request::Sql { name, params }) => match self.perform_sql(actor, name, &params)? {
                Some(result) => Some(Response::Sql(result)),
                None => return Ok(()), // a fault crashed or froze the session at this point
            },
        };
        let rec = self.actors.get_mut(&actor).expect("actor still present");
        rec.slot.borrow_mut().response = response;
        let mut cx = Context::from_waker(Waker::noop());
        let poll = rec.future.as_mut().poll(&mut cx);
        // Spawns first: a request to join a child spawned in the same poll must find it.
        self.drain_requests();
        match poll {
            Poll::Ready(()) => self.finish(actor, "exit"),
            Poll::Pending if self.actors.contains_key(&actor) => self.schedule_next(actor),
            Poll::Pending => {} // it killed itself through a kill request
        }
        self.drain_requests();
        Ok(())
    }

    /// The statement has not run: it runs when the actor is woken at `until_unix_ms`.
    fn defer_sql(&mut self, actor: ActorId, name: &'static str, params: &Params, until_unix_ms: i64) {
        let rec = self.actors.get_mut(&actor).expect("present");
        rec.slot.borrow_mut().request = Some(Request::Sql { name, params: params.clone() });
        self.schedule(actor, until_unix_ms);
    }

    /// The trace row of one statement.
    fn record_sql(&self, t_ms: i64, meta: &ActorMeta, name: &str, rows: String, state_after: String, detail: String) {
        let row = TraceRow {
            t_ms,
            actor: meta.name.clone(),
            session: meta.session_id.clone(),
            event: "sql".to_string(),
            statement: name.to_string(),
            rows,
            state_after,
            detail,
        };
        self.runtime.record(row);
    }

    /// Runs one statement for `actor`, with the faults and oracles around it. `None` when a
    /// fault crashed the actor's session (before or right after) or froze it first.
    fn perform_sql(
        &mut self,
        actor: ActorId,
        name: &'static str,
        params: &Params,
    ) -> Result<Option<std::result::Result<SqlOutcome, SqlFailure>>> {
        let meta = self.actors[&actor].meta.clone();
        let now_ms = self.runtime.now_ms();
        let is_write = self.db.is_write(name);
        let action = self.faults.before_statement(&meta.name, name, is_write, now_ms);
        match action {
            faults::Action::None | faults::Action::CrashAfter => {}
            faults::Action::CrashBefore => {
                self.crash_session(&meta.session_id, &format!("{} crashed before `{name}`", meta.name));
                return Ok(None);
            }
            faults::Action::HangBefore { ms } => {
                // The statement runs when the hang is over: the same request waits.
                let victims = self.session_actors(&meta.session_id);
                self.hang_actors(&victims, ms, &format!("{} (before `{name}`)", meta.name), &meta.session_id);
                let until = self.actors[&actor].hung_until_unix_ms.expect("just hung");
                self.defer_sql(actor, name, params, until);
                return Ok(None);
            }
        }
        // Lock contention in virtual time: a write waits for the lock up to the busy timeout
        // (its request runs again at the release), beyond it SQLite answers SQLITE_BUSY.
        if is_write {
            let now_unix_ms = self.runtime.clock.now_unix_ms();
            if now_unix_ms < self.lock_free_unix_ms {
                let wait_ms = self.lock_free_unix_ms - now_unix_ms;
                if wait_ms <= self.faults.busy_timeout_ms {
                    self.contention.lock_waits += 1;
                    self.contention.lock_wait_ms_total += wait_ms;
                    self.defer_sql(actor, name, params, self.lock_free_unix_ms);
                    return Ok(None);
                }
                self.contention.busy_errors += 1;
                let message = format!("database is locked (simulated SQLITE_BUSY after {} ms)", self.faults.busy_timeout_ms);
                self.record_sql(now_ms, &meta, name, "busy".to_string(), String::new(), message.clone());
                return Ok(Some(Err(SqlFailure { statement: name, message })));
            }
            let hold_ms = self.faults.write_hold_ms();
            self.lock_free_unix_ms = now_unix_ms + hold_ms;
        }
        let task_id = params
            .iter()
            .find(|(p, _)| *p == ":task_id")
            .and_then(|(_, v)| if let rusqlite::types::Value::Text(t) = v { Some(t.clone()) } else { None })
            .unwrap_or_else(|| meta.task_id.clone());
        let outcome = self.db.execute_observed(name, params, &task_id);
        let role = if meta.name == "conductor" {
            Role::Conductor
        } else if meta.name.contains("watcher") {
            Role::Watcher
        } else {
            Role::Musician
        };
        let mut fact = SqlFact {
            t_ms: now_ms,
            actor: meta.name.clone(),
            role,
            session_id: meta.session_id.clone(),
            statement: name.to_string(),
            task_id,
            readonly: !is_write,
            rows_affected: 0,
            before: None,
            after: None,
            message: None,
            failure: None,
            polled: Vec::new(),
        };
        let (rows, state_after, result) = match outcome {
            Ok((outcome, observed)) => {
                let rows = if outcome.readonly { outcome.rows.len() } else { outcome.rows_affected };
                fact.rows_affected = outcome.rows_affected;
                if name == "poll_tasks" {
                    fact.polled = (0..outcome.rows.len())
                        .map(|r| {
                            (
                                outcome.text(r, 0).unwrap_or("").to_string(),
                                outcome.text(r, 1).unwrap_or("").to_string(),
                                outcome.real(r, 3).unwrap_or(0.0),
                            )
                        })
                        .collect();
                }
                let state_after = observed.after.as_ref().map(|a| a.state.clone()).unwrap_or_default();
                fact.before = observed.before;
                fact.after = observed.after;
                fact.message = observed.message;
                (rows.to_string(), state_after, Ok(outcome))
            }
            Err(e) if is_sqlite_runtime_error(&e) => {
                fact.failure = Some(e.to_string());
                ("error".to_string(), String::new(), Err(SqlFailure { statement: name, message: e.to_string() }))
            }
            Err(e) => {
                // I/O trouble is the machine's, not the protocol's: name the file, and what
                // usually causes it.
                let hint = match e.sqlite_error_code() {
                    Some(rusqlite::ErrorCode::DiskFull | rusqlite::ErrorCode::SystemIoFailure | rusqlite::ErrorCode::CannotOpen) => {
                        format!(" on {} (is the disk full or the folder not writable?)", self.db.path().display())
                    }
                    _ => String::new(),
                };
                return Err(Error::harness(format!("statement `{name}` for {}: {e}{hint}", meta.name)));
            }
        };
        let detail = match &result {
            Ok(_) => describe_params(params),
            Err(f) => format!("{}; {}", f.message, describe_params(params)),
        };
        self.record_sql(now_ms, &meta, name, rows, state_after, detail);
        self.checker.on_sql(&fact);
        if action == faults::Action::CrashAfter {
            self.crash_session(&meta.session_id, &format!("{} crashed after `{name}`", meta.name));
            return Ok(None);
        }
        Ok(Some(result))
    }

    fn perform_file(&mut self, actor: ActorId, path: &str, text: &str, append: bool) -> Result<Response> {
        // The run's files live in memory while it lasts and reach the disk once, at its end
        // (`flush_files`): only the simulated sessions touch them meanwhile, and opening a
        // file per status line was a tenth of a run's cost (issue 7).
        if append {
            self.files.entry(path.to_string()).or_default().push_str(text);
        } else {
            self.files.insert(path.to_string(), text.to_string());
        }
        let meta = &self.actors[&actor].meta;
        let first_line = text.lines().next().unwrap_or("").to_string();
        let row = TraceRow {
            t_ms: self.runtime.now_ms(),
            actor: meta.name.clone(),
            session: meta.session_id.clone(),
            event: if append { "file_append" } else { "file_write" }.to_string(),
            statement: path.to_string(),
            rows: text.lines().count().to_string(),
            detail: first_line,
            ..TraceRow::default()
        };
        self.runtime.record(row);
        Ok(Response::FileWritten)
    }

    fn perform_read(&mut self, actor: ActorId, path: &str) -> Result<Response> {
        let content = self.files.get(path).cloned();
        let meta = &self.actors[&actor].meta;
        let row = TraceRow {
            t_ms: self.runtime.now_ms(),
            actor: meta.name.clone(),
            session: meta.session_id.clone(),
            event: "file_read".to_string(),
            statement: path.to_string(),
            rows: content.as_ref().map_or("missing".to_string(), |c| c.lines().count().to_string()),
            ..TraceRow::default()
        };
        self.runtime.record(row);
        Ok(Response::File(content))
    }

    fn schedule_next(&mut self, actor: ActorId) {
        let now = self.runtime.clock.now_unix_ms();
        let rec = self.actors.get_mut(&actor).expect("present");
        let join_on: Vec<ActorId> = {
            let slot = rec.slot.borrow();
            let request =
                slot.request.as_ref().unwrap_or_else(|| panic!("{} awaited something that is not an engine request", rec.meta.name));
            match request {
                Request::JoinAny { actors } => actors.clone(),
                Request::Sleep { ms } => {
                    let ms = *ms;
                    let name = rec.meta.name.clone();
                    drop(slot);
                    let jitter_ms = self.faults.jitter_ms(&name, now - self.config.epoch_unix_ms);
                    self.schedule(actor, now + ms + jitter_ms);
                    return;
                }
                // Every other request is a tool call: it takes a statement round trip.
                _ => {
                    drop(slot);
                    let delay_ms = self.config.statement_ms.sample(&mut rec.latency_rng);
                    self.schedule(actor, now + delay_ms);
                    return;
                }
            }
        };
        if join_on.iter().any(|a| !self.actors.contains_key(a)) {
            self.schedule(actor, now);
            return;
        }
        // Park: a new token marks this wait; the first child to finish wakes it, later ones
        // find the token changed and do nothing.
        let rec = self.actors.get_mut(&actor).expect("present");
        rec.token += 1;
        let token = rec.token;
        for child in join_on {
            self.actors.get_mut(&child).expect("alive").joiners.push((actor, token));
        }
    }

    fn schedule(&mut self, actor: ActorId, at_unix_ms: i64) {
        let rec = self.actors.get_mut(&actor).expect("present");
        rec.token += 1;
        self.seq += 1;
        self.queue.insert((at_unix_ms, self.seq), Scheduled::Actor(actor, rec.token));
    }

    /// Removes an actor, and with it every descendant: when a session ends or dies, its
    /// watchers and subagents end with it (000 "Heartbeat Refresh": "If the session crashes,
    /// the watcher dies with it").
    fn finish(&mut self, actor: ActorId, how: &str) {
        let rec = self.actors.remove(&actor).expect("present");
        let is_session = crate::faults::place(&rec.meta.name).is_some_and(|p| !p.watcher) && rec.meta.name.split('.').count() == 2;
        if is_session && how == "exit" {
            self.runtime.facts.borrow_mut().push(Fact::Ended { t_ms: self.runtime.now_ms(), session_id: rec.meta.session_id.clone() });
        }
        for child in &rec.children {
            if self.actors.contains_key(child) {
                self.finish(*child, "killed_with_parent");
            }
        }
        self.runtime.record(TraceRow {
            t_ms: self.runtime.now_ms(),
            actor: rec.meta.name.clone(),
            session: rec.meta.session_id.clone(),
            event: how.to_string(),
            ..TraceRow::default()
        });
        let now = self.runtime.clock.now_unix_ms();
        for (joiner, token) in rec.joiners {
            if self.actors.get(&joiner).is_some_and(|j| j.token == token) {
                self.schedule(joiner, now);
            }
        }
    }

    /// Applies spawns and kills that actors asked for while they ran.
    fn drain_requests(&mut self) {
        loop {
            let spawns: Vec<Spawn> = self.runtime.spawns.borrow_mut().drain(..).collect();
            let kills: Vec<ActorId> = self.runtime.kills.borrow_mut().drain(..).collect();
            if spawns.is_empty() && kills.is_empty() {
                return;
            }
            let now = self.runtime.clock.now_unix_ms();
            for spawn in spawns {
                let latency_rng = rng::stream(self.config.seed, &format!("{}#latency", spawn.meta.name));
                let rec = ActorRec {
                    meta: spawn.meta,
                    future: spawn.future,
                    slot: spawn.slot,
                    token: 0,
                    latency_rng,
                    joiners: Vec::new(),
                    children: Vec::new(),
                    hung_until_unix_ms: None,
                };
                assert!(self.actors.insert(spawn.id, rec).is_none(), "actor id reused");
                match spawn.parent.and_then(|parent| self.actors.get_mut(&parent)) {
                    Some(parent) => parent.children.push(spawn.id),
                    None => assert!(spawn.parent.is_none(), "a child spawned by an actor that is gone"),
                }
                self.schedule(spawn.id, now + spawn.delay_ms);
            }
            for victim in kills {
                if self.actors.contains_key(&victim) {
                    self.finish(victim, "killed");
                }
            }
        }
    }
}

/// Errors SQLite reports while running a statement (constraints, busy, …) are the protocol's
/// business; anything else (misuse, I/O) is the harness's.
fn is_sqlite_runtime_error(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, rusqlite::ErrorCode::ConstraintViolation | rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// `key=value` pairs for the trace's detail column; message bodies are cut to their first line.
fn describe_params(params: &Params) -> String {
    let mut parts = Vec::with_capacity(params.len());
    for (name, value) in params {
        let shown = match value {
            rusqlite::types::Value::Text(t) => t.lines().next().unwrap_or("").to_string(),
            rusqlite::types::Value::Integer(i) => i.to_string(),
            rusqlite::types::Value::Real(r) => r.to_string(),
            rusqlite::types::Value::Null => "NULL".to_string(),
            rusqlite::types::Value::Blob(b) => format!("<{} bytes>", b.len()),
        };
        parts.push(format!("{}={}", name.trim_start_matches(':'), shown));
    }
    parts.join(" ")
}
