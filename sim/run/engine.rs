//! The engine: drives the executor (sim/world/executor.rs) over the world (sim/world/mod.rs) and hands
//! every event of the one stream to its consumers — the trace writer, the checker, coverage — in the
//! order it was emitted.
//!
//! One step: pop the next due event; a timed fault goes to the world; an actor's due request
//! is performed (a sleep or a join by the executor, an effect by the world), the actor is
//! polled to its next request, and that request is scheduled: a sleep after its length plus
//! the world's jitter, an effect after a statement round trip, a join when a joined actor ends.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::rc::Rc;

use crate::actors::ctx::{ActorMeta, Ctx, Runtime};
use crate::base::clock::SimClock;
use crate::base::dist::Dist;
use crate::base::error::{Error, Result};
use crate::plan::faults::FaultPlan;
use crate::run::fork::{ForkBase, Snapshots};
use crate::run::observer_thread::{ObserverThread, Observers};
use crate::world::db::CommsDb;
use crate::world::event::{ActorEnd, Event, EventKind, EventLog, Who};
use crate::world::executor::{Next, Popped, Request};
use crate::world::{Contention, Exec, World};

pub use crate::vocab::Ending;

/// Settings of the engine itself.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub seed: u64,
    pub epoch_unix_ms: i64,
    /// Round trip of one statement through a session's tool call.
    pub statement_ms: Dist,
    pub sim_time_max_ms: i64,
    pub events_max: u64,
    /// Variant `retry-failed-reads` (issue 28): a read that fails with SQLITE_IOERR is tried
    /// again (`Ctx::sql`).
    pub retry_failed_reads: bool,
    /// Variant `conductor-busy-backoff` (issue 43): the conductor retries BUSY with backoff.
    pub conductor_busy_backoff: bool,
}

/// Where the consumers run: on the simulation's thread, or on one of their own, fed the same
/// events in the same order (sim/run/observer_thread.rs).
enum Consumers {
    Inline(Box<Observers>),
    Thread(ObserverThread),
}

impl Consumers {
    /// A run that writes its trace gets a thread for its consumers when the machine has a
    /// second core; a sweep's hash-only pair keeps them inline (its other jobs fill the cores).
    fn new(observers: Observers) -> Result<Consumers> {
        // Asked only of a run that writes its trace: the question reads cgroup files, and
        // an exploration or a sweep makes thousands of hash-only runs.
        if observers.trace.writes_a_file() && std::thread::available_parallelism().map_or(1, usize::from) > 1 {
            return Ok(Consumers::Thread(ObserverThread::start(observers)?));
        }
        Ok(Consumers::Inline(Box::new(observers)))
    }

    /// Hands every event of `pending` on, in order.
    fn take(&mut self, pending: &mut Vec<Event>) -> Result<()> {
        match self {
            Consumers::Inline(observers) => {
                for event in pending.drain(..) {
                    observers.consume(&event)?;
                }
            }
            Consumers::Thread(thread) => thread.take(pending),
        }
        Ok(())
    }

    /// The observers back, with the first error one of them met.
    fn finish(self) -> (Observers, Result<()>) {
        match self {
            Consumers::Inline(observers) => (*observers, Ok(())),
            Consumers::Thread(thread) => thread.finish(),
        }
    }
}

pub struct Engine {
    config: EngineConfig,
    runtime: Rc<Runtime>,
    exec: Exec,
    world: World,
    consumers: Consumers,
    /// The run folder: the sessions' files are written below it at the end.
    files_root: PathBuf,
    /// Events of the current step, reused between steps.
    pending: Vec<Event>,
    /// This run's part in forking (sim/run/fork.rs).
    fork: Fork,
}

/// A base run taking snapshots, or a run forked from one on its way to its snapshot.
enum Fork {
    None,
    Base(Snapshots),
    Branch { base: std::sync::Arc<ForkBase>, at: usize },
}

