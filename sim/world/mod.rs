//! The world: what actors' effects do. It runs protocol statements against `comms.db` with
//! the lock model and the fault plan around them, keeps the sessions' files, and applies the
//! timed faults. Every effect it performs becomes one typed event (sim/world/event.rs).
//!
//! **Architecture Invariant:** faults are applied here, never by actors: a crash drops every
//! future of the session; a hang defers its events without touching tokens; a scripted fault
//! fires at a statement boundary, so "between state and message" is exact. A hang after a
//! statement holds its result until the hang is over: the session's next step waits for it.

pub mod catch_up;
pub mod db;
pub mod db_pool;
pub mod event;
pub mod executor;
pub mod read_replay;
pub mod receipt;
pub mod recorder;
pub mod run_folder;
pub mod write_lock;

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use rusqlite::types::Value;

use crate::base::dist::Dist;
use crate::base::error::{Error, Result};
use crate::plan::faults::{FaultPlan, Strike, Timed};
use crate::vocab::{ActorName, FaultKind, Stmt, When, Whose, CONDUCTOR_SESSION_ID};
use crate::world::db::{CommsDb, Params, SqlOutcome};
use crate::world::event::{ActorEnd, Event, EventKind, EventLog, Fact, FileOp, ParamsText, SqlEvent, SqlResult, Who};
use crate::world::executor::{ActorId, Executor, Finished, Request};

/// Who an actor is, as the executor carries it for the world.
#[derive(Clone, Debug)]
pub struct ActorInfo {
    /// Unique and stable across runs; it also names the actor's random streams.
    pub name: ActorName,
    /// The task row this actor works on (`task-00` for the conductor).
    pub task_id: String,
    /// The session id it writes as (`CLAUDE_SESSION_ID`), shared with every event it causes.
    pub session_id: Arc<str>,
    /// Draws the world makes on the actor's behalf (statement latency), kept apart from the
    /// actor's own stream so protocol choices do not shift them.
    pub latency_rng: ChaCha8Rng,
}

/// An effect an actor asks of the world.
pub enum Effect {
    Sql {
        stmt: Stmt,
        params: Params,
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

/// Why a statement failed, as the actor sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// The virtual write lock was held past the busy timeout (simulated SQLITE_BUSY).
    Busy,
    /// SQLite refused it (a CHECK or other constraint).
    Constraint,
    /// A real lock error from SQLite (not the virtual lock model). One connection holds the
    /// file exclusively, so it does not happen; it is kept apart from `Busy`, which is retried.
    Locked,
    /// The session's own guard refused to write a row it no longer owns (fencing variant).
    FencedOut,
    /// SQLITE_IOERR, of a scripted `io_error` fault (the disk failed the statement).
    IoError,
    /// An error the caller's own code catches and ignores (fault `poll_error`,
    /// docs/protocol.md C71): the conductor's tick ends there and the next one comes.
    Swallowed,
}

/// What SQLite says on SQLITE_IOERR, and that the simulator made it.
const IO_ERROR_MESSAGE: &str = "disk I/O error (simulated SQLITE_IOERR, fault io_error)";

/// A statement that did not do its work. The actor decides what follows.
#[derive(Clone, Debug)]
pub struct SqlFailure {
    pub stmt: Stmt,
    pub kind: FailureKind,
    pub message: String,
}

impl SqlFailure {
    /// A session's own guard found the row (or the message's row) named another session
    /// (docs/protocol.md D11): the session has lost the task.
    pub fn fenced_out(stmt: Stmt) -> SqlFailure {
        SqlFailure::refused(stmt, "fenced out: the task row belongs to another session".to_string())
    }

    /// A session's own guard refused its write for `why`: it stops as at a fenced write.
    pub fn refused(stmt: Stmt, why: String) -> SqlFailure {
        SqlFailure { stmt, kind: FailureKind::FencedOut, message: why }
    }
}

pub enum Reply {
    Sql(std::result::Result<SqlOutcome, SqlFailure>),
    /// A failure the actor may try again (SQLITE_BUSY; SQLITE_IOERR, for a read under
    /// `retry-failed-reads`), with the statement's parameters handed back for the retry, so
    /// the actor does not keep a copy of every statement's parameters in case one fails.
    SqlRefused {
        failure: SqlFailure,
        params: Params,
    },
    FileWritten,
    File(Option<String>),
}

pub type Exec = Executor<ActorInfo, Effect, Reply>;

pub use crate::world::write_lock::Contention;
use crate::world::write_lock::{Grant, Waiter};

pub struct World {
    db: CommsDb,
    faults: FaultPlan,
    events: Rc<EventLog>,
    epoch_unix_ms: i64,
    /// Round trip of one statement through a session's tool call.
    statement_ms: Dist,
    /// The files sessions wrote (path under the run folder → content), flushed at the end.
    files: BTreeMap<String, String>,
    /// The virtual write lock: free from this instant (docs/protocol.md C13, docs/calibration.md).
    lock: crate::world::write_lock::WriteLock,
    /// Writes sleeping in SQLite's busy handler, by actor: their statement and where they are
    /// in its schedule (sim/world/write_lock.rs).
    waiters: BTreeMap<ActorId, (Stmt, Waiter)>,
    /// The statement each actor last got SQLITE_BUSY on, until one of its writes takes the
    /// lock: a BUSY on the same statement is the tool layer's retry of the same write.
    busy_chain: BTreeMap<ActorId, Stmt>,
    /// Results of statements a hang `after:` froze their session on, handed over when the
    /// actor wakes at the hang's end (its request comes back then, and is not run again).
    held: BTreeMap<ActorId, SqlReply>,
    /// `Some` while recording every statement's reply for runs forked from this one
    /// (sim/world/catch_up.rs).
    playback: Option<catch_up::Playback>,
    /// `Some` while answering statements from a base run's record, up to its snapshot.
    catch_up: Option<catch_up::CatchUp>,
}

/// What ends a run whose statements parted from its base run's before the snapshot it was
/// to start from (sim/world/catch_up.rs): its explorer makes it again the old way.
pub const PARTED: &str = "the run parted from its base run before the snapshot it was forked at";

type SqlReply = std::result::Result<SqlOutcome, SqlFailure>;

/// A statement that has run, with what a fault after it may still need.
struct After {
    name: ActorName,
    stmt: Stmt,
    params: Params,
    reply: SqlReply,
}

/// Which statement an event is of: when, by whom, in which session.
struct Statement<'a> {
    now_ms: i64,
    name: ActorName,
    session_id: &'a Arc<str>,
    stmt: Stmt,
}

/// What the virtual write lock says to a write.
enum WriteLock {
    /// Free: the write goes ahead and holds it.
    Taken,
    /// Held: the request tries again at this instant.
    RetryAt(i64),
    /// The busy handler gave up: SQLITE_BUSY with this message.
    Busy(String),
}

