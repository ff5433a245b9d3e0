//! `Ctx`: the only door from an actor to the world (ARCHITECTURE.md, invariant "one request per event").
//!
//! Every method that touches SQLite or time returns a future that hands one request to the
//! engine and resolves when the engine has performed it. Spawning, killing and trace notes
//! are queued for the engine to apply after the actor yields.

use std::cell::{RefCell, RefMut};
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use rusqlite::types::Value;

use crate::actors::lease::{self, Lease};
use crate::base::clock::SimClock;
use crate::base::dist::Dist;
use crate::base::rng;
use crate::plan::faults::ActorFaults;
use crate::vocab::{ActorName, Stmt};
use crate::world::db::{Params, SqlOutcome};
use crate::world::event::{Event, EventKind, EventLog, Fact, Who};
use crate::world::executor::{ActorId, Await, Request, Response, Slot, Spawner};
use crate::world::{ActorInfo, Effect, FailureKind, Reply, SqlFailure};

/// Who an actor is: its name, its task and the session id it writes as.
#[derive(Clone, Debug)]
pub struct ActorMeta {
    pub name: ActorName,
    /// The task row this actor works on (`task-00` for the conductor).
    pub task_id: String,
    /// The session id it writes as (`CLAUDE_SESSION_ID`).
    pub session_id: String,
}

/// What every `Ctx` of a run shares: the seed, the clock, the spawner, the event log and the
/// faults that reach actors' decisions. Actors read it; the engine acts on it.
pub struct Runtime {
    pub seed: u64,
    pub clock: SimClock,
    pub epoch_unix_ms: i64,
    pub spawner: Rc<Spawner<ActorInfo, Effect, Reply>>,
    pub events: Rc<EventLog>,
    pub actor_faults: ActorFaults,
    /// Variant `retry-failed-reads` (issue 28): `sql` tries a read that failed with
    /// SQLITE_IOERR again instead of handing the failure to the actor (docs/protocol.md C43).
    pub retry_failed_reads: bool,
    /// Variant `conductor-busy-backoff` (issue 43, docs/protocol.md C62): `sql` retries the
    /// conductor's SQLITE_BUSY with backoff for as long as it takes.
    pub conductor_busy_backoff: bool,
}

impl Runtime {
    pub fn now_ms(&self) -> i64 {
        self.clock.now_unix_ms() - self.epoch_unix_ms
    }
}

type ActorSlot = Rc<RefCell<Slot<Effect, Reply>>>;

pub struct Ctx {
    id: ActorId,
    meta: ActorMeta,
    /// `meta.session_id`, shared by the world's actor record and every event this actor emits.
    session: Arc<str>,
    slot: ActorSlot,
    runtime: Rc<Runtime>,
    rng: RefCell<ChaCha8Rng>,
    /// Variant `lease-self-check`: the lease of the session this actor belongs to.
    lease: RefCell<Option<Rc<Lease>>>,
}

impl Ctx {
    /// Queues a new actor for the engine; its random streams come from (seed, name).
    pub fn queue_spawn<F, Fut>(runtime: &Rc<Runtime>, parent: Option<ActorId>, meta: ActorMeta, delay_ms: i64, make: F) -> ActorId
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + 'static,
    {
        let name = meta.name.to_string();
        let session: Arc<str> = Arc::from(meta.session_id.as_str());
        let info = ActorInfo {
            name: meta.name,
            task_id: meta.task_id.clone(),
            session_id: session.clone(),
            latency_rng: rng::stream(runtime.seed, &format!("{name}#latency")),
        };
        let rng = RefCell::new(rng::stream(runtime.seed, &name));
        let shared = runtime.clone();
        runtime.spawner.spawn(parent, info, delay_ms, move |id, slot| {
            make(Ctx { id, meta, session, slot, runtime: shared, rng, lease: RefCell::new(None) })
        })
    }

    /// Every await of an actor passes here. Under `lease-self-check` the session's lease is
    /// checked before the request goes out and again when its answer comes back (the first
    /// instant after a hang included), so an actor acts only inside its session's lease.
    async fn request(&self, request: Request<Effect>) -> Response<Reply> {
        // A statement's answer is checked in `sql`, once its write has renewed or released
        // the lease.
        let statement = matches!(request, Request::Effect(Effect::Sql { .. }));
        if self.holds_lease() {
            self.keep_lease().await;
        }
        let response = Await::new(self.slot.clone(), request).await;
        if !statement && self.holds_lease() {
            self.keep_lease().await;
        }
        response
    }

    /// This actor's id (a session's `Lease::root`).
    pub fn id(&self) -> ActorId {
        self.id
    }