impl Engine {
    pub fn new(
        config: EngineConfig,
        clock: SimClock,
        db: CommsDb,
        observers: Observers,
        files_root: PathBuf,
        faults: FaultPlan,
    ) -> Result<Engine> {
        assert_eq!(clock.now_unix_ms(), config.epoch_unix_ms, "the clock starts at the epoch");
        let events = Rc::new(EventLog::default());
        let mut exec = Exec::new(clock.clone(), config.events_max);
        for (index, (at_ms, _)) in faults.timed.iter().enumerate() {
            exec.alarm(config.epoch_unix_ms + at_ms, index);
        }
        for (name, value) in &faults.drawn {
            events.push(Event {
                t_ms: 0,
                who: Who::Engine,
                session: "".into(),
                kind: EventKind::Swarm { name: name.clone(), value: value.clone() },
            });
        }
        let runtime = Rc::new(Runtime {
            seed: config.seed,
            clock,
            epoch_unix_ms: config.epoch_unix_ms,
            spawner: exec.spawner(),
            events: events.clone(),
            actor_faults: faults.actor_faults.clone(),
            retry_failed_reads: config.retry_failed_reads,
            conductor_busy_backoff: config.conductor_busy_backoff,
        });
        let world = World::new(db, faults, events, config.epoch_unix_ms, config.statement_ms.clone());
        let consumers = Consumers::new(observers)?;
        Ok(Engine { config, runtime, exec, world, consumers, files_root, pending: Vec::new(), fork: Fork::None })
    }

    /// Takes snapshots as the run goes, for runs forked from it (sim/run/fork.rs): only of
    /// consumers on this thread whose trace is a hash (`Observers::fork`).
    pub fn take_snapshots(&mut self) {
        self.world.record_playback();
        self.fork = Fork::Base(Snapshots::default());
    }

    /// What runs forked from this one start from (`take_snapshots`), once it has run.
    pub fn take_fork_base(&mut self) -> Option<ForkBase> {
        let Fork::Base(snapshots) = std::mem::replace(&mut self.fork, Fork::None) else { return None };
        Some(snapshots.into_base(self.world.take_playback().unwrap_or_default()))
    }

    /// Makes this run a fork of `base` at its snapshot `at`: its statements answered from the
    /// base run's record and its events dropped until it reaches the snapshot's step.
    pub fn fork_from(&mut self, base: std::sync::Arc<ForkBase>, at: usize) {
        let played = base.snapshots[at].played;
        self.world.catch_up(crate::world::catch_up::CatchUp::new(base.playback.clone(), played));
        // Counted, not kept: the snapshot's observers have had them.
        self.runtime.events.set_dropping(true);
        self.fork = Fork::Branch { base, at };
    }

    /// Whether a forked run ended before it reached its snapshot: it parted from its base run.
    pub fn fork_unreached(&self) -> bool {
        matches!(self.fork, Fork::Branch { .. })
    }

    /// At a step's boundary (every event before it dispatched): a base run takes a snapshot
    /// when one is due; a forked run at its snapshot's step takes its database and observers.
    fn fork_boundary(&mut self) -> Result<()> {
        match &mut self.fork {
            Fork::None => Ok(()),
            Fork::Base(snapshots) => {
                let asked = self.world.faults().asked();
                if !snapshots.due(asked) {
                    return Ok(());
                }
                let Consumers::Inline(observers) = &mut self.consumers else { return Ok(()) };
                // Kept to be forked again, not to take rows: no room for them held meanwhile.
                let Some(observers) = observers.fork(Vec::new()) else { return Ok(()) };
                let played = self.world.playback().map_or(0, |p| p.len());
                let db = self.world.db_mut();
                let (stats, rows) = (db.stats, db.rows_image()?);
                snapshots.keep(self.exec.events(), asked, played, self.runtime.events.emitted(), stats, rows, observers);
                Ok(())
            }
            Fork::Branch { base, at } => {
                let snapshot = &base.snapshots[*at];
                let popped = self.exec.events();
                if popped < snapshot.popped {
                    return Ok(());
                }
                let answered = self.world.caught_up();
                let same = popped == snapshot.popped
                    && answered == Some(snapshot.played)
                    && self.runtime.events.emitted() == snapshot.emitted
                    && self.world.faults().asked() == snapshot.asked;
                // The run's own trace, replaced here, holds only its first row: its buffer is the copy's.
                let buffer = match &mut self.consumers {
                    Consumers::Inline(own) => own.trace.take_buffer(),
                    Consumers::Thread(_) => Vec::new(),
                };
                let observers = snapshot.observers(buffer).filter(|_| same).ok_or_else(|| Error::harness(crate::world::PARTED))?;
                let next = usize::try_from(snapshot.stats.statements).expect("a count of statements run");
                self.world.db_mut().fork_from(snapshot.rows(), snapshot.stats, next)?;
                self.consumers = Consumers::Inline(Box::new(observers));
                self.runtime.events.set_dropping(false);
                self.fork = Fork::None;
                Ok(())
            }
        }
    }