impl World {
    pub fn new(db: CommsDb, faults: FaultPlan, events: Rc<EventLog>, epoch_unix_ms: i64, statement_ms: Dist) -> World {
        let mut lock = crate::world::write_lock::WriteLock::new(faults.lock_model);
        lock.sleep_scale = faults.busy_sleep_scale;
        World {
            db,
            faults,
            events,
            epoch_unix_ms,
            statement_ms,
            files: BTreeMap::new(),
            lock,
            waiters: BTreeMap::new(),
            busy_chain: BTreeMap::new(),
            held: BTreeMap::new(),
            playback: None,
            catch_up: None,
        }
    }

    /// Records every statement's reply from now on, for runs forked from this one.
    pub fn record_playback(&mut self) {
        self.playback = Some(catch_up::Playback::default());
    }

    /// The replies recorded so far (`record_playback`).
    pub fn playback(&self) -> Option<&catch_up::Playback> {
        self.playback.as_ref()
    }

    pub fn take_playback(&mut self) -> Option<catch_up::Playback> {
        self.playback.take()
    }

    /// Answers statements from a base run's record (`catch_up`) until `caught_up`.
    pub fn catch_up(&mut self, catch_up: catch_up::CatchUp) {
        self.catch_up = Some(catch_up);
    }

    /// Ends answering from the record: the statements it answered. The database must then
    /// be the base run's at that statement (`db_mut`).
    pub fn caught_up(&mut self) -> Option<usize> {
        self.catch_up.take().map(|c| c.answered())
    }

    pub fn is_catching_up(&self) -> bool {
        self.catch_up.is_some()
    }

    /// The run's database, for a snapshot to be taken or restored.
    pub fn db_mut(&mut self) -> &mut CommsDb {
        &mut self.db
    }

    pub fn faults(&self) -> &FaultPlan {
        &self.faults
    }

    pub fn into_parts(self) -> (CommsDb, BTreeMap<String, String>) {
        (self.db, self.files)
    }

    fn now_ms(&self, exec: &Exec) -> i64 {
        exec.now_unix_ms() - self.epoch_unix_ms
    }

    fn emit(&self, t_ms: i64, who: Who, session: impl Into<Arc<str>>, kind: EventKind) {
        self.events.push(Event { t_ms, who, session: session.into(), kind });
    }

    /// Performs one effect for `actor`. `None` when the actor gets no reply now: a fault
    /// crashed its session or froze it, or the statement waits for the write lock.
    pub fn perform(&mut self, exec: &mut Exec, actor: ActorId, effect: Effect) -> Result<Option<Reply>> {
        // Held results are rare (a hang after a statement): most effects skip the map search.
        if !self.held.is_empty() {
            if let Some(reply) = self.held.remove(&actor) {
                return Ok(Some(Reply::Sql(reply)));
            }
        }
        match effect {
            Effect::Sql { stmt, params } => self.perform_sql(exec, actor, stmt, params),
            Effect::AppendFile { path, text } => Ok(Some(self.write_file(exec, actor, path, text, FileOp::Append))),
            Effect::WriteFile { path, text } => Ok(Some(self.write_file(exec, actor, path, text, FileOp::Write))),
            Effect::ReadFile { path } => Ok(Some(self.read_file(exec, actor, path))),
        }
    }

    /// How long an effect's round trip takes, drawn from the actor's latency stream.
    pub fn effect_latency_ms(&self, exec: &mut Exec, actor: ActorId) -> i64 {
        let info = exec.data_mut(actor).expect("present");
        self.statement_ms.sample(&mut info.latency_rng)
    }

    /// Extra time a sleep of `sleep_ms` takes (watcher jitter), told to the oracles as a fact
    /// so a latency can be attributed to it from the trace.
    pub fn sleep_jitter_ms(&mut self, exec: &Exec, actor: ActorId, sleep_ms: i64) -> i64 {
        let info = exec.data(actor).expect("present");
        let name = info.name;
        let now_ms = self.now_ms(exec);
        let jitter_ms = self.faults.jitter_ms(&name, now_ms);
        if jitter_ms > 0 {
            // The session id is shared only when a fact is told (most sleeps have no jitter).
            let session_id = info.session_id.clone();
            let fact = Fact::SleepJittered { session_id: String::from(&*session_id), sleep_ms, jitter_ms };
            self.emit(now_ms, Who::Actor(name), session_id, EventKind::Truth(fact));
        }
        jitter_ms
    }

    fn perform_sql(&mut self, exec: &mut Exec, actor: ActorId, stmt: Stmt, params: Params) -> Result<Option<Reply>> {
        // Every statement passes here: the session id is shared with the event (no copy); the task
        // id is moved out of the parameters once they are done with, and copied only when the
        // statement names none or a hang keeps the parameters for later.
        let info = exec.data(actor).expect("present");
        let (name, session_id) = (info.name, info.session_id.clone());
        let now_ms = self.now_ms(exec);
        // A write trying the lock again in the busy handler is the same statement: its faults
        // were decided at its first try (docs/protocol.md C60).
        let waiter = self.waiters.remove(&actor).filter(|(waiting, _)| *waiting == stmt).map(|(_, waiter)| waiter);
        let strike = if waiter.is_some() { None } else { self.faults.before_statement(&name, stmt, now_ms) };
        let (before, after) = before_and_after(strike);
        match before {
            None => {}
            Some(FaultKind::Crash) => {
                self.crash_session(exec, &session_id, &format!("{name} crashed before `{stmt}`"));
                return Ok(None);
            }
            Some(FaultKind::Hang { ms }) => {
                // The statement runs when the hang is over: the same request waits.
                let victims = exec.actors_where(|a| *a.session_id == *session_id);
                self.hang(exec, &victims, ms, &format!("{name} (before `{stmt}`)"), &session_id);
                let until = exec.hung_until_unix_ms(actor).expect("just hung");
                exec.defer(actor, Request::Effect(Effect::Sql { stmt, params }), until);
                return Ok(None);
            }
            Some(FaultKind::IoError) => {
                // The statement does not run: the trace shows it failed, as a refused one.
                let own_task = task_of(&params).unwrap_or_else(|| exec.data(actor).expect("present").task_id.as_str()).to_string();
                let (result, params_text) =
                    (SqlResult::SqliteError(IO_ERROR_MESSAGE.to_string()), ParamsText::Text(describe_params(stmt, &params)));
                self.emit_sql(now_ms, name, session_id, stmt, own_task, result, Default::default(), params_text);
                return Ok(Some(Reply::SqlRefused { failure: io_failure(stmt), params }));
            }
            Some(FaultKind::AmbiguousCommit) => unreachable!("validated: an ambiguous commit strikes after its statement"),
        }
        if let Some(reply) = self.fleet_fault(exec, actor, stmt, &params) {
            return Ok(Some(reply));
        }
        if stmt.writes() {
            match self.take_write_lock(exec, actor, stmt, waiter) {
                WriteLock::Taken => {}
                WriteLock::RetryAt(retry_unix_ms) => {
                    exec.defer(actor, Request::Effect(Effect::Sql { stmt, params }), retry_unix_ms);
                    return Ok(None);
                }
                WriteLock::Busy(message) => {
                    let own_task = exec.data(actor).expect("present").task_id.clone();
                    let params_text = ParamsText::Text(describe_params(stmt, &params));
                    self.emit_sql(
                        now_ms,
                        name,
                        session_id,
                        stmt,
                        own_task,
                        SqlResult::Busy(message.clone()),
                        Default::default(),
                        params_text,
                    );
                    // The parameters go back with the failure: the actor's retry binds them again.
                    let failure = SqlFailure { stmt, kind: FailureKind::Busy, message };
                    return Ok(Some(Reply::SqlRefused { failure, params }));
                }
            }
        }
        let (result, reply) = {
            let task_id = task_of(&params).unwrap_or_else(|| exec.data(actor).expect("present").task_id.as_str());
            if self.db.records_history() && stmt.writes() {
                self.db.set_writer(&session_id).map_err(|e| Error::harness(format!("naming the writer of `{stmt}`: {e}")))?;
            }
            match self.execute(stmt, &params, task_id, &name)? {
                Ok((outcome, observed)) => {
                    let rows = if outcome.readonly { outcome.rows.len() } else { outcome.rows_affected };
                    let observed = Observed { rows_affected: outcome.rows_affected, ..observed };
                    ((SqlResult::Rows(rows), observed), Ok(outcome))
                }
                Err((kind, message)) => {
                    let result = match kind {
                        FailureKind::Constraint => SqlResult::Failed(message.clone()),
                        _ => SqlResult::SqliteError(message.clone()),
                    };
                    ((result, Observed::default()), Err(SqlFailure { stmt, kind, message }))
                }
            }
        };
        let mut params = params;
        let at = Statement { now_ms, name, session_id: &session_id, stmt };
        self.statement_event(exec, actor, at, &mut params, after.is_some(), result);
        self.acknowledge_receipt(now_ms, name, &session_id, stmt, &reply);
        let (after, held) = (after, After { name, stmt, params, reply });
        self.after_statement(exec, actor, &session_id, after, held)
    }