    /// Variant `lease-self-check`: this actor acts for the session holding `lease`.
    pub fn hold_lease(&self, lease: Rc<Lease>) {
        *self.lease.borrow_mut() = Some(lease);
    }

    /// The lease this actor acts under, if any (a watcher's or subagent's is its session's).
    pub fn lease(&self) -> Option<Rc<Lease>> {
        self.lease.borrow().clone()
    }

    /// `lease-self-check`: when the session's lease ends, as comms.db writes its time
    /// (`datetime('now')` with milliseconds), for a write the store must refuse past it; NULL
    /// without a lease.
    pub fn lease_until(&self) -> Value {
        match self.lease().and_then(|lease| lease.until_ms()) {
            Some(until_ms) => Value::Text(crate::base::clock::format_utc_ms(self.runtime.epoch_unix_ms + until_ms)),
            None => Value::Null,
        }
    }

    /// Whether this actor acts under a lease (`lease-self-check`): without one `keep_lease`
    /// has nothing to do, and every request of a run without the variant asks only this (its
    /// future, made and polled twice a request, was ~0.3 % of fleet-day's run).
    fn holds_lease(&self) -> bool {
        self.lease.borrow().is_some()
    }

    /// Keeps the session inside its lease (sim/actors/lease.rs): a heartbeat first when one is
    /// due by the session's own clock, and when the lease has expired the whole session ends
    /// at once, writing nothing.
    async fn keep_lease(&self) {
        let Some(lease) = self.lease() else { return };
        match lease.check(self.now_ms()) {
            lease::Check::Held => {}
            lease::Check::RefreshDue { age_ms } => self.refresh_lease(&lease, age_ms).await,
            lease::Check::Expired(why) => self.end_session(&lease, "lease_expired", why).await,
        }
    }

    /// A heartbeat before the request, which renews the lease (`renew_lease`). Under fencing
    /// one that changes no row says another session holds the task: the session ends. A
    /// refused one (BUSY, an I/O error) leaves the lease as it was, for the next check.
    async fn refresh_lease(&self, lease: &Rc<Lease>, age_ms: i64) {
        self.note("lease_refresh", format!("heartbeat {:.1} s old by the session's clock: a heartbeat first", age_ms as f64 / 1000.0));
        lease.set_refreshing(true);
        let heartbeat = crate::vocab::statement::args::heartbeat(&self.meta.task_id, &self.meta.session_id);
        // Boxed: the heartbeat's own request passes `keep_lease` again (which the refreshing
        // mark lets through).
        let outcome = Box::pin(self.call(heartbeat)).await;
        lease.set_refreshing(false);
        if outcome.is_ok_and(|o| o.rows_affected == 0) {
            let why = format!("the lease's heartbeat changed no row: another session owns {}", self.meta.task_id);
            self.end_session(lease, "fenced_out", why).await;
        }
    }

    /// Ends the whole session at once, writing nothing: a note says why, the truth that the
    /// session ended at this instant, and the session's main actor stops with its watchers
    /// and subagents (`Lease::root`). This future never resolves; the executor drops it with
    /// the actor when the poll is over.
    async fn end_session(&self, lease: &Lease, what: &'static str, why: String) {
        self.note(what, why);
        self.observe(Fact::Ended { session_id: self.meta.session_id.clone() });
        self.runtime.spawner.kill(lease.root);
        std::future::pending::<()>().await;
    }

    async fn effect(&self, effect: Effect) -> Reply {
        match self.request(Request::Effect(effect)).await {
            Response::Effect(reply) => reply,
            _ => unreachable!("an effect is answered with a reply"),
        }
    }

    pub fn meta(&self) -> &ActorMeta {
        &self.meta
    }

    /// Simulated milliseconds since the run's epoch.
    pub fn now_ms(&self) -> i64 {
        self.runtime.now_ms()
    }

    /// Simulated UTC time, `YYYY-MM-DD HH:MM:SS`, as SQLite's `datetime('now')` shows it.
    pub fn now_utc(&self) -> String {
        crate::base::clock::format_utc_ms(self.runtime.clock.now_unix_ms())[..19].to_string()
    }