    /// Adds a top-level actor that starts after `delay_ms`.
    pub fn spawn<F, Fut>(&mut self, meta: ActorMeta, delay_ms: i64, make: F)
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + 'static,
    {
        Ctx::queue_spawn(&self.runtime, None, meta, delay_ms, make);
        let mut finished = Vec::new();
        self.exec.apply_spawns_and_kills(&mut finished);
        assert!(finished.is_empty(), "nothing ends before the run");
    }

    /// Takes the schedule's choices at the run's decision points (sim/plan/schedule.rs).
    pub fn set_schedule(&mut self, schedule: crate::plan::schedule::Schedule) {
        self.exec.set_schedule(schedule);
    }

    /// Why the schedule's choices did not fit the run (out of range, or never reached).
    pub fn schedule_problem(&self) -> Option<String> {
        self.exec.the_schedule().and_then(crate::plan::schedule::Schedule::problem)
    }

    pub fn events(&self) -> u64 {
        self.exec.events()
    }

    pub fn now_ms(&self) -> i64 {
        self.runtime.now_ms()
    }

    pub fn contention(&self) -> Contention {
        self.world.contention()
    }

    /// Runs until no actor is left, or the time limit. The event cap is a harness error: a
    /// run that needs more events than its scenario allows is a livelock, not a verdict.
    pub fn run(&mut self) -> Result<Ending> {
        self.run_with_progress(&mut |_, _| {})
    }

    /// `run`, calling `progress(simulated ms, sim_time_max_ms)` once per simulated minute
    /// reached: the caller may show it; nothing in the run depends on it.
    pub fn run_with_progress(&mut self, progress: &mut dyn FnMut(i64, i64)) -> Result<Ending> {
        const PROGRESS_EVERY_MS: i64 = 60_000;
        self.dispatch()?;
        let deadline_unix_ms = self.config.epoch_unix_ms + self.config.sim_time_max_ms;
        let mut next_progress_ms = PROGRESS_EVERY_MS;
        loop {
            self.fork_boundary()?;
            let now_ms = self.runtime.now_ms();
            if now_ms >= next_progress_ms {
                progress(now_ms, self.config.sim_time_max_ms);
                next_progress_ms = now_ms - now_ms % PROGRESS_EVERY_MS + PROGRESS_EVERY_MS;
            }
            match self.exec.pop(deadline_unix_ms) {
                Popped::Quiescent => return Ok(Ending::Quiescent),
                Popped::TimeLimit => return Ok(Ending::TimeLimit),
                Popped::EventCap => {
                    return Err(Error::harness(format!(
                        "event cap reached: {} events by t={} ms (run.events_max); seed {}",
                        self.config.events_max,
                        self.runtime.now_ms(),
                        self.config.seed
                    )))
                }
                Popped::Alarm(index) => self.world.apply_timed_fault(&mut self.exec, index),
                Popped::Wake(actor) => {
                    self.note_choice(actor);
                    self.step(actor)?
                }
            }
            self.dispatch()?;
        }
    }

    /// A non-default choice of the schedule, noted in the trace (`schedule_choice`, by the
    /// engine) so a replayed counterexample says which effect ran before which. The default
    /// order notes nothing: its trace is the one without a schedule.
    fn note_choice(&mut self, actor: crate::world::executor::ActorId) {
        let Some(taken) = self.exec.take_taken() else { return };
        let name = |id| self.exec.data(id).map_or_else(|| format!("actor {id}"), |info| info.name.to_string());
        let detail = format!(
            "decision {}: option {} of {}: {} runs before {}",
            taken.decision,
            taken.option,
            taken.options,
            name(actor),
            name(taken.head)
        );
        let what = std::borrow::Cow::Borrowed("schedule_choice");
        self.runtime.events.push(Event {
            t_ms: self.runtime.now_ms(),
            who: Who::Engine,
            session: "".into(),
            kind: EventKind::Note { what, detail },
        });
    }