    /// The statement's event. A hang after the statement keeps the parameters for the request
    /// it defers (`after_fault`); otherwise the event takes the task id out of them. A run
    /// catching up drops its events unread (sim/world/catch_up.rs): its event is counted, not made.
    fn statement_event(
        &self,
        exec: &Exec,
        actor: ActorId,
        at: Statement<'_>,
        params: &mut Params,
        after_fault: bool,
        result: (SqlResult, Observed),
    ) {
        if self.events.dropping() {
            self.events.count_dropped();
            return;
        }
        let task_id = task_of(params).unwrap_or_else(|| exec.data(actor).expect("present").task_id.as_str()).to_string();
        // The event takes the parameters, and the trace writer makes their text
        // (`ParamsText::Bound`), unless a fault after the statement keeps them for the request
        // it defers or the answer it refuses.
        let params_text = if after_fault {
            ParamsText::Text(describe_params(at.stmt, params))
        } else {
            ParamsText::Bound(at.stmt, std::mem::take(params))
        };
        self.emit_sql(at.now_ms, at.name, at.session_id.clone(), at.stmt, task_id, result.0, result.1, params_text);
    }

    /// `durable-cursor` (issue 28, sim/world/receipt.rs): the messages a committed receipt
    /// returned are handled by its session at this instant, before any fault after the
    /// statement strikes, so the session's durable acknowledgement and the oracle's record of
    /// it are one event. A receipt that returns no readable array is the musician's to report.
    fn acknowledge_receipt(&self, now_ms: i64, name: ActorName, session_id: &Arc<str>, stmt: Stmt, reply: &SqlReply) {
        let Ok(outcome) = reply else { return };
        if stmt != Stmt::SendReceipt {
            return;
        }
        for (message_id, _, _) in receipt::received(outcome).unwrap_or_default() {
            let fact = Fact::MessageHandled { session_id: session_id.to_string(), message_id };
            self.emit(now_ms, Who::Actor(name), session_id.clone(), EventKind::Truth(fact));
        }
    }

    /// What a fault placed after a statement does once the statement has run (and its row is
    /// in the trace): a crash ends the session, a hang holds the answer until it is over, an
    /// I/O error loses the answer.
    fn after_statement(
        &mut self,
        exec: &mut Exec,
        actor: ActorId,
        session_id: &str,
        after: Option<FaultKind>,
        held: After,
    ) -> Result<Option<Reply>> {
        let After { name, stmt, params, reply } = held;
        match after {
            Some(FaultKind::Crash) => {
                self.crash_session(exec, session_id, &format!("{name} crashed after `{stmt}`"));
                Ok(None)
            }
            Some(FaultKind::Hang { ms }) => {
                let victims = exec.actors_where(|a| *a.session_id == *session_id);
                self.hang(exec, &victims, ms, &format!("{name} (after `{stmt}`)"), session_id);
                let until = exec.hung_until_unix_ms(actor).expect("just hung");
                self.held.insert(actor, reply);
                exec.defer(actor, Request::Effect(Effect::Sql { stmt, params }), until);
                Ok(None)
            }
            // The statement ran (the trace shows what it did); its answer is lost.
            Some(FaultKind::IoError) => Ok(Some(Reply::SqlRefused { failure: io_failure(stmt), params })),
            Some(FaultKind::AmbiguousCommit) => {
                // docs/protocol.md C70: the statement committed (the trace shows it), its
                // caller was told it failed, and its tool layer runs it again a second later,
                // blindly, with the same parameters; the session sees that run's answer only.
                let now_ms = self.now_ms(exec);
                let detail = format!("`{stmt}` committed, reported as failed; retried blindly in {AMBIGUOUS_RETRY_MS} ms");
                self.emit(now_ms, Who::Actor(name), session_id, EventKind::Note { what: "ambiguous_commit".into(), detail });
                let fact = Fact::BlindRetry { session_id: session_id.to_string(), statement: stmt.to_string() };
                self.emit(now_ms, Who::Actor(name), session_id, EventKind::Truth(fact));
                exec.defer(actor, Request::Effect(Effect::Sql { stmt, params }), exec.now_unix_ms() + AMBIGUOUS_RETRY_MS);
                Ok(None)
            }
            None => Ok(Some(Reply::Sql(reply))),
        }
    }

    /// Lock contention in virtual time (sim/world/write_lock.rs): a write that finds the lock
    /// held tries again on the busy handler's schedule (or at the release, `lock_model =
    /// "queue"`); when the handler gives up SQLite answers SQLITE_BUSY.
    fn take_write_lock(&mut self, exec: &Exec, actor: ActorId, stmt: Stmt, waiter: Option<Waiter>) -> WriteLock {
        let timeout_ms = self.faults.busy_timeout_ms;
        match self.lock.request(exec.now_unix_ms(), waiter, timeout_ms, || self.faults.write_hold_ms()) {
            Grant::Taken => {
                self.busy_chain.remove(&actor);
                WriteLock::Taken
            }
            Grant::RetryAt(retry_unix_ms, waiter) => {
                self.waiters.insert(actor, (stmt, waiter));
                WriteLock::RetryAt(retry_unix_ms)
            }
            Grant::Busy => {
                if self.busy_chain.insert(actor, stmt) != Some(stmt) {
                    self.lock.contention.busy_writes += 1;
                }
                WriteLock::Busy(format!("database is locked (simulated SQLITE_BUSY after {timeout_ms} ms)"))
            }
        }
    }

