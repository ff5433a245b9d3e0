//! The executor: actors as suspended futures, one event queue in simulated time, and the
//! lifecycle verbs (spawn, kill, join, hang). It knows nothing of the protocol: what an actor
//! asks for besides sleeping and joining is an opaque effect `E` that the caller performs and
//! answers with a reply `R` (turmoil's `Sim` against its `World`; madsim's task executor).
//!
//! **Architecture Invariant:** between two requests of an actor its whole in-memory state is
//! its suspended future, so dropping the future is exactly a crashed process (ARCHITECTURE.md,
//! invariant "one request per event"), and any interleaving of actors is one queue order away. Events at the same
//! instant run in the order they were scheduled (ties break by insertion sequence).

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use crate::base::clock::SimClock;
use crate::plan::schedule::Schedule;

pub type ActorId = u32;

/// What an actor awaits: a sleep, the end of another actor, or an effect for the caller.
pub enum Request<E> {
    Sleep {
        ms: i64,
    },
    /// Resumes when any of these actors has finished (or at once if one already has); with
    /// a timeout, after that many ms if none has by then (answered `Woke`).
    JoinAny {
        actors: Vec<ActorId>,
        timeout_ms: Option<i64>,
    },
    Effect(E),
}

pub enum Response<R> {
    /// A sleep ended, or a join timed out with every joined actor still running.
    Woke,
    /// The first of the joined actors found finished.
    Joined(ActorId),
    Effect(R),
}

/// The mailbox between one actor's future and the executor.
pub struct Slot<E, R> {
    pub request: Option<Request<E>>,
    pub response: Option<Response<R>>,
}

impl<E, R> Default for Slot<E, R> {
    fn default() -> Self {
        Slot { request: None, response: None }
    }
}

/// Resolves with the executor's response to one request: the only await an actor makes.
pub struct Await<E, R> {
    slot: Rc<RefCell<Slot<E, R>>>,
    request: Option<Request<E>>,
}

impl<E, R> Await<E, R> {
    pub fn new(slot: Rc<RefCell<Slot<E, R>>>, request: Request<E>) -> Self {
        Await { slot, request: Some(request) }
    }
}

impl<E: Unpin, R> Future for Await<E, R> {
    type Output = Response<R>;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Response<R>> {
        if let Some(request) = self.request.take() {
            let mut slot = self.slot.borrow_mut();
            assert!(slot.request.is_none(), "two requests in flight from one actor");
            slot.request = Some(request);
            return Poll::Pending;
        }
        let response = self.slot.borrow_mut().response.take();
        Poll::Ready(response.expect("the executor polls an actor only with its response"))
    }
}

type ActorFuture = Pin<Box<dyn Future<Output = ()>>>;

struct Spawn<A, E, R> {
    id: ActorId,
    parent: Option<ActorId>,
    data: A,
    delay_ms: i64,
    slot: Rc<RefCell<Slot<E, R>>>,
    future: ActorFuture,
}

/// Spawn and kill requests made by running actors, applied by the executor after the poll.
/// Shared with every actor's handle (`Ctx`).
pub struct Spawner<A, E, R> {
    next_id: Cell<ActorId>,
    spawns: RefCell<Vec<Spawn<A, E, R>>>,
    kills: RefCell<Vec<ActorId>>,
}

impl<A, E, R> Default for Spawner<A, E, R> {
    fn default() -> Self {
        Spawner { next_id: Cell::new(0), spawns: RefCell::new(Vec::new()), kills: RefCell::new(Vec::new()) }
    }
}

impl<A, E: 'static, R: 'static> Spawner<A, E, R> {
    /// Queues a new actor; `make` gets its id and slot and returns its future. A child
    /// (`parent` set) dies with its parent; a top-level actor has no parent.
    pub fn spawn<Fut>(
        &self,
        parent: Option<ActorId>,
        data: A,
        delay_ms: i64,
        make: impl FnOnce(ActorId, Rc<RefCell<Slot<E, R>>>) -> Fut,
    ) -> ActorId
    where
        Fut: Future<Output = ()> + 'static,
    {
        assert!(delay_ms >= 0, "spawn delay {delay_ms} ms");
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let slot = Rc::new(RefCell::new(Slot::default()));
        let future = Box::pin(make(id, slot.clone()));
        self.spawns.borrow_mut().push(Spawn { id, parent, data, delay_ms, slot, future });
        id
    }

    /// Whether a spawn or a kill waits to be applied.
    fn asked(&self) -> bool {
        !self.spawns.borrow().is_empty() || !self.kills.borrow().is_empty()
    }

    /// Stops an actor at once (its future is dropped) when the current poll is over.
    pub fn kill(&self, actor: ActorId) {
        self.kills.borrow_mut().push(actor);
    }
}

struct ActorRec<A, E, R> {
    data: A,
    future: ActorFuture,
    slot: Rc<RefCell<Slot<E, R>>>,
    /// Bumped whenever the actor is scheduled; an event with an older token is stale.
    token: u64,
    /// Actors waiting for this one to finish, with the wait token they were parked under.
    joiners: Vec<(ActorId, u64)>,
    children: Vec<ActorId>,
    /// While hung (a fault), the actor's events wait until this instant.
    hung_until_unix_ms: Option<i64>,
}