    /// Performs the woken actor's request, polls it, and schedules its next request.
    fn step(&mut self, actor: crate::world::executor::ActorId) -> Result<()> {
        let response = match self.exec.take_request(actor) {
            None => None, // first poll
            Some(Request::Effect(effect)) => match self.world.perform(&mut self.exec, actor, effect)? {
                Some(reply) => Some(crate::world::executor::Response::Effect(reply)),
                None => return Ok(()), // a fault crashed or froze the session, or it waits for the lock
            },
            Some(own) => Some(self.exec.answer_own(&own)),
        };
        let mut finished = Vec::new();
        let next = self.exec.poll(actor, response, &mut finished);
        // Most polls end no actor: the world is not asked to emit nothing.
        if !finished.is_empty() {
            self.world.emit_finished(&self.exec, &mut finished, ActorEnd::Killed);
        }
        let now = self.exec.now_unix_ms();
        match next {
            Next::Finished => {
                self.exec.finish(actor, &mut finished);
                self.world.emit_finished(&self.exec, &mut finished, ActorEnd::Exit);
            }
            Next::Gone => {}
            Next::Sleep(ms) => {
                let jitter_ms = self.world.sleep_jitter_ms(&self.exec, actor, ms);
                self.exec.schedule(actor, now + ms + jitter_ms);
            }
            // Every effect is a tool call: it takes a statement round trip.
            Next::Effect => {
                let delay_ms = self.world.effect_latency_ms(&mut self.exec, actor);
                self.exec.schedule(actor, now + delay_ms);
            }
            Next::Join => self.exec.park(actor),
        }
        Ok(())
    }

    /// Hands every event emitted since the last dispatch to the consumers, in order.
    fn dispatch(&mut self) -> Result<()> {
        self.runtime.events.drain_into(&mut self.pending);
        // A sleep's step emits nothing (most watcher polls end in one): nothing to hand on.
        if self.pending.is_empty() {
            return Ok(());
        }
        if self.world.is_catching_up() {
            // The snapshot's observers have consumed these already (sim/run/fork.rs): only
            // the ones emitted before the run was forked are left to drop.
            self.pending.clear();
            return Ok(());
        }
        self.consumers.take(&mut self.pending)
    }

    /// Ends the run: the sessions' files reach the disk (whatever way the loop ended), and
    /// the database and the consumers are handed back.
    pub fn finish(self) -> Result<(CommsDb, Observers)> {
        self.finish_writing(true)
    }

    /// `finish` without writing the sessions' files: for a run whose folder is discarded
    /// (a sweep's passing pair, `run::Keep::Hash`).
    pub fn finish_unwritten(self) -> Result<(CommsDb, Observers)> {
        self.finish_writing(false)
    }

    fn finish_writing(mut self, write: bool) -> Result<(CommsDb, Observers)> {
        let dispatched = self.dispatch();
        let Engine { exec, world, consumers, files_root, runtime, .. } = self;
        drop(exec);
        drop(runtime);
        let (db, files) = world.into_parts();
        // The files are written while a consumer thread takes the last events.
        let written = if write { write_files(&files_root, &files) } else { Ok(()) };
        let (observers, consumed) = consumers.finish();
        written?;
        dispatched?;
        consumed?;
        Ok((db, observers))
    }
}