    /// What the write lock has counted.
    pub fn contention(&self) -> Contention {
        self.lock.contention
    }

    /// Runs the statement. What SQLite refuses while running it (a constraint, a lock) is the
    /// protocol's business (`Err`); anything else (I/O, misuse) is the harness's.
    #[allow(clippy::type_complexity)]
    fn execute(
        &mut self,
        stmt: Stmt,
        params: &Params,
        task_id: &str,
        name: &ActorName,
    ) -> Result<std::result::Result<(SqlOutcome, Observed), (FailureKind, String)>> {
        let catching_up = self.catch_up.is_some();
        let played = match &mut self.catch_up {
            Some(catch_up) => catch_up.answer(stmt, params, self.db.clock().now_unix_ms()).ok_or_else(|| Error::harness(PARTED))?,
            None => self.run_statement(stmt, params, task_id, name)?,
        };
        Ok(played.map(|(outcome, observed)| {
            // Only for the event, which a run catching up drops.
            let polled = if stmt == Stmt::PollTasks && !catching_up { polled_rows(&outcome) } else { Vec::new() };
            let observed = Observed {
                before: observed.before,
                after: observed.after,
                message: observed.message,
                more_messages: observed.more_messages,
                other_rows: observed.other_rows,
                polled,
                rows_affected: 0,
            };
            (outcome, observed)
        }))
    }

    /// Runs one statement on the database: its answer with what was observed around it, or
    /// the protocol failure it met (recorded for runs forked from this one, `record_playback`).
    fn run_statement(&mut self, stmt: Stmt, params: &Params, task_id: &str, name: &ActorName) -> Result<catch_up::Played> {
        let at_unix_ms = self.db.clock().now_unix_ms();
        let executed = self.db.execute_observed(stmt, params, task_id);
        // Recording (calibrate): the statement recorded is this actor's.
        if let Some(last) = self.db.recorded.as_mut().and_then(|r| r.last_mut()).filter(|r| r.actor.is_empty()) {
            last.actor = name.to_string();
        }
        let played = match executed {
            Ok(answer) => Ok(answer),
            Err(e) => match protocol_failure(&e) {
                Some(kind) => Err((kind, e.to_string())),
                None => return Err(self.harness_error(stmt, name, &e)),
            },
        };
        if let Some(playback) = &mut self.playback {
            playback.push(stmt, params, at_unix_ms, &played);
        }
        Ok(played)
    }