/// An actor that left the executor, in the order they left.
pub struct Finished<A> {
    pub id: ActorId,
    pub data: A,
    /// True when it ended because its parent ended (a watcher with its session).
    pub with_parent: bool,
}

/// What an entry of the queue wakes: an actor (with the token it was scheduled under) or an
/// alarm the caller set (a timed fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scheduled {
    Actor(ActorId, u64),
    Alarm(usize),
}

/// The next thing to do, as `pop` finds it.
#[derive(Debug, PartialEq, Eq)]
pub enum Popped {
    /// No event is left: every actor has finished.
    Quiescent,
    /// The next event lies beyond the deadline; the clock stands at the deadline.
    TimeLimit,
    /// The event cap was reached: a livelock, not a verdict.
    EventCap,
    Alarm(usize),
    /// The actor's awaited request is due.
    Wake(ActorId),
}

/// What the actor asked for after a poll.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    Finished,
    /// Killed itself (through a kill request) during the poll.
    Gone,
    Sleep(i64),
    Join,
    Effect,
}

/// One entry of the queue: its (instant, sequence) key and what it wakes. The key is one
/// `u128` (the instant, its sign bit flipped, above the sequence), so the heap compares an
/// entry in one comparison, not an instant and then a sequence (the queue's sifting was
/// ~1.2 % of fleet-day's run); it orders as the pair does.
#[derive(Clone, Copy, Debug)]
struct QueueEntry {
    key: u128,
    scheduled: Scheduled,
}

impl QueueEntry {
    fn new(at_unix_ms: i64, seq: u64, scheduled: Scheduled) -> QueueEntry {
        QueueEntry { key: (u128::from(at_unix_ms.cast_unsigned() ^ (1 << 63)) << 64) | u128::from(seq), scheduled }
    }

    fn at_unix_ms(&self) -> i64 {
        (((self.key >> 64) as u64) ^ (1 << 63)).cast_signed()
    }

    fn seq(&self) -> u64 {
        self.key as u64
    }

    /// The (instant, sequence) pair the key orders as.
    fn pair(&self) -> (i64, u64) {
        (self.at_unix_ms(), self.seq())
    }
}

/// Reversed: the standard heap is a max-heap, and the queue pops its earliest key.
impl Ord for QueueEntry {
    fn cmp(&self, other: &QueueEntry) -> Ordering {
        other.key.cmp(&self.key)
    }
}

impl PartialOrd for QueueEntry {
    fn partial_cmp(&self, other: &QueueEntry) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Keys are unique (the sequence is): equal keys are the same entry.
impl PartialEq for QueueEntry {
    fn eq(&self, other: &QueueEntry) -> bool {
        self.key == other.key
    }
}

impl Eq for QueueEntry {}

pub struct Executor<A, E, R> {
    clock: SimClock,
    spawner: Rc<Spawner<A, E, R>>,
    /// Indexed by id: ids are handed out in order and never reused, so a slot per id spared
    /// a map lookup on every step; an actor that left leaves `None`.
    actors: Vec<Option<ActorRec<A, E, R>>>,
    /// Live actors (the `Some` slots of `actors`).
    live: usize,
    /// A min-heap on (instant, sequence): the sequence is unique, so the order is the one a
    /// sorted map of those keys gives (ties at an instant break by scheduling order), at a
    /// fraction of its cost per event.
    queue: BinaryHeap<QueueEntry>,
    seq: u64,
    events: u64,
    events_max: u64,
    /// Chooses among effects ready at the same time (sim/plan/schedule.rs); `None`: queue order.
    schedule: Option<Schedule>,
    /// The non-default choice the last `pop` took, until the caller takes it.
    taken: Option<Taken>,
}

/// A non-default choice at a decision point: which, and the head it ran before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    /// The decision point's index in the run (0-based, as `[schedule] choices` counts).
    pub decision: usize,
    pub option: u32,
    pub options: u32,
    /// The actor whose effect was due first and now waits.
    pub head: ActorId,
}

impl<A, E: 'static, R: 'static> Executor<A, E, R> {
    pub fn new(clock: SimClock, events_max: u64) -> Self {
        Executor {
            clock,
            spawner: Rc::new(Spawner::default()),
            actors: Vec::new(),
            live: 0,
            queue: BinaryHeap::new(),
            seq: 0,
            events: 0,
            events_max,
            schedule: None,
            taken: None,
        }
    }

    /// The non-default choice the last `pop` took, if it took one.
    pub fn take_taken(&mut self) -> Option<Taken> {
        self.taken.take()
    }

    /// Makes the executor meet decision points and take the schedule's choices at them.
    pub fn set_schedule(&mut self, schedule: Schedule) {
        self.schedule = Some(schedule);
    }

    pub fn the_schedule(&self) -> Option<&Schedule> {
        self.schedule.as_ref()
    }

    pub fn spawner(&self) -> Rc<Spawner<A, E, R>> {
        self.spawner.clone()
    }

    pub fn clock(&self) -> &SimClock {
        &self.clock
    }

    pub fn now_unix_ms(&self) -> i64 {
        self.clock.now_unix_ms()
    }