    /// This actor's own random stream, derived from (seed, actor name).
    pub fn rng(&self) -> RefMut<'_, ChaCha8Rng> {
        self.rng.borrow_mut()
    }

    pub fn draw(&self, dist: &Dist) -> i64 {
        dist.sample(&mut *self.rng())
    }

    /// Runs a typed call of the statement table (`statement::args::heartbeat(task_id,
    /// session_id)`) as `sql` runs its statement: the same parameters, in the same order.
    /// The parameters are made before the future is: the call itself (its arguments inline)
    /// is not kept in the actor's state while the statement runs.
    pub fn call(&self, call: crate::vocab::statement::Call<'_>) -> impl Future<Output = Result<SqlOutcome, SqlFailure>> + '_ {
        let params = crate::world::db::typed::params_of(&call);
        self.sql(call.stmt, params)
    }

    /// Runs one named protocol statement at the instant the engine schedules it.
    /// SQLITE_BUSY is retried up to 3 times, a second apart, as a tool layer would; under the
    /// variant `retry-failed-reads` so is a read that failed with SQLITE_IOERR. Other
    /// failures go back to the actor (docs/protocol.md C13, C43). Under the variant
    /// `conductor-busy-backoff` the conductor's BUSY is retried for as long as it takes, 1 s,
    /// 2 s, 4 s, … at most 60 s apart (C62).
    pub async fn sql(&self, stmt: Stmt, params: Params) -> Result<SqlOutcome, SqlFailure> {
        // Variant `conductor-busy-backoff` (C62): the conductor does not give up on BUSY.
        let backoff = self.runtime.conductor_busy_backoff && self.meta().name.is_conductor();
        const IO_RETRIES: u32 = 3;
        let retries: u32 = if backoff { u32::MAX } else { 3 };
        // The world hands the parameters back with a failure that may be retried: no copy is
        // kept per attempt.
        let retry_reads = self.runtime.retry_failed_reads && !stmt.writes();
        let mut params = params;
        let issued_ms = self.now_ms();
        for attempt in 0..=retries {
            match self.effect(Effect::Sql { stmt, params }).await {
                Reply::Sql(result) => {
                    self.renew_lease(stmt, issued_ms, &result);
                    if self.holds_lease() {
                        self.keep_lease().await;
                    }
                    return result;
                }
                Reply::SqlRefused { failure, params: back } if attempt < retries && failure.kind == FailureKind::Busy => {
                    self.note("busy_retry", format!("`{stmt}` attempt {}", attempt + 1));
                    let sleep_ms = if backoff { (1_000_i64 << attempt.min(6)).min(60_000) } else { 1_000 };
                    self.sleep(sleep_ms).await;
                    params = back;
                }
                Reply::SqlRefused { failure, params: back }
                    if attempt < IO_RETRIES && failure.kind == FailureKind::IoError && retry_reads =>
                {
                    // A read changed nothing: trying it again is safe, whatever the disk did
                    // (000 "Pause Watcher" 4: "Wait 10 seconds, repeat from step 1").
                    self.note("io_retry", format!("`{stmt}` attempt {}: {}", attempt + 1, failure.message));
                    self.sleep(1_000).await;
                    params = back;
                }
                Reply::SqlRefused { failure, .. } => {
                    if self.holds_lease() {
                        self.keep_lease().await;
                    }
                    return Err(failure);
                }
                _ => unreachable!("a SQL request is answered with a SQL response"),
            }
        }
        unreachable!("the last attempt returns")
    }

    /// `lease-self-check`: a heartbeat write that changed its row renews the lease from the
    /// instant it was issued (the write ran at or after it).
    fn renew_lease(&self, stmt: Stmt, issued_ms: i64, result: &Result<SqlOutcome, SqlFailure>) {
        let Some(lease) = self.lease() else { return };
        if !result.as_ref().is_ok_and(|outcome| outcome.rows_affected > 0) {
            return;
        }
        if lease::ends_hold(stmt) {
            lease.release();
        } else if lease::refreshes_heartbeat(stmt) {
            lease.renew(issued_ms);
        }
    }

    /// Simulated work or waiting: nothing in the world changes for this actor meanwhile.
    pub async fn sleep(&self, ms: i64) {
        assert!(ms >= 0, "sleep of {ms} ms");
        let response = self.request(Request::Sleep { ms }).await;
        assert!(matches!(response, Response::Woke));
    }

    /// Waits until `actor` has finished (or was killed).
    pub async fn join(&self, actor: ActorId) {
        self.join_any(vec![actor]).await;
    }

    /// Waits until the first of `actors` has finished (or was killed); returns which.
    pub async fn join_any(&self, actors: Vec<ActorId>) -> ActorId {
        assert!(!actors.is_empty());
        match self.request(Request::JoinAny { actors, timeout_ms: None }).await {
            Response::Joined(actor) => actor,
            _ => unreachable!("a join is answered with a join"),
        }
    }

    /// Waits until the first of `actors` has finished (or was killed), but at most `ms`:
    /// `Some(which)`, or `None` when the time ran out first.
    pub async fn join_any_for(&self, actors: Vec<ActorId>, ms: i64) -> Option<ActorId> {
        assert!(!actors.is_empty() && ms >= 0);
        match self.request(Request::JoinAny { actors, timeout_ms: Some(ms) }).await {
            Response::Joined(actor) => Some(actor),
            Response::Woke => None,
            _ => unreachable!("a join is answered with a join or a timeout"),
        }
    }

    /// Appends to a file below the run folder (temp/ files are append-only logs).
    pub async fn append_file(&self, path: &str, text: &str) {
        let reply = self.effect(Effect::AppendFile { path: path.to_string(), text: text.to_string() }).await;
        assert!(matches!(reply, Reply::FileWritten));
    }

    /// Replaces a file below the run folder (the HANDOFF document).
    pub async fn write_file(&self, path: &str, text: &str) {
        let reply = self.effect(Effect::WriteFile { path: path.to_string(), text: text.to_string() }).await;
        assert!(matches!(reply, Reply::FileWritten));
    }

    /// Reads a file below the run folder; `None` if it does not exist.
    pub async fn read_file(&self, path: &str) -> Option<String> {
        match self.effect(Effect::ReadFile { path: path.to_string() }).await {
            Reply::File(content) => content,
            _ => unreachable!("a read is answered with a file"),
        }
    }

    /// Starts a child actor (a watcher, a subagent) after `delay_ms`. It dies with this one,
    /// and acts under this one's lease (`lease-self-check`): it is the same session.
    pub fn spawn_child<F, Fut>(&self, meta: ActorMeta, delay_ms: i64, make: F) -> ActorId
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + 'static,
    {
        let lease = self.lease();
        Ctx::queue_spawn(&self.runtime, Some(self.id), meta, delay_ms, move |ctx| {
            if let Some(lease) = lease {
                ctx.hold_lease(lease);
            }
            make(ctx)
        })
    }

    /// Launches an independent process (a musician session) after `delay_ms`: it outlives
    /// the launcher.
    pub fn launch<F, Fut>(&self, meta: ActorMeta, delay_ms: i64, make: F) -> ActorId
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + 'static,
    {
        Ctx::queue_spawn(&self.runtime, None, meta, delay_ms, make)
    }

    /// Stops another actor at once (TaskStop of a watcher): its future is dropped.
    pub fn kill(&self, actor: ActorId) {
        self.runtime.spawner.kill(actor);
    }

    fn emit(&self, kind: EventKind) {
        self.runtime.events.push(Event { t_ms: self.now_ms(), who: Who::Actor(self.meta.name), session: self.session.clone(), kind });
    }

    /// Tells the oracles a fact that is not a database effect (a launch, a message handled,
    /// a staleness decision). Facts never reach other actors.
    pub fn observe(&self, fact: Fact) {
        self.emit(EventKind::Truth(fact));
    }

    /// A trace row for a protocol decision that is not a database effect.
    pub fn note(&self, what: &'static str, detail: impl Into<String>) {
        self.emit(EventKind::Note { what: std::borrow::Cow::Borrowed(what), detail: detail.into() });
    }

    /// Fault: the extra context a subagent's result costs, if the plan's spike odds hit it
    /// (drawn from this actor's own stream); noted in the trace as a fault.
    pub fn context_spike_pct(&self) -> Option<i64> {
        let spike = self.runtime.actor_faults.context_spike_pct(self.now_ms(), &mut self.rng())?;
        self.note("fault_context_spike", format!("+{spike}% context"));
        Some(spike)
    }

    /// Fault: the delay of the twin of task `task`'s first session, if it is double-launched.
    pub fn twin_after_ms(&self, task: u64) -> Option<i64> {
        self.runtime.actor_faults.twin_after_ms(task)
    }

    /// Fault: whether session `session` of task `task` starts without a session id.
    pub fn session_id_missing(&self, task: u64, session: u32) -> bool {
        self.runtime.actor_faults.session_id_missing(task, session)
    }

    /// Fault `early_stop` (docs/protocol.md C141): whether this session tries to end its turn
    /// now that it has integrated `agents_done` agents; noted in the trace as a fault.
    pub fn stops_early(&self, agents_done: u64) -> bool {
        let Some(place) = self.meta.name.place() else { return false };
        let stops = self.runtime.actor_faults.stops_early(place.task, place.session, agents_done);
        if stops {
            self.note("fault_early_stop", format!("the session ends its turn after {agents_done} agents, before its terminal write"));
        }
        stops
    }

    /// A UUID-shaped id drawn from the stream named `name`: how a launched session gets its
    /// `CLAUDE_SESSION_ID` reproducibly, before it starts (the SessionStart hook, seed 000).
    pub fn derive_uuid(&self, name: &str) -> String {
        use rand::Rng;
        let mut stream = rng::stream(self.runtime.seed, &format!("{name}#uuid"));
        let (a, b) = (stream.next_u64(), stream.next_u64());
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0x0fff,
            0x8000 | ((b >> 48) & 0x3fff),
            b & 0xffff_ffff_ffff
        )
    }
}