    /// I/O trouble is the machine's, not the protocol's: name the file, and what usually
    /// causes it.
    fn harness_error(&self, stmt: Stmt, name: &ActorName, e: &rusqlite::Error) -> Error {
        // The user's SQL that does not end is theirs to fix, not the machine's.
        if let Some(message) = self.db.steps_spent(stmt, e).or_else(|| self.db.bytes_spent(stmt, e)) {
            return Error::input(format!("{message} (run by {name})"));
        }
        let hint = match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DiskFull | rusqlite::ErrorCode::SystemIoFailure | rusqlite::ErrorCode::CannotOpen) => {
                format!(" on {} (is the disk full or the folder not writable?)", self.db.path().display())
            }
            _ => String::new(),
        };
        Error::harness(format!("statement `{stmt}` for {name}: {e}{hint}"))
    }

    #[allow(clippy::too_many_arguments)]
    fn emit_sql(
        &self,
        t_ms: i64,
        name: ActorName,
        session: Arc<str>,
        stmt: Stmt,
        task_id: String,
        result: SqlResult,
        observed: Observed,
        params_text: ParamsText,
    ) {
        let event = SqlEvent {
            stmt,
            task_id,
            result,
            rows_affected: observed.rows_affected,
            before: observed.before,
            after: observed.after,
            message: observed.message,
            more_messages: observed.more_messages,
            other_rows: observed.other_rows,
            polled: observed.polled,
            params_text,
        };
        self.events.push(Event { t_ms, who: Who::Actor(name), session, kind: EventKind::Sql(Box::new(event)) });
    }

    fn write_file(&mut self, exec: &Exec, actor: ActorId, path: String, text: String, op: FileOp) -> Reply {
        // The run's files live in memory while it lasts and reach the disk once, at its end
        // (`flush_files`): only the simulated sessions touch them meanwhile, and opening a
        // file per status line was a tenth of a run's cost (issue 7).
        // A run catching up drops its events unread (sim/world/catch_up.rs): nothing of the
        // text is described for it.
        let described = (!self.events.dropping()).then(|| (path.clone(), line_count(&text), first_line(&text).to_string()));
        match op {
            FileOp::Append => self.files.entry(path).or_default().push_str(&text),
            _ => {
                self.files.insert(path, text);
            }
        }
        let Some((path, lines, first_line)) = described else {
            self.events.count_dropped();
            return Reply::FileWritten;
        };
        let info = exec.data(actor).expect("present");
        self.emit(
            self.now_ms(exec),
            Who::Actor(info.name),
            info.session_id.clone(),
            EventKind::File { op, path, lines: Some(lines), first_line },
        );
        Reply::FileWritten
    }

    fn read_file(&mut self, exec: &Exec, actor: ActorId, path: String) -> Reply {
        let content = self.files.get(&path).cloned();
        let info = exec.data(actor).expect("present");
        let lines = content.as_deref().map(line_count);
        self.emit(
            self.now_ms(exec),
            Who::Actor(info.name),
            info.session_id.clone(),
            EventKind::File { op: FileOp::Read, path, lines, first_line: String::new() },
        );
        Reply::File(content)
    }

    /// Emits the ends of actors that left the executor: `direct` for the ones it removed on
    /// purpose, `KilledWithParent` for their children. A session that returned has `Ended`.
    pub fn emit_finished(&self, exec: &Exec, finished: &mut Vec<Finished<ActorInfo>>, direct: ActorEnd) {
        let t_ms = self.now_ms(exec);
        for f in finished.drain(..) {
            let how = if f.with_parent { ActorEnd::KilledWithParent } else { direct };
            self.emit(t_ms, Who::Actor(f.data.name), f.data.session_id.clone(), EventKind::Ended(how));
            if how == ActorEnd::Exit && f.data.name.is_session() {
                self.emit(
                    t_ms,
                    Who::Actor(f.data.name),
                    f.data.session_id.clone(),
                    EventKind::Truth(Fact::Ended { session_id: f.data.session_id.to_string() }),
                );
            }
        }
    }

    /// A crash: every actor of the session is dropped at once; nothing in memory survives.
    fn crash_session(&mut self, exec: &mut Exec, session_id: &str, why: &str) {
        let victims = exec.actors_where(|a| *a.session_id == *session_id);
        if victims.is_empty() {
            return;
        }
        let t_ms = self.now_ms(exec);
        self.emit(t_ms, Who::Engine, session_id, EventKind::FaultCrash { why: why.to_string() });
        let mut finished = Vec::new();
        for victim in victims {
            // A write asleep in the busy handler dies with its session.
            self.waiters.remove(&victim);
            exec.finish(victim, &mut finished);
        }
        self.emit_finished(exec, &mut finished, ActorEnd::Crashed);
        self.emit(
            t_ms,
            Who::Engine,
            session_id,
            EventKind::Truth(Fact::Crashed { session_id: session_id.to_string(), why: why.to_string() }),
        );
    }

    /// A hang: the actors stop for `ms` and then go on as if nothing happened.
    fn hang(&mut self, exec: &mut Exec, victims: &[ActorId], ms: i64, who: &str, session_id: &str) {
        exec.hang(victims, exec.now_unix_ms() + ms);
        let t_ms = self.now_ms(exec);
        self.emit(t_ms, Who::Engine, session_id, EventKind::FaultHang { who: who.to_string(), ms });
        self.emit(t_ms, Who::Engine, session_id, EventKind::Truth(Fact::Hung { session_id: session_id.to_string(), until_ms: t_ms + ms }));
    }

    /// The session id of the live session `task`/`session` (the first launched if twins).
    fn session_of(exec: &Exec, task: u64, session: u32) -> Option<String> {
        exec.find(|a| !a.name.is_watcher() && a.name.place().is_some_and(|p| p.task == task && p.session == session))
            .map(|a| a.session_id.to_string())
    }

    /// Applies the timed fault the executor's alarm `index` stands for.
    pub fn apply_timed_fault(&mut self, exec: &mut Exec, index: usize) {
        let (_, fault) = self.faults.timed[index].clone();
        match fault {
            Timed::Strike { whose: Whose::Session { task, session }, kind: FaultKind::Crash } => {
                if let Some(sid) = Self::session_of(exec, task, session) {
                    self.faults.timed_fired(index);
                    self.crash_session(exec, &sid, &format!("scripted crash of task {task} S{session}"));
                }
            }
            Timed::Strike { whose: Whose::Session { task, session }, kind: FaultKind::Hang { ms } } => {
                if let Some(sid) = Self::session_of(exec, task, session) {
                    self.faults.timed_fired(index);
                    let victims = exec.actors_where(|a| *a.session_id == *sid);
                    self.hang(exec, &victims, ms, &format!("task {task} S{session}"), &sid);
                }
            }
            Timed::WatcherDeath { task, session } => {
                let Some(sid) = Self::session_of(exec, task, session) else { return };
                self.faults.timed_fired(index);
                let watchers = exec.actors_where(|a| *a.session_id == *sid && a.name.is_watcher());
                let mut finished = Vec::new();
                for watcher in watchers {
                    exec.finish(watcher, &mut finished);
                }
                self.emit_finished(exec, &mut finished, ActorEnd::WatcherDeath);
                let t_ms = self.now_ms(exec);
                self.emit(t_ms, Who::Engine, "", EventKind::Truth(Fact::WatcherDied { session_id: sid }));
            }
            Timed::Strike { whose: Whose::Conductor { session }, kind: FaultKind::Crash } => {
                // The conductor session and its reviews share its session id: all die.
                let found = exec.find(|a| a.name.conductor_session() == Some(session)).map(|a| a.session_id.to_string());
                if let Some(sid) = found {
                    self.faults.timed_fired(index);
                    self.crash_session(exec, &sid, &format!("scripted crash of the conductor (session {session})"));
                }
            }
            Timed::ConductorDown { ms } => {
                let conductor = exec.actors_where(|a| a.name.is_conductor());
                if !conductor.is_empty() {
                    self.faults.timed_fired(index);
                }
                // The live conductor session's id (a relaunched conductor has its own).
                let session_id =
                    conductor.first().and_then(|id| exec.data(*id)).map_or(CONDUCTOR_SESSION_ID.to_string(), |a| a.session_id.to_string());
                self.hang(exec, &conductor, ms, "the conductor", &session_id);
            }
            Timed::Strike { whose: Whose::Conductor { .. }, kind: FaultKind::Hang { .. } } => {
                unreachable!("a conductor session's hang is a window of time (`conductor_down`), not a strike")
            }
            Timed::Strike { kind: FaultKind::IoError | FaultKind::AmbiguousCommit, .. } => {
                unreachable!("validated: an I/O error or an ambiguous commit takes a point, not a time")
            }
        }
    }
}

/// A strike as the fault before the statement, or after it.
fn before_and_after(strike: Option<Strike>) -> (Option<FaultKind>, Option<FaultKind>) {
    match strike {
        Some(Strike { when: When::Before, kind }) => (Some(kind), None),
        Some(Strike { when: When::After, kind }) => (None, Some(kind)),
        None => (None, None),
    }
}

/// How long the caller's tool layer waits before its blind retry of an ambiguous commit
/// (docs/protocol.md C70): the busy retry's second (C13).
const AMBIGUOUS_RETRY_MS: i64 = 1_000;

impl World {
    /// Faults `poll_error` (C71) and `dead_heartbeat` (C72), which replace the statement's run:
    /// a conductor's poll in a window fails (the trace shows the error) and its code swallows
    /// it; a dead session's heartbeat changes nothing (the trace shows no row) and the session
    /// is told it changed its row. `None`: the statement runs as usual.
    fn fleet_fault(&mut self, exec: &Exec, actor: ActorId, stmt: Stmt, params: &Params) -> Option<Reply> {
        let info = exec.data(actor).expect("present");
        let (name, session_id) = (info.name, info.session_id.clone());
        let now_ms = self.now_ms(exec);
        let (result, reply, what) = if stmt == Stmt::PollTasks && name.is_conductor() && self.faults.poll_fails(now_ms) {
            let message = "disk I/O error (simulated, fault poll_error: the conductor's code swallows it)".to_string();
            let failure = SqlFailure { stmt, kind: FailureKind::Swallowed, message: message.clone() };
            (SqlResult::SqliteError(message), Reply::SqlRefused { failure, params: Params::default() }, "poll_error")
        } else if stmt == Stmt::Heartbeat && self.faults.heartbeat_dead(&name) {
            let told = SqlOutcome { rows_affected: 1, rows: Default::default(), readonly: false };
            (SqlResult::Rows(0), Reply::Sql(Ok(told)), "dead_heartbeat")
        } else {
            return None;
        };
        let task_id = task_of(params).unwrap_or(info.task_id.as_str()).to_string();
        let params_text = ParamsText::Text(describe_params(stmt, params));
        self.emit_sql(now_ms, name, session_id.clone(), stmt, task_id, result, Default::default(), params_text);
        let detail = match what {
            "poll_error" => "the poll failed; the conductor's code swallows the error and the tick ends".to_string(),
            _ => "the heartbeat changed no row; the session was told it changed one".to_string(),
        };
        self.emit(now_ms, Who::Actor(name), session_id, EventKind::Note { what: what.into(), detail });
        Some(reply)
    }
}