/// Writes the sessions' in-memory files below the run folder, so the seed's scripts and a
/// person can read them (temp/ was emptied at the start of the run).
fn write_files(files_root: &std::path::Path, files: &BTreeMap<String, String>) -> Result<()> {
    for (path, content) in files {
        let full = files_root.join(path);
        if let Some(parent) = full.parent() {
            // Through the registry: the run's folder may lie in a tracked one a Ctrl-C removed.
            crate::base::live_files::create_dir_all(parent)
                .map_err(|e| Error::harness(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::write(&full, content).map_err(|e| Error::harness(format!("cannot write {}: {e}", full.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::scenario::{FaultsSection, ProtocolSettings};
    use crate::input::sql_catalog::Catalog;
    use crate::judging::coverage::CoverageObserver;
    use crate::judging::oracle::Checker;
    use crate::trace::TraceSink;
    use crate::vocab::{ActorName, Stmt};
    use rusqlite::types::Value;

    const EPOCH_MS: i64 = 1_767_225_600_000;

    /// An engine over a fresh comms.db in `dir`, with `faults`.
    fn engine(dir: &std::path::Path, faults: &str) -> Engine {
        let clock = SimClock::new(EPOCH_MS);
        let db = CommsDb::create(&dir.join("comms.db"), clock.clone(), 1, Catalog::default_protocol()).unwrap();
        let observers = Observers {
            trace: TraceSink::create(&dir.join("trace.csv"), EPOCH_MS).unwrap(),
            checker: Checker::new(ProtocolSettings::default()),
            coverage: CoverageObserver::default(),
        };
        let faults: FaultsSection = toml::from_str(faults).unwrap();
        let config = EngineConfig {
            seed: 1,
            epoch_unix_ms: EPOCH_MS,
            statement_ms: Dist::Const(100),
            sim_time_max_ms: 3_600_000,
            events_max: 10_000,
            retry_failed_reads: false,
            conductor_busy_backoff: false,
        };
        Engine::new(config, clock, db, observers, dir.to_path_buf(), FaultPlan::new(1, &faults)).unwrap()
    }

    fn conductor_meta() -> ActorMeta {
        ActorMeta { name: ActorName::CONDUCTOR, task_id: "task-00".into(), session_id: "conductor-session".into() }
    }

    fn trace_events(dir: &std::path::Path) -> Vec<(i64, String, String)> {
        crate::trace::trace_reader::read(&dir.join("trace.csv")).unwrap().into_iter().map(|r| (r.t_ms, r.event, r.detail)).collect()
    }

    #[test]
    fn ctx_sql_retries_a_busy_write_three_times_a_second_apart_then_gives_the_failure_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = engine(dir.path(), "write_hold_ms = 600000\nbusy_timeout_ms = 0\n");
        let outcome = Rc::new(std::cell::RefCell::new(None));
        let seen = outcome.clone();
        engine.spawn(conductor_meta(), 0, move |ctx| async move {
            let task = vec![(":task_id", Value::Text("task-01".into())), (":instruction_path", Value::Text("p".into()))];
            ctx.sql(Stmt::CreateTask, task).await.unwrap();
            let result = ctx.sql(Stmt::ConductorHeartbeat, vec![]).await;
            *seen.borrow_mut() = Some(result.map(|_| ()).map_err(|f| f.kind));
        });
        assert_eq!(engine.run().unwrap(), Ending::Quiescent);
        let (db, observers) = engine.finish().unwrap();
        db.close().unwrap();
        observers.trace.finish().unwrap();
        assert_eq!(*outcome.borrow(), Some(Err(crate::world::FailureKind::Busy)));
        let events = trace_events(dir.path());
        let retries: Vec<i64> = events.iter().filter(|(_, e, _)| e == "busy_retry").map(|(t, _, _)| *t).collect();
        // Each attempt is a statement round trip (100 ms) after the previous one's 1 s sleep.
        assert_eq!(retries, [200, 1300, 2400]);
        assert_eq!(events.iter().filter(|(_, _, d)| d.contains("simulated SQLITE_BUSY")).count(), 4);
    }

    #[test]
    fn a_timed_hang_of_the_conductor_delays_its_next_statement_by_the_hang() {
        let dir = tempfile::tempdir().unwrap();
        let mut engine = engine(dir.path(), "[[conductor_down]]\nfrom_ms = 50\nto_ms = 5050\n");
        engine.spawn(conductor_meta(), 0, |ctx| async move {
            ctx.sleep(60).await;
            ctx.sql(Stmt::PollTasks, vec![]).await.unwrap();
        });
        engine.run().unwrap();
        let (_db, observers) = engine.finish().unwrap();
        observers.trace.finish().unwrap();
        let events = trace_events(dir.path());
        let hang = events.iter().find(|(_, e, _)| e == "fault_hang").expect("the hang is in the trace");
        assert_eq!((hang.0, hang.2.as_str()), (50, "the conductor hangs for 5000 ms"));
        let poll = events.iter().find(|(_, e, _)| e == "sql").expect("the poll ran");
        // The sleep ended at 60 inside the hang: the actor woke at 5050, then the round trip.
        assert_eq!(poll.0, 5150);
    }
}
