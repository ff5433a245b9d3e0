//! `Ctx`: the only door from an actor to the world (DESIGN.md, invariant 5).
//!
//! Every method that touches SQLite or time returns a future that hands one request to the
//! engine and resolves when the engine has performed it. Spawning, killing and trace notes
//! are queued for the engine to apply after the actor yields.

use std::cell::{RefCell, RefMut};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use rand_chacha::ChaCha8Rng;

use crate::db::{Params, SqlOutcome};
use crate::dist::Dist;
use crate::engine::{ActorId, ActorMeta, Request, Response, Runtime, Slot, Spawn, SqlFailure};
use crate::rng;
use crate::trace::TraceRow;

pub struct Ctx {
    id: ActorId,
    meta: ActorMeta,
    slot: Rc<RefCell<Slot>>,
    runtime: Rc<Runtime>,
    rng: RefCell<ChaCha8Rng>,
}

/// Resolves with the engine's response to one request.
struct Effect {
    slot: Rc<RefCell<Slot>>,
    request: Option<Request>,
}

impl Future for Effect {
    type Output = Response;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Response> {
        if let Some(request) = self.request.take() {
            let mut slot = self.slot.borrow_mut();
            assert!(slot.request.is_none(), "two requests in flight from one actor");
            slot.request = Some(request);
            return Poll::Pending;
        }
        let response = self.slot.borrow_mut().response.take();
        Poll::Ready(response.expect("the engine polls an actor only with its response"))
    }
}

impl Ctx {
    pub(crate) fn queue_spawn<F, Fut>(runtime: &Rc<Runtime>, parent: Option<ActorId>, meta: ActorMeta, delay_ms: i64, make: F) -> ActorId
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + 'static,
    {
        assert!(delay_ms >= 0);
        let id = runtime.next_id.get();
        runtime.next_id.set(id + 1);
        let slot = Rc::new(RefCell::new(Slot::default()));
        let ctx = Ctx {
            id,
            meta: meta.clone(),
            slot: slot.clone(),
            runtime: runtime.clone(),
            rng: RefCell::new(rng::stream(runtime.seed, &meta.name)),
        };
        let future = Box::pin(make(ctx));
        runtime.spawns.borrow_mut().push(Spawn { id, parent, meta, delay_ms, slot, future });
        id
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
        crate::clock::format_utc_ms(self.runtime.clock.now_unix_ms())[..19].to_string()
    }

    /// This actor's own random stream, derived from (seed, actor name).
    pub fn rng(&self) -> RefMut<'_, ChaCha8Rng> {
        self.rng.borrow_mut()
    }

    pub fn draw(&self, dist: &Dist) -> i64 {
        dist.sample(&mut *self.rng())
    }

    /// Runs one named protocol statement at the instant the engine schedules it.
    /// SQLITE_BUSY is retried up to 3 times, a second apart, as a tool layer would; other
    /// failures go back to the actor.
    pub async fn sql(&self, name: &'static str, params: Params) -> Result<SqlOutcome, SqlFailure> {
        const BUSY_RETRIES: u32 = 3;
        for attempt in 0..=BUSY_RETRIES {
            let result = match (Effect { slot: self.slot.clone(), request: Some(Request::Sql { name, params: params.clone() }) }).await {
                Response::Sql(result) => result,
                _ => unreachable!("a SQL request is answered with a SQL response"),
            };
            match result {
                Err(failure) if failure.message.contains("SQLITE_BUSY") && attempt < BUSY_RETRIES => {
                    self.note("busy_retry", format!("`{name}` attempt {}", attempt + 1));
                    self.sleep(1_000).await;
                }
                other => return other,
            }
        }
        unreachable!("the last attempt returns")
    }

    /// Simulated work or waiting: nothing in the world changes for this actor meanwhile.
    pub async fn sleep(&self, ms: i64) {
        assert!(ms >= 0, "sleep of {ms} ms");
        let response = (Effect { slot: self.slot.clone(), request: Some(Request::Sleep { ms }) }).await;
        assert!(matches!(response, Response::Woke));
    }

    /// Waits until `actor` has finished (or was killed).
    pub async fn join(&self, actor: ActorId) {
        self.join_any(vec![actor]).await;
    }

    /// Waits until the first of `actors` has finished (or was killed); returns which.
    pub async fn join_any(&self, actors: Vec<ActorId>) -> ActorId {
        assert!(!actors.is_empty());
        match (Effect { slot: self.slot.clone(), request: Some(Request::JoinAny { actors }) }).await {
            Response::Joined(actor) => actor,
            _ => unreachable!("a join is answered with a join"),
        }
    }

    /// Appends to a file below the run folder (temp/ files are append-only logs).
    pub async fn append_file(&self, path: &str, text: &str) {
        let response =
            (Effect { slot: self.slot.clone(), request: Some(Request::AppendFile { path: path.to_string(), text: text.to_string() }) })
                .await;
        assert!(matches!(response, Response::FileWritten));
    }

    /// Replaces a file below the run folder (the HANDOFF document).
    pub async fn write_file(&self, path: &str, text: &str) {
        let response =
            (Effect { slot: self.slot.clone(), request: Some(Request::WriteFile { path: path.to_string(), text: text.to_string() }) })
                .await;
        assert!(matches!(response, Response::FileWritten));
    }

    /// Reads a file below the run folder; `None` if it does not exist.
    pub async fn read_file(&self, path: &str) -> Option<String> {
        match (Effect { slot: self.slot.clone(), request: Some(Request::ReadFile { path: path.to_string() }) }).await {
            Response::File(content) => content,
            _ => unreachable!("a read is answered with a file"),
        }
    }

    /// Starts a child actor (a watcher, a subagent) after `delay_ms`. It dies with this one.
    pub fn spawn_child<F, Fut>(&self, meta: ActorMeta, delay_ms: i64, make: F) -> ActorId
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + 'static,
    {
        Ctx::queue_spawn(&self.runtime, Some(self.id), meta, delay_ms, make)
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
        self.runtime.kills.borrow_mut().push(actor);
    }

    /// Tells the oracles a fact that is not a database effect (a launch, a message handled,
    /// a staleness decision). Facts never reach other actors.
    pub fn observe(&self, fact: crate::oracle::Fact) {
        self.runtime.facts.borrow_mut().push(fact);
    }

    /// A trace row for a protocol decision that is not a database effect.
    pub fn note(&self, event: &str, detail: impl Into<String>) {
        self.runtime.record(TraceRow {
            t_ms: self.now_ms(),
            actor: self.meta.name.clone(),
            session: self.meta.session_id.clone(),
            event: event.to_string(),
            detail: detail.into(),
            ..TraceRow::default()
        });
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