/// The failure a session is answered with when an `io_error` fault strikes `stmt`.
fn io_failure(stmt: Stmt) -> SqlFailure {
    SqlFailure { stmt, kind: FailureKind::IoError, message: IO_ERROR_MESSAGE.to_string() }
}

/// What the harness saw around a statement.
#[derive(Default)]
struct Observed {
    rows_affected: usize,
    before: Option<crate::world::db::RowSnapshot>,
    after: Option<crate::world::db::RowSnapshot>,
    message: Option<(i64, String, String)>,
    more_messages: Vec<(i64, String, String)>,
    other_rows: Vec<String>,
    polled: Vec<(String, String, f64)>,
}

/// The `:task_id` a statement is bound to, if any.
fn task_of(params: &Params) -> Option<&str> {
    params.iter().find(|(p, _)| *p == ":task_id").and_then(|(_, v)| if let Value::Text(t) = v { Some(t.as_str()) } else { None })
}

/// `poll_tasks` rows as (task_id, state, seconds_stale), for the oracles.
fn polled_rows(outcome: &SqlOutcome) -> Vec<(String, String, f64)> {
    (0..outcome.rows.len())
        .map(|r| {
            (outcome.text(r, 0).unwrap_or("").to_string(), outcome.text(r, 1).unwrap_or("").to_string(), outcome.real(r, 3).unwrap_or(0.0))
        })
        .collect()
}

/// Errors SQLite reports while running a statement (constraints, locks) are the protocol's
/// business; anything else (misuse, I/O) is the harness's.
fn protocol_failure(e: &rusqlite::Error) -> Option<FailureKind> {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => match f.code {
            rusqlite::ErrorCode::ConstraintViolation => Some(FailureKind::Constraint),
            rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked => Some(FailureKind::Locked),
            _ => None,
        },
        _ => None,
    }
}

/// `key=value` pairs for the trace's detail column; message bodies are cut to their first line.
/// The parameters of the engine's list (`Stmt::params`); a designer's extra ones
/// (`Stmt::supplied`) are left out, so binding them changes no trace.
pub(crate) fn describe_params(stmt: Stmt, params: &Params) -> String {
    // One string, with room for all but a long first line (no regrowth, no second look at
    // the text), no piece allocated on its own: every statement of a run passes here.
    let room: usize = params.iter().map(|(name, value)| name.len() + 1 + room_for(value)).sum();
    let mut text = String::with_capacity(room);
    describe_params_into(&mut text, stmt, params);
    text
}

/// `describe_params`, appended to `text` (the trace writer's reused buffer).
pub(crate) fn describe_params_into(text: &mut String, stmt: Stmt, params: &Params) {
    use std::fmt::Write as _;
    let mut first = true;
    for (name, value) in params.iter().filter(|(name, _)| stmt.params().contains(name)) {
        if !std::mem::take(&mut first) {
            text.push(' ');
        }
        text.push_str(name.trim_start_matches(':'));
        text.push('=');
        match value {
            Value::Text(t) => text.push_str(first_line(t)),
            Value::Integer(n) => push_i64(text, *n),
            Value::Real(r) => {
                let _ = write!(text, "{r}");
            }
            Value::Null => text.push_str("NULL"),
            Value::Blob(b) => {
                let _ = write!(text, "<{} bytes>", b.len());
            }
        }
    }
}

/// Room for a value as `describe_params` writes it, without searching a text for its first
/// line: a message body's first line is rarely longer than `TEXT_ROOM_MAX`, and reserving a
/// whole body would keep its size in every event.
fn room_for(value: &Value) -> usize {
    const TEXT_ROOM_MAX: usize = 96;
    match value {
        Value::Text(t) => t.len().min(TEXT_ROOM_MAX),
        Value::Integer(_) => 20,
        Value::Real(_) | Value::Blob(_) => 24,
        Value::Null => 4,
    }
}

/// `text.lines().next().unwrap_or("")`, found with one byte search: a line ends at `\n`, and a
/// `\r` just before it belongs to the line ending.
fn first_line(text: &str) -> &str {
    match text.find('\n') {
        Some(end) => text[..end].strip_suffix('\r').unwrap_or(&text[..end]),
        None => text,
    }
}