    /// Events popped so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    fn rec(&self, actor: ActorId) -> Option<&ActorRec<A, E, R>> {
        self.actors.get(actor as usize).and_then(Option::as_ref)
    }

    fn rec_mut(&mut self, actor: ActorId) -> Option<&mut ActorRec<A, E, R>> {
        self.actors.get_mut(actor as usize).and_then(Option::as_mut)
    }

    fn is_live(&self, actor: ActorId) -> bool {
        self.rec(actor).is_some()
    }

    /// Live actors with their ids, in id order.
    fn live_actors(&self) -> impl Iterator<Item = (ActorId, &ActorRec<A, E, R>)> {
        self.actors.iter().enumerate().filter_map(|(id, rec)| Some((ActorId::try_from(id).expect("a u32 id"), rec.as_ref()?)))
    }

    pub fn data(&self, actor: ActorId) -> Option<&A> {
        self.rec(actor).map(|a| &a.data)
    }

    pub fn data_mut(&mut self, actor: ActorId) -> Option<&mut A> {
        self.rec_mut(actor).map(|a| &mut a.data)
    }

    /// Live actors whose data satisfies `pick`, in id order.
    pub fn actors_where(&self, pick: impl Fn(&A) -> bool) -> Vec<ActorId> {
        self.live_actors().filter(|(_, a)| pick(&a.data)).map(|(id, _)| id).collect()
    }

    /// The first live actor (in id order) whose data satisfies `pick`.
    pub fn find(&self, pick: impl Fn(&A) -> bool) -> Option<&A> {
        self.live_actors().map(|(_, a)| &a.data).find(|d| pick(d))
    }

    /// Queues `scheduled` at `at_unix_ms`, after everything already queued for that instant.
    fn enqueue(&mut self, at_unix_ms: i64, scheduled: Scheduled) {
        self.seq += 1;
        self.queue.push(QueueEntry::new(at_unix_ms, self.seq, scheduled));
    }

    /// Sets an alarm: `pop` returns `Popped::Alarm(tag)` at that instant.
    pub fn alarm(&mut self, at_unix_ms: i64, tag: usize) {
        self.enqueue(at_unix_ms, Scheduled::Alarm(tag));
    }

    /// Takes the next due event and advances the clock to it. A hung actor's event is put
    /// back at the hang's end with its token unchanged; stale events are skipped.
    pub fn pop(&mut self, deadline_unix_ms: i64) -> Popped {
        loop {
            let Some(&entry) = self.queue.peek() else {
                assert!(
                    self.is_empty(),
                    "an actor is suspended with no event and no join: {:?}",
                    self.live_actors().map(|(id, _)| id).collect::<Vec<_>>()
                );
                return Popped::Quiescent;
            };
            let ((at_unix_ms, seq), scheduled) = (entry.pair(), entry.scheduled);
            if at_unix_ms > deadline_unix_ms {
                self.clock.advance_to(deadline_unix_ms);
                return Popped::TimeLimit;
            }
            self.queue.pop();
            self.events += 1;
            if self.events > self.events_max {
                return Popped::EventCap;
            }
            self.clock.advance_to(at_unix_ms);
            let (actor, token) = match scheduled {
                Scheduled::Alarm(tag) => return Popped::Alarm(tag),
                Scheduled::Actor(actor, token) => (actor, token),
            };
            let Some(rec) = self.rec(actor) else { continue };
            if rec.token != token {
                continue;
            }
            if let Some(until) = rec.hung_until_unix_ms.filter(|until| *until > at_unix_ms) {
                self.enqueue(until, Scheduled::Actor(actor, token));
                continue;
            }
            if self.schedule.is_some() && self.awaits_effect(actor) {
                return Popped::Wake(self.decide((at_unix_ms, seq), actor, token, deadline_unix_ms));
            }
            return Popped::Wake(actor);
        }
    }

    fn awaits_effect(&self, actor: ActorId) -> bool {
        self.rec(actor).is_some_and(|rec| matches!(rec.slot.borrow().request, Some(Request::Effect(_))))
    }

    /// A decision point (sim/plan/schedule.rs) when other actors' effects are due within the
    /// window after the head's (and before the deadline): the schedule's choice is woken now, and the head, if it was
    /// not chosen, goes back to its place in the queue.
    fn decide(&mut self, head_key: (i64, u64), head: ActorId, head_token: u64, deadline_unix_ms: i64) -> ActorId {
        let at_unix_ms = head_key.0;
        let window_ms = self.schedule.as_ref().expect("a schedule").window_ms();
        let last_unix_ms = at_unix_ms.saturating_add(window_ms).min(deadline_unix_ms);
        // The heap keeps no order to walk: the window's entries are picked out and sorted
        // (the head has left the queue; every entry is at or after it).
        let mut others: Vec<((i64, u64), ActorId)> = self
            .queue
            .iter()
            .filter(|entry| entry.pair() >= head_key && entry.at_unix_ms() <= last_unix_ms)
            .filter_map(|entry| match entry.scheduled {
                Scheduled::Actor(actor, token) if actor != head && self.ready_effect(actor, token, at_unix_ms) => {
                    Some((entry.pair(), actor))
                }
                _ => None,
            })
            .collect();
        others.sort_unstable_by_key(|(key, _)| *key);
        if others.is_empty() {
            return head;
        }
        let options = u32::try_from(others.len() + 1).expect("fewer actors than u32::MAX");
        let schedule = self.schedule.as_mut().expect("a schedule");
        let chosen = schedule.choose(at_unix_ms, options);
        if chosen == 0 {
            return head;
        }
        self.taken = Some(Taken { decision: schedule.decisions_met() - 1, option: chosen, options, head });
        let (key, actor) = others[chosen as usize - 1];
        self.queue.retain(|entry| entry.pair() != key);
        self.queue.push(QueueEntry::new(head_key.0, head_key.1, Scheduled::Actor(head, head_token)));
        actor
    }

    /// A live, current event of an actor that is not hung at `at_unix_ms` and awaits an effect.
    fn ready_effect(&self, actor: ActorId, token: u64, at_unix_ms: i64) -> bool {
        let Some(rec) = self.rec(actor) else { return false };
        let hung = rec.hung_until_unix_ms.is_some_and(|until| until > at_unix_ms);
        rec.token == token && !hung && self.awaits_effect(actor)
    }

    /// The request the woken actor awaits (`None` before its first poll).
    pub fn take_request(&mut self, actor: ActorId) -> Option<Request<E>> {
        self.rec(actor).expect("actor present").slot.borrow_mut().request.take()
    }

    /// The response a woken actor gets for a sleep or a join.
    pub fn answer_own(&self, request: &Request<E>) -> Response<R> {
        match request {
            Request::Sleep { .. } => Response::Woke,
            Request::JoinAny { actors, timeout_ms } => match actors.iter().copied().find(|a| !self.is_live(*a)) {
                Some(finished) => Response::Joined(finished),
                None => {
                    assert!(timeout_ms.is_some(), "a join without a timeout is woken only because one finished");
                    Response::Woke
                }
            },
            Request::Effect(_) => panic!("effects are answered by the caller"),
        }
    }

    /// Puts a request back unanswered: the actor is woken with it again at `at_unix_ms`.
    pub fn defer(&mut self, actor: ActorId, request: Request<E>, at_unix_ms: i64) {
        self.rec(actor).expect("actor present").slot.borrow_mut().request = Some(request);
        self.schedule(actor, at_unix_ms);
    }

    /// Hands the actor its response and polls it to its next request. Spawns and kills it
    /// asked for are applied; the actors that left meanwhile are appended to `finished`.
    pub fn poll(&mut self, actor: ActorId, response: Option<Response<R>>, finished: &mut Vec<Finished<A>>) -> Next {
        let rec = self.rec_mut(actor).expect("actor present");
        rec.slot.borrow_mut().response = response;
        let mut cx = Context::from_waker(Waker::noop());
        let poll = rec.future.as_mut().poll(&mut cx);
        // Spawns first: a request to join a child spawned in the same poll must find it. Most
        // polls ask for none: looked at here, without a call.
        if self.spawner.asked() {
            self.apply_spawns_and_kills(finished);
        }
        let next = match poll {
            Poll::Ready(()) => Next::Finished,
            Poll::Pending => match self.rec(actor) {
                None => Next::Gone,
                Some(rec) => match rec.slot.borrow().request.as_ref() {
                    Some(Request::Sleep { ms }) => Next::Sleep(*ms),
                    Some(Request::JoinAny { .. }) => Next::Join,
                    Some(Request::Effect(_)) => Next::Effect,
                    None => panic!("actor {actor} awaited something that is not an executor request"),
                },
            },
        };
        next
    }

    /// Parks an actor on its join: the first joined actor to finish wakes it (now, if one
    /// already has), or its timeout if that comes first; whichever comes later finds the
    /// token changed and does nothing.
    pub fn park(&mut self, actor: ActorId) {
        let (join_on, timeout_ms) = match self.rec(actor).expect("actor present").slot.borrow().request.as_ref() {
            Some(Request::JoinAny { actors, timeout_ms }) => (actors.clone(), *timeout_ms),
            _ => panic!("park without a join"),
        };
        if join_on.iter().any(|a| !self.is_live(*a)) {
            self.schedule(actor, self.now_unix_ms());
            return;
        }
        let rec = self.rec_mut(actor).expect("present");
        rec.token += 1;
        let token = rec.token;
        for child in join_on {
            self.rec_mut(child).expect("alive").joiners.push((actor, token));
        }
        if let Some(ms) = timeout_ms {
            assert!(ms >= 0, "join timeout of {ms} ms");
            // Under the same token as the joiners: the first of the two to fire reschedules
            // the actor (a new token), which makes the other stale.
            self.enqueue(self.now_unix_ms() + ms, Scheduled::Actor(actor, token));
        }
    }

    pub fn schedule(&mut self, actor: ActorId, at_unix_ms: i64) {
        let rec = self.rec_mut(actor).expect("present");
        rec.token += 1;
        let token = rec.token;
        self.enqueue(at_unix_ms, Scheduled::Actor(actor, token));
    }

    /// Freezes actors until `until_unix_ms`: their due events wait, nothing else changes.
    /// A hang that starts during another lasts until the later of the two ends: a shorter
    /// second hang must not thaw an actor the first still holds (events it already deferred
    /// wait for the first's end, and the oracles' truth says hung until then).
    pub fn hang(&mut self, victims: &[ActorId], until_unix_ms: i64) {
        for victim in victims {
            if let Some(actor) = self.rec_mut(*victim) {
                let until = actor.hung_until_unix_ms.map_or(until_unix_ms, |earlier| earlier.max(until_unix_ms));
                actor.hung_until_unix_ms = Some(until);
            }
        }
    }

    pub fn hung_until_unix_ms(&self, actor: ActorId) -> Option<i64> {
        self.rec(actor).and_then(|a| a.hung_until_unix_ms)
    }

    /// Removes an actor and every descendant (children first, then the actor), wakes its
    /// joiners, and appends what left to `finished`. An actor already gone is ignored.
    pub fn finish(&mut self, actor: ActorId, finished: &mut Vec<Finished<A>>) {
        self.finish_inner(actor, false, finished);
    }

    fn finish_inner(&mut self, actor: ActorId, with_parent: bool, finished: &mut Vec<Finished<A>>) {
        let Some(rec) = self.actors.get_mut(actor as usize).and_then(Option::take) else { return };
        self.live -= 1;
        for child in &rec.children {
            self.finish_inner(*child, true, finished);
        }
        let now = self.now_unix_ms();
        for (joiner, token) in rec.joiners {
            if self.rec(joiner).is_some_and(|j| j.token == token) {
                self.schedule(joiner, now);
            }
        }
        finished.push(Finished { id: actor, data: rec.data, with_parent });
    }

    /// Puts a new actor in its id's slot (ids grow by one, so this appends but for spawns
    /// applied out of order).
    fn insert(&mut self, actor: ActorId, rec: ActorRec<A, E, R>) {
        let index = actor as usize;
        if self.actors.len() <= index {
            self.actors.resize_with(index + 1, || None);
        }
        assert!(self.actors[index].is_none(), "actor id reused");
        self.actors[index] = Some(rec);
        self.live += 1;
    }

    /// Applies the spawns and kills actors asked for, until none is left.
    pub fn apply_spawns_and_kills(&mut self, finished: &mut Vec<Finished<A>>) {
        loop {
            // After most polls both are empty: looked at before anything is taken.
            if !self.spawner.asked() {
                return;
            }
            // Taken whole (no copy).
            let spawns: Vec<Spawn<A, E, R>> = std::mem::take(&mut *self.spawner.spawns.borrow_mut());
            let kills: Vec<ActorId> = std::mem::take(&mut *self.spawner.kills.borrow_mut());
            let now = self.now_unix_ms();
            for spawn in spawns {
                let rec = ActorRec {
                    data: spawn.data,
                    future: spawn.future,
                    slot: spawn.slot,
                    token: 0,
                    joiners: Vec::new(),
                    children: Vec::new(),
                    hung_until_unix_ms: None,
                };
                self.insert(spawn.id, rec);
                match spawn.parent.and_then(|parent| self.rec_mut(parent)) {
                    Some(parent) => parent.children.push(spawn.id),
                    None => assert!(spawn.parent.is_none(), "a child spawned by an actor that is gone"),
                }
                self.schedule(spawn.id, now + spawn.delay_ms);
            }
            for victim in kills {
                self.finish(victim, finished);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Toy actors: the effect is a label they log; the reply is nothing.
    type Toy = Executor<&'static str, &'static str, ()>;
    type Log = Rc<RefCell<Vec<String>>>;

    struct ToyCtx {
        id: ActorId,
        slot: Rc<RefCell<Slot<&'static str, ()>>>,
        spawner: Rc<Spawner<&'static str, &'static str, ()>>,
        clock: SimClock,
    }

    impl ToyCtx {
        async fn sleep(&self, ms: i64) {
            Await::new(self.slot.clone(), Request::Sleep { ms }).await;
        }
        async fn effect(&self, label: &'static str) {
            Await::new(self.slot.clone(), Request::Effect(label)).await;
        }
        async fn join(&self, actor: ActorId) -> ActorId {
            match Await::new(self.slot.clone(), Request::JoinAny { actors: vec![actor], timeout_ms: None }).await {
                Response::Joined(a) => a,
                _ => unreachable!(),
            }
        }
        async fn join_for(&self, actor: ActorId, ms: i64) -> Option<ActorId> {
            match Await::new(self.slot.clone(), Request::JoinAny { actors: vec![actor], timeout_ms: Some(ms) }).await {
                Response::Joined(a) => Some(a),
                Response::Woke => None,
                _ => unreachable!(),
            }
        }
        fn now(&self) -> i64 {
            self.clock.now_unix_ms()
        }
    }

    fn spawn<Fut: Future<Output = ()> + 'static>(
        exec: &Toy,
        parent: Option<ActorId>,
        name: &'static str,
        delay_ms: i64,
        body: impl FnOnce(ToyCtx) -> Fut,
    ) -> ActorId {
        let (spawner, clock) = (exec.spawner(), exec.clock().clone());
        exec.spawner().spawn(parent, name, delay_ms, move |id, slot| body(ToyCtx { id, slot, spawner, clock }))
    }

    /// Runs to the end like the engine does: effects are answered at once and take 1 ms.
    fn run(exec: &mut Toy, deadline: i64, log: &Log) -> Popped {
        let mut finished = Vec::new();
        exec.apply_spawns_and_kills(&mut finished);
        loop {
            let popped = exec.pop(deadline);
            let actor = match popped {
                Popped::Wake(actor) => actor,
                Popped::Alarm(tag) => {
                    log.borrow_mut().push(format!("{} alarm {tag}", exec.now_unix_ms()));
                    continue;
                }
                other => return other,
            };
            let response = match exec.take_request(actor) {
                None => None,
                Some(Request::Effect(label)) => {
                    log.borrow_mut().push(format!("{} {label}", exec.now_unix_ms()));
                    Some(Response::Effect(()))
                }
                Some(other) => Some(exec.answer_own(&other)),
            };
            match exec.poll(actor, response, &mut finished) {
                Next::Finished => exec.finish(actor, &mut finished),
                Next::Sleep(ms) => exec.schedule(actor, exec.now_unix_ms() + ms),
                Next::Effect => exec.schedule(actor, exec.now_unix_ms() + 1),
                Next::Join => exec.park(actor),
                Next::Gone => {}
            }
            for f in finished.drain(..) {
                log.borrow_mut().push(format!("{} end {}{}", exec.now_unix_ms(), f.data, if f.with_parent { " with parent" } else { "" }));
            }
        }
    }

    fn new_exec() -> (Toy, Log) {
        (Executor::new(SimClock::new(0), 1_000), Rc::new(RefCell::new(Vec::new())))
    }

    #[test]
    fn events_at_the_same_instant_run_in_the_order_they_were_scheduled() {
        let (mut exec, log) = new_exec();
        for name in ["a", "b", "c"] {
            spawn(&exec, None, name, 10, move |ctx| async move {
                ctx.sleep(5).await;
                ctx.effect(name).await;
            });
        }
        assert_eq!(run(&mut exec, 1_000, &log), Popped::Quiescent);
        // Each effect is performed 1 ms after it is asked for (the toy round trip).
        let effects: Vec<String> = log.borrow().iter().filter(|l| !l.contains(" end ")).cloned().collect();
        assert_eq!(effects, ["16 a", "16 b", "16 c"]);
    }

    /// Actors a, b, c whose effects fall due together at 16 and d whose effect falls due at
    /// 40 (the toy round trip is 1 ms), run with `schedule`: their effects in the order
    /// performed, and the decision points met.
    fn scheduled_effects(schedule: Option<Schedule>) -> (Vec<String>, Vec<(i64, u32, u32)>) {
        let (mut exec, log) = new_exec();
        for (name, sleep_ms) in [("a", 5), ("b", 5), ("c", 5), ("d", 29)] {
            spawn(&exec, None, name, 10, move |ctx| async move {
                ctx.sleep(sleep_ms).await;
                ctx.effect(name).await;
            });
        }
        let decisions = schedule.map(|mut s| {
            let log = s.record();
            exec.set_schedule(s);
            log
        });
        assert_eq!(run(&mut exec, 1_000, &log), Popped::Quiescent);
        let effects = log.borrow().iter().filter(|l| !l.contains(" end ")).cloned().collect();
        (effects, decisions.map(|d| d.borrow().iter().map(|d| (d.at_unix_ms, d.options, d.chosen)).collect()).unwrap_or_default())
    }

    #[test]
    fn a_schedule_of_defaults_keeps_the_queue_order_and_a_choice_runs_a_later_effect_first() {
        let (plain, _) = scheduled_effects(None);
        assert_eq!(plain, ["16 a", "16 b", "16 c", "40 d"]);
        // A window of 20 ms: d's event at 35 is a sleep, not an effect, so d is no option.
        let (defaults, decisions) = scheduled_effects(Some(Schedule::new(20, vec![])));
        assert_eq!(defaults, plain, "every choice 0 is the order without a schedule");
        assert_eq!(decisions, [(16, 3, 0), (16, 2, 0)]);
        let (c_first, decisions) = scheduled_effects(Some(Schedule::new(0, vec![2])));
        assert_eq!(c_first, ["16 c", "16 a", "16 b", "40 d"]);
        assert_eq!(decisions, [(16, 3, 2), (16, 2, 0)], "a is the head again, with b beside it");
        let (reversed, _) = scheduled_effects(Some(Schedule::new(0, vec![2, 1])));
        assert_eq!(reversed, ["16 c", "16 b", "16 a", "40 d"]);
    }

    #[test]
    fn an_effect_due_later_within_the_window_can_run_at_the_heads_instant() {
        let (mut exec, log) = new_exec();
        spawn(&exec, None, "early", 0, |ctx| async move {
            ctx.sleep(10).await;
            ctx.effect("early").await;
        });
        let late = spawn(&exec, None, "late", 0, |ctx| async move { ctx.effect("late").await });
        let mut finished = Vec::new();
        exec.apply_spawns_and_kills(&mut finished);
        // late asks for its effect at 0 and it falls due at 15; early's falls due at 11.
        assert_eq!(exec.pop(100), Popped::Wake(0));
        assert_eq!(exec.poll(0, None, &mut finished), Next::Sleep(10));
        exec.schedule(0, 10);
        assert_eq!(exec.pop(100), Popped::Wake(late));
        assert_eq!(exec.poll(late, None, &mut finished), Next::Effect);
        exec.schedule(late, 15);
        let mut schedule = Schedule::new(4, vec![1]);
        let decisions = schedule.record();
        exec.set_schedule(schedule);
        run(&mut exec, 100, &log);
        assert_eq!(log.borrow().iter().filter(|l| !l.contains(" end ")).cloned().collect::<Vec<_>>(), ["11 late", "11 early"]);
        assert_eq!(decisions.borrow().len(), 1);
    }

    #[test]
    fn ending_an_actor_ends_its_children_first_and_wakes_its_joiner() {
        let (mut exec, log) = new_exec();
        let parent = spawn(&exec, None, "session", 0, |ctx| async move {
            let (spawner, clock) = (ctx.spawner.clone(), ctx.clock.clone());
            let slot_spawner = spawner.clone();
            spawner.spawn(Some(ctx.id), "watcher", 0, move |id, slot| async move {
                let child = ToyCtx { id, slot, spawner: slot_spawner, clock };
                loop {
                    child.sleep(100).await;
                }
            });
            ctx.sleep(250).await;
        });
        spawn(&exec, None, "observer", 0, move |ctx| async move {
            let ended = ctx.join(parent).await;
            assert_eq!(ended, parent);
            ctx.effect("saw the end").await;
            let _ = ctx.now();
        });
        assert_eq!(run(&mut exec, 10_000, &log), Popped::Quiescent);
        let log = log.borrow();
        let end_watcher = log.iter().position(|l| l == "250 end watcher with parent").expect("watcher ended with its session");
        let end_session = log.iter().position(|l| l == "250 end session").expect("session ended");
        assert!(end_watcher < end_session, "{log:?}");
        assert!(log.contains(&"251 saw the end".to_string()), "{log:?}");
    }

    #[test]
    fn a_kill_request_drops_the_actor_and_a_join_on_a_finished_actor_returns_at_once() {
        let (mut exec, log) = new_exec();
        let sleeper = spawn(&exec, None, "sleeper", 0, |ctx| async move {
            ctx.sleep(1_000_000).await;
            ctx.effect("never").await;
        });
        spawn(&exec, None, "killer", 5, move |ctx| async move {
            ctx.spawner.kill(sleeper);
            ctx.sleep(1).await;
            assert_eq!(ctx.join(sleeper).await, sleeper);
            ctx.effect("joined").await;
        });
        assert_eq!(run(&mut exec, 10_000_000, &log), Popped::Quiescent);
        let log = log.borrow();
        assert!(log.contains(&"5 end sleeper".to_string()), "{log:?}");
        assert!(!log.iter().any(|l| l.ends_with("never")), "{log:?}");
        assert!(log.contains(&"7 joined".to_string()), "{log:?}");
    }

    #[test]
    fn a_join_with_a_timeout_wakes_at_whichever_comes_first_once() {
        let (mut exec, log) = new_exec();
        let short = spawn(&exec, None, "short", 0, |ctx| async move { ctx.sleep(30).await });
        let long = spawn(&exec, None, "long", 0, |ctx| async move { ctx.sleep(500).await });
        spawn(&exec, None, "waiter", 0, move |ctx| async move {
            // The joined actor ends first: joined at 30, the timeout at 100 does nothing
            // (each effect is performed 1 ms after it is asked for).
            assert_eq!(ctx.join_for(short, 100).await, Some(short));
            ctx.effect("joined short").await;
            // The timeout comes first: woken at 131; the end of `long` at 500 does nothing.
            assert_eq!(ctx.join_for(long, 100).await, None);
            ctx.effect("timed out").await;
            ctx.sleep(1_000).await;
            ctx.effect("slept on").await;
        });
        assert_eq!(run(&mut exec, 10_000, &log), Popped::Quiescent);
        let effects: Vec<String> = log.borrow().iter().filter(|l| !l.contains(" end ")).cloned().collect();
        assert_eq!(effects, ["31 joined short", "132 timed out", "1133 slept on"]);
    }

    #[test]
    fn a_hung_actor_waits_until_the_hang_ends_and_others_go_on() {
        let (mut exec, log) = new_exec();
        let slow = spawn(&exec, None, "slow", 0, |ctx| async move {
            ctx.sleep(10).await;
            ctx.effect("slow woke").await;
        });
        spawn(&exec, None, "fast", 0, |ctx| async move {
            ctx.sleep(20).await;
            ctx.effect("fast woke").await;
        });
        let mut finished = Vec::new();
        exec.apply_spawns_and_kills(&mut finished);
        exec.hang(&[slow], 500);
        assert_eq!(exec.hung_until_unix_ms(slow), Some(500));
        run(&mut exec, 10_000, &log);
        let log = log.borrow();
        // The hang defers even the first poll: slow starts at 500, sleeps 10, acts 1 ms later.
        let effects: Vec<&String> = log.iter().filter(|l| l.ends_with("woke")).collect();
        assert_eq!(effects, ["21 fast woke", "511 slow woke"], "{log:?}");
    }

    #[test]
    fn a_shorter_hang_inside_a_longer_one_does_not_end_it() {
        let (mut exec, log) = new_exec();
        let slow = spawn(&exec, None, "slow", 0, |ctx| async move {
            ctx.sleep(10).await;
            ctx.effect("slow woke").await;
        });
        let mut finished = Vec::new();
        exec.apply_spawns_and_kills(&mut finished);
        exec.hang(&[slow], 500);
        exec.hang(&[slow], 100);
        assert_eq!(exec.hung_until_unix_ms(slow), Some(500));
        run(&mut exec, 10_000, &log);
        let effects: Vec<String> = log.borrow().iter().filter(|l| l.ends_with("woke")).cloned().collect();
        assert_eq!(effects, ["511 slow woke"]);
    }

    #[test]
    fn the_event_cap_and_the_deadline_stop_the_loop() {
        let (mut exec, log) = new_exec();
        spawn(&exec, None, "spinner", 0, |ctx| async move {
            loop {
                ctx.sleep(1).await;
            }
        });
        assert_eq!(run(&mut exec, i64::MAX, &log), Popped::EventCap);
        let (mut exec, log) = new_exec();
        spawn(&exec, None, "sleeper", 0, |ctx| async move { ctx.sleep(10_000).await });
        exec.alarm(7, 3);
        assert_eq!(run(&mut exec, 5_000, &log), Popped::TimeLimit);
        assert_eq!(exec.now_unix_ms(), 5_000);
        assert_eq!(log.borrow()[..], ["7 alarm 3"]);
    }

    #[test]
    fn the_queue_pops_by_instant_then_in_the_order_entries_were_set() {
        let (mut exec, _) = new_exec();
        // Instants that repeat out of order: a heap on the instant alone would not keep ties.
        let instants: Vec<i64> = (0..40).map(|i| (i * 7) % 5).collect();
        for (tag, at) in instants.iter().enumerate() {
            exec.alarm(*at, tag);
        }
        let mut popped = Vec::new();
        loop {
            match exec.pop(100) {
                Popped::Alarm(tag) => popped.push(tag),
                Popped::Quiescent => break,
                other => panic!("{other:?}"),
            }
        }
        let mut expected: Vec<usize> = (0..40).collect();
        expected.sort_by_key(|tag| instants[*tag]); // stable: ties stay in the order set
        assert_eq!(popped, expected);
    }

    #[test]
    fn a_queue_entry_orders_as_its_instant_and_sequence_and_gives_them_back() {
        let pairs = [(i64::MIN, 0), (-1, u64::MAX), (0, 0), (0, 1), (1, 0), (1_767_225_600_000, 7), (i64::MAX, u64::MAX)];
        for (a, b) in pairs.iter().flat_map(|a| pairs.iter().map(move |b| (*a, *b))) {
            let (x, y) = (QueueEntry::new(a.0, a.1, Scheduled::Alarm(0)), QueueEntry::new(b.0, b.1, Scheduled::Alarm(1)));
            assert_eq!((x.pair(), y.pair()), (a, b));
            // Reversed, for the max-heap: the earlier pair is the greater entry.
            assert_eq!(x.cmp(&y), b.cmp(&a), "{a:?} against {b:?}");
        }
    }

    #[test]
    fn actors_that_left_leave_their_slot_empty_and_the_others_stay_in_id_order() {
        let (mut exec, _) = new_exec();
        let ids: Vec<ActorId> =
            ["a", "b", "c"].into_iter().map(|n| spawn(&exec, None, n, 0, |ctx| async move { ctx.sleep(1).await })).collect();
        let mut finished = Vec::new();
        exec.apply_spawns_and_kills(&mut finished);
        exec.finish(ids[1], &mut finished);
        assert_eq!(exec.actors_where(|_| true), [ids[0], ids[2]]);
        assert_eq!((exec.data(ids[1]), exec.find(|d| *d != "a")), (None, Some(&"c")));
        assert!(!exec.is_empty());
        exec.finish(ids[1], &mut finished); // already gone: nothing happens
        exec.finish(ids[0], &mut finished);
        exec.finish(ids[2], &mut finished);
        assert!(exec.is_empty());
        assert_eq!(finished.iter().map(|f| f.data).collect::<Vec<_>>(), ["b", "a", "c"]);
        assert_eq!(exec.pop(100), Popped::Quiescent, "stale events of actors that left are skipped");
    }

    #[test]
    fn a_deferred_request_comes_back_unanswered_at_its_time() {
        let (mut exec, log) = new_exec();
        let actor = spawn(&exec, None, "writer", 0, |ctx| async move { ctx.effect("write").await });
        let mut finished = Vec::new();
        exec.apply_spawns_and_kills(&mut finished);
        assert_eq!(exec.pop(100), Popped::Wake(actor));
        assert!(exec.take_request(actor).is_none());
        assert_eq!(exec.poll(actor, None, &mut finished), Next::Effect);
        exec.schedule(actor, 1);
        assert_eq!(exec.pop(100), Popped::Wake(actor));
        let request = exec.take_request(actor).expect("the effect");
        exec.defer(actor, request, 40);
        assert_eq!(run(&mut exec, 100, &log), Popped::Quiescent);
        assert_eq!(log.borrow()[0], "40 write");
    }
}