/// `text.lines().count()` by counting line ends, which the compiler vectorizes: a session's
/// status file is read whole at every resumption and its lines counted for the trace, and
/// `lines()` stepping through it line by line was ~1 % of a fleet-day run (issue 47).
fn line_count(text: &str) -> usize {
    // Counted in a byte per chunk of at most 255 bytes: the compiler compares and adds 16
    // bytes at a time. A `usize` count per byte (`filter().count()`) it did not, and the status
    // files a resumption reads cost ~12 instructions per 16 bytes (0.5 % of fleet-day's run).
    let breaks: usize =
        text.as_bytes().chunks(255).map(|chunk| usize::from(chunk.iter().fold(0_u8, |n, b| n + u8::from(*b == b'\n')))).sum();
    breaks + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// `write!(text, "{n}")` without the formatting machinery (statement ids, counts): the
/// trace's own integer writer.
fn push_i64(text: &mut String, n: i64) {
    text.push_str(crate::base::trace_rows::format_signed(&mut crate::base::trace_rows::itoa_buf(), n));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::SimClock;
    use crate::input::scenario::FaultsSection;
    use crate::input::sql_catalog::Catalog;
    use crate::vocab::SessionPlace;

    const EPOCH_MS: i64 = 1_767_225_600_000; // 2026-01-01 00:00:00 UTC

    struct Bench {
        _dir: tempfile::TempDir,
        exec: Exec,
        world: World,
        events: Rc<EventLog>,
    }

    impl Bench {
        fn new(faults: &str) -> Bench {
            let dir = tempfile::tempdir().unwrap();
            let clock = SimClock::new(EPOCH_MS);
            let db = CommsDb::create(&dir.path().join("comms.db"), clock.clone(), 1, Catalog::default_protocol()).unwrap();
            let faults: FaultsSection = toml::from_str(faults).unwrap();
            let events = Rc::new(EventLog::default());
            let world = World::new(db, FaultPlan::new(1, &faults), events.clone(), EPOCH_MS, Dist::Const(0));
            Bench { _dir: dir, exec: Exec::new(clock, 1_000), world, events }
        }

        /// An idle actor of `task`/`session` (or the conductor) with its own session id.
        fn actor(&mut self, name: ActorName, session_id: &str) -> ActorId {
            let info =
                ActorInfo { name, task_id: "task-01".into(), session_id: session_id.into(), latency_rng: crate::base::rng::stream(1, "x") };
            let id = self.exec.spawner().spawn(None, info, 0, |_, _| async {});
            self.exec.apply_spawns_and_kills(&mut Vec::new());
            id
        }

        fn sql(&mut self, actor: ActorId, stmt: Stmt, params: Params) -> Option<std::result::Result<SqlOutcome, SqlFailure>> {
            match self.world.perform(&mut self.exec, actor, Effect::Sql { stmt, params }).unwrap() {
                Some(Reply::Sql(result)) => Some(result),
                Some(Reply::SqlRefused { failure, .. }) => Some(Err(failure)),
                None => None,
                _ => panic!("a SQL effect is answered with SQL"),
            }
        }

        fn drain(&self) -> Vec<Event> {
            let mut out = Vec::new();
            self.events.drain_into(&mut out);
            out
        }
    }

    fn text(s: &str) -> Value {
        Value::Text(s.to_string())
    }

    fn musician() -> ActorName {
        ActorName::Session(SessionPlace { task: 1, session: 1, twin: false })
    }

    fn create_task(b: &mut Bench, conductor: ActorId) {
        let params = vec![(":task_id", text("task-01")), (":instruction_path", text("docs/task-01.md"))];
        assert_eq!(b.sql(conductor, Stmt::CreateTask, params).unwrap().unwrap().rows_affected, 1);
    }

    #[test]
    fn a_write_emits_one_sql_event_with_the_row_before_and_after() {
        let mut b = Bench::new("");
        let conductor = b.actor(ActorName::CONDUCTOR, "conductor-session");
        create_task(&mut b, conductor);
        let params = vec![(":task_id", text("task-01")), (":state", text("fix_proposed"))];
        b.sql(conductor, Stmt::SetTaskState, params).unwrap().unwrap();
        let events = b.drain();
        assert_eq!(events.len(), 2);
        let EventKind::Sql(sql) = &events[1].kind else { panic!("{:?}", events[1]) };
        assert_eq!((sql.stmt, sql.result.clone(), sql.rows_affected), (Stmt::SetTaskState, SqlResult::Rows(1), 1));
        assert_eq!(sql.before.as_ref().map(|r| r.state.as_str()), Some("watching"));
        assert_eq!(sql.after.as_ref().map(|r| r.state.as_str()), Some("fix_proposed"));
        assert_eq!(sql.params_text.render(), "task_id=task-01 state=fix_proposed");
    }

    #[test]
    fn a_read_sees_no_row_snapshots_and_a_constraint_failure_goes_back_to_the_actor() {
        let mut b = Bench::new("");
        let conductor = b.actor(ActorName::CONDUCTOR, "conductor-session");
        create_task(&mut b, conductor);
        let rows = b.sql(conductor, Stmt::PollTasks, vec![]).unwrap().unwrap();
        assert_eq!(rows.rows.len(), 1);
        let bad = vec![(":task_id", text("task-01")), (":state", text("sleeping"))];
        let failure = b.sql(conductor, Stmt::SetTaskState, bad).unwrap().unwrap_err();
        assert_eq!(failure.kind, FailureKind::Constraint);
        let events = b.drain();
        let EventKind::Sql(poll) = &events[1].kind else { panic!() };
        assert!(poll.before.is_none() && poll.after.is_none() && poll.polled.len() == 1);
        let EventKind::Sql(refused) = &events[2].kind else { panic!() };
        assert!(matches!(&refused.result, SqlResult::Failed(m) if m.contains("CHECK")), "{:?}", refused.result);
    }

    #[test]
    fn a_write_that_finds_the_lock_held_sleeps_in_the_busy_handler_and_without_a_timeout_gets_busy() {
        let mut b = Bench::new("write_hold_ms = 3000\nbusy_timeout_ms = 5000\n");
        let conductor = b.actor(ActorName::CONDUCTOR, "conductor-session");
        let other = b.actor(ActorName::CONDUCTOR, "conductor-session");
        create_task(&mut b, conductor);
        assert!(b.sql(other, Stmt::ConductorHeartbeat, vec![]).is_none(), "deferred to its next try");
        let now_ms = b.world.now_ms(&b.exec);
        let waiter = Waiter { first_try_ms: b.exec.now_unix_ms(), busy_count: 1 };
        assert_eq!(b.world.waiters.get(&other), Some(&(Stmt::ConductorHeartbeat, waiter)), "at {now_ms}");
        // Counted when it takes the lock, not while it sleeps.
        assert_eq!(b.world.contention(), Contention::default());
        assert!(b.world.busy_chain.is_empty());
        // SQLite with a busy timeout of 0 has no busy handler: SQLITE_BUSY at once.
        let mut b = Bench::new("write_hold_ms = 9000\nbusy_timeout_ms = 0\n");
        let conductor = b.actor(ActorName::CONDUCTOR, "conductor-session");
        create_task(&mut b, conductor);
        let failure = b.sql(conductor, Stmt::ConductorHeartbeat, vec![]).unwrap().unwrap_err();
        assert_eq!(failure.kind, FailureKind::Busy);
        assert_eq!((b.world.contention().busy_errors, b.world.contention().busy_writes), (1, 1));
        let events = b.drain();
        assert!(matches!(&events.last().unwrap().kind, EventKind::Sql(s) if matches!(s.result, SqlResult::Busy(_))));
    }

    #[test]
    fn a_crash_before_a_statement_drops_the_whole_session_and_says_so() {
        let mut b = Bench::new("[[crash]]\ntask = 1\nat = \"before:heartbeat\"\n");
        let session = b.actor(musician(), "s1");
        let watcher = b.actor(musician().watcher(crate::vocab::WatcherKind::Background, 1), "s1");
        let bystander = b.actor(ActorName::CONDUCTOR, "conductor-session");
        let params = vec![(":task_id", text("task-01")), (":session_id", text("s1"))];
        assert!(b.sql(watcher, Stmt::Heartbeat, params).is_none());
        assert!(b.exec.data(session).is_none() && b.exec.data(watcher).is_none());
        assert!(b.exec.data(bystander).is_some());
        let kinds: Vec<String> =
            b.drain().iter().map(|e| format!("{:?}", e.kind).split([' ', '(', '{']).next().unwrap().to_string()).collect();
        assert_eq!(kinds, ["FaultCrash", "Ended", "Ended", "Truth"]);
    }

    #[test]
    fn a_hang_after_a_statement_runs_it_then_freezes_the_session_and_holds_its_result() {
        let mut b = Bench::new("[[hang]]\ntask = 1\nat = \"after:heartbeat\"\nduration_ms = 7000\n");
        let session = b.actor(musician(), "s1");
        let watcher = b.actor(musician().watcher(crate::vocab::WatcherKind::Background, 1), "s1");
        let params = vec![(":task_id", text("task-01")), (":session_id", text("s1"))];
        assert!(b.sql(watcher, Stmt::Heartbeat, params.clone()).is_none(), "the result waits for the hang's end");
        let until = EPOCH_MS + 7000;
        assert_eq!((b.exec.hung_until_unix_ms(session), b.exec.hung_until_unix_ms(watcher)), (Some(until), Some(until)));
        let kinds: Vec<String> =
            b.drain().iter().map(|e| format!("{:?}", e.kind).split([' ', '(', '{']).next().unwrap().to_string()).collect();
        assert_eq!(kinds, ["Sql", "FaultHang", "Truth"], "the statement ran before the hang");
        assert!(matches!(b.exec.take_request(watcher), Some(Request::Effect(Effect::Sql { stmt: Stmt::Heartbeat, .. }))));
        // Woken at the hang's end with its request: the held result, the statement not run again.
        assert!(matches!(b.sql(watcher, Stmt::Heartbeat, params), Some(Ok(_))));
        assert!(b.drain().is_empty(), "no second run of the statement");
    }

    #[test]
    fn a_conductor_crash_ends_the_conductor_and_its_reviews_but_not_the_musicians_it_launched() {
        let mut b = Bench::new("[[conductor_crash]]\nat_ms = 10\n");
        let conductor = b.actor(ActorName::CONDUCTOR, "conductor-session");
        let review = b.actor(ActorName::Review(1, 1), "conductor-session");
        let musician = b.actor(musician(), "s1");
        b.world.apply_timed_fault(&mut b.exec, 0);
        assert!(b.exec.data(conductor).is_none() && b.exec.data(review).is_none());
        assert!(b.exec.data(musician).is_some());
        let events = b.drain();
        assert!(matches!(&events[0].kind, EventKind::FaultCrash { why } if why == "scripted crash of the conductor (session 1)"));
        assert!(
            matches!(&events.last().unwrap().kind, EventKind::Truth(Fact::Crashed { session_id, .. }) if session_id == "conductor-session")
        );
    }

    #[test]
    fn events_share_the_actors_session_id_instead_of_copying_it() {
        let mut b = Bench::new("");
        let conductor = b.actor(ActorName::CONDUCTOR, "conductor-session");
        create_task(&mut b, conductor);
        let effect = Effect::AppendFile { path: "temp/x".into(), text: "line\n".into() };
        b.world.perform(&mut b.exec, conductor, effect).unwrap();
        let session = b.exec.data(conductor).unwrap().session_id.clone();
        let events = b.drain();
        assert_eq!(events.len(), 2);
        assert!(events.iter().all(|e| Arc::ptr_eq(&e.session, &session)), "{events:?}");
    }

    #[test]
    fn the_first_line_of_a_text_is_what_lines_gives() {
        for text in ["", "one", "one\ntwo", "one\r\ntwo", "\n", "\r\n", "one\r", "a\rb\nc", "\n\nx", "tail\r\n", "x\r\r\ny"] {
            assert_eq!(first_line(text), text.lines().next().unwrap_or(""), "{text:?}");
        }
    }

    #[test]
    fn lines_are_counted_as_lines_counts_them() {
        for text in ["", "one", "one\ntwo", "one\r\ntwo", "\n", "\r\n", "one\r", "a\rb\nc", "\n\nx", "tail\r\n", "x\r\r\ny", "two\n\n"] {
            assert_eq!(line_count(text), text.lines().count(), "{text:?}");
        }
        // Longer than a chunk of 255 bytes, all line ends or some, split anywhere.
        for text in ["\n".repeat(600), "ab\n".repeat(300), format!("{}x", "\n".repeat(255)), format!("{}\n", "y".repeat(254))] {
            assert_eq!(line_count(&text), text.lines().count(), "{} bytes", text.len());
        }
    }

    #[test]
    fn integers_are_written_as_format_writes_them() {
        for n in [0, 7, -7, 10, 99, 100, 1_767_225_600_000, -1_767_225_600_000, i64::MAX, i64::MIN] {
            let mut text = String::from("x=");
            push_i64(&mut text, n);
            assert_eq!(text, format!("x={n}"));
        }
    }

    #[test]
    fn parameters_are_described_in_order_with_first_lines_and_without_extra_ones() {
        let params = vec![
            (":task_id", text("task-01")),
            (":session_id", Value::Null),
            (":message", text("Done.\r\nDetails follow")),
            (":label", text("S1")),
        ];
        assert_eq!(describe_params(Stmt::SendCompletion, &params), "task_id=task-01 session_id=NULL message=Done.");
        let params = vec![(":task_id", text("task-01")), (":last_processed_message_id", Value::Integer(-12))];
        let described = describe_params(Stmt::ReadNewConductorMessages, &params);
        assert_eq!(described, "task_id=task-01 last_processed_message_id=-12");
        let long = "x".repeat(300);
        let params = vec![(":task_id", text("task-01")), (":message", text(&format!("{long}\nrest"))), (":message_type", text("fix"))];
        assert_eq!(describe_params(Stmt::SendConductorMessage, &params), format!("task_id=task-01 message={long} message_type=fix"));
    }

    #[test]
    fn a_busy_write_hands_its_parameters_back_for_the_retry() {
        let mut b = Bench::new("write_hold_ms = 9000\nbusy_timeout_ms = 0\n");
        let conductor = b.actor(ActorName::CONDUCTOR, "conductor-session");
        create_task(&mut b, conductor);
        let params = vec![(":task_id", text("task-01")), (":state", text("fix_proposed"))];
        let effect = Effect::Sql { stmt: Stmt::SetTaskState, params: params.clone() };
        let Some(Reply::SqlRefused { failure, params: back }) = b.world.perform(&mut b.exec, conductor, effect).unwrap() else {
            panic!("busy expected")
        };
        assert_eq!((failure.kind, back), (FailureKind::Busy, params));
        let events = b.drain();
        let EventKind::Sql(busy) = &events.last().unwrap().kind else { panic!() };
        assert_eq!((busy.task_id.as_str(), &*busy.params_text.render()), ("task-01", "task_id=task-01 state=fix_proposed"));
    }

    #[test]
    fn files_live_in_memory_and_reads_see_what_was_appended() {
        let mut b = Bench::new("");
        let session = b.actor(musician(), "s1");
        for line in ["one [ctx: 5%]\n", "two [ctx: 9%]\n"] {
            let effect = Effect::AppendFile { path: "temp/task-01-status".into(), text: line.into() };
            assert!(matches!(b.world.perform(&mut b.exec, session, effect).unwrap(), Some(Reply::FileWritten)));
        }
        let read = Effect::ReadFile { path: "temp/task-01-status".into() };
        let Some(Reply::File(Some(content))) = b.world.perform(&mut b.exec, session, read).unwrap() else { panic!() };
        assert_eq!(content, "one [ctx: 5%]\ntwo [ctx: 9%]\n");
        let missing = Effect::ReadFile { path: "temp/none".into() };
        assert!(matches!(b.world.perform(&mut b.exec, session, missing).unwrap(), Some(Reply::File(None))));
        let events = b.drain();
        assert!(matches!(&events[2].kind, EventKind::File { op: FileOp::Read, lines: Some(2), .. }));
        assert!(matches!(&events[3].kind, EventKind::File { op: FileOp::Read, lines: None, .. }));
    }
}
