//! The event stream's consumers (trace rows, checker, coverage: `Observers`) on a
//! thread of their own. A `perf` profile of fleet-day (issue 32) put them at ~24 % of the
//! simulation thread's samples; nothing in the run reads them before it ends, so a second core
//! can take them while the simulation goes on.
//!
//! Order is what makes this safe: the events go in emission order over one bounded channel to
//! one consumer, which hands each to the trace, the checker and coverage exactly as the engine
//! did on its own thread, so the trace's bytes, the violations and the counts are the same
//! (golden hashes unchanged; a test below compares both ways). Events travel in batches: one
//! send per step would wake the consumer hundreds of thousands of times a run. The channel is
//! bounded, so the simulation runs at most `BATCHES_IN_FLIGHT` batches ahead of its judges.

use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::base::error::{Error, Result};
use crate::judging::coverage::CoverageObserver;
use crate::judging::oracle::Checker;
use crate::trace::TraceSink;
use crate::world::event::Event;

/// Events per batch: a day's fleet (~400,000 events) makes ~800 sends.
const BATCH_EVENTS: usize = 512;
/// Batches the simulation may be ahead of the consumer.
const BATCHES_IN_FLIGHT: usize = 8;

/// What the consumer thread gives back: the observers, and the first error one of them
/// returned (the events after it were not consumed, as when the engine stopped at it).
/// The consumers of the event stream.
pub struct Observers {
    pub trace: TraceSink,
    pub checker: Checker,
    pub coverage: CoverageObserver,
}

impl Observers {
    /// Observers that consume what follows as these would: the checker and coverage copied,
    /// the trace's hash so far carried on (`TraceSink::fork`). `explore crashes` keeps such
    /// copies at its base run's snapshots (sim/run/fork.rs). `None` for a trace that writes a
    /// file. The copy's trace makes its rows in `buffer` (`TraceSink::fork`).
    pub fn fork(&mut self, buffer: Vec<u8>) -> Option<Observers> {
        Some(Observers { trace: self.trace.fork(buffer)?, checker: self.checker.clone(), coverage: self.coverage.clone() })
    }

    pub(crate) fn consume(&mut self, event: &Event) -> Result<()> {
        self.trace.write(event)?;
        self.checker.on_event(event);
        self.coverage.on_event(event);
        Ok(())
    }
}

type Outcome = (Observers, Result<()>);

pub struct ObserverThread {
    /// The batch being filled.
    batch: Vec<Event>,
    to_thread: Option<SyncSender<Vec<Event>>>,
    /// Batches the consumer has emptied, to be filled again.
    emptied: Receiver<Vec<Event>>,
    thread: Option<JoinHandle<Outcome>>,
}

impl ObserverThread {
    /// Starts the thread that consumes events with `observers`.
    pub fn start(mut observers: Observers) -> Result<ObserverThread> {
        let (to_thread, batches) = sync_channel::<Vec<Event>>(BATCHES_IN_FLIGHT);
        let (give_back, emptied) = channel();
        let thread = std::thread::Builder::new()
            .name("observers".to_string())
            .spawn(move || {
                let mut outcome = Ok(());
                for mut batch in batches {
                    if outcome.is_ok() {
                        outcome = batch.iter().try_for_each(|event| observers.consume(event));
                    }
                    batch.clear();
                    // The simulation may have finished and stopped taking batches back.
                    let _ = give_back.send(batch);
                }
                (observers, outcome)
            })
            .map_err(|e| Error::harness(format!("cannot start the observers' thread: {e}")))?;
        Ok(ObserverThread { batch: Vec::with_capacity(BATCH_EVENTS), to_thread: Some(to_thread), emptied, thread: Some(thread) })
    }

    /// Takes every event of `pending` (in order), sending a batch once it is full.
    pub fn take(&mut self, pending: &mut Vec<Event>) {
        self.batch.append(pending);
        if self.batch.len() >= BATCH_EVENTS {
            self.send();
        }
    }

    fn send(&mut self) {
        let empty = self.emptied.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH_EVENTS));
        let full = std::mem::replace(&mut self.batch, empty);
        if let Some(to_thread) = &self.to_thread {
            // Only a consumer that panicked has hung up; `finish` reports it.
            let _ = to_thread.send(full);
        }
    }

    /// Sends what is left, waits for the consumer and hands the observers back with the first
    /// error they met. A panic on the consumer's thread goes on here, on the caller's.
    pub fn finish(mut self) -> Outcome {
        if !self.batch.is_empty() {
            self.send();
        }
        drop(self.to_thread.take());
        match self.thread.take().expect("joined once").join() {
            Ok(outcome) => outcome,
            Err(payload) => std::panic::resume_unwind(payload),
        }
    }
}

impl Drop for ObserverThread {
    /// A run that ends early (an error, a panic) still lets the consumer finish and exit.
    fn drop(&mut self) {
        drop(self.to_thread.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::scenario::ProtocolSettings;
    use crate::judging::coverage::CoverageObserver;
    use crate::judging::oracle::Checker;
    use crate::trace::TraceSink;
    use crate::world::event::{EventKind, Who};

    const EPOCH_MS: i64 = 1_767_225_600_000;

    fn observers(trace: &std::path::Path) -> Observers {
        Observers {
            trace: TraceSink::create(trace, EPOCH_MS).unwrap(),
            checker: Checker::new(ProtocolSettings::default()),
            coverage: CoverageObserver::default(),
        }
    }

    /// Events of several kinds, more than two batches and not a whole number of them.
    fn events() -> Vec<Event> {
        (0..(2 * BATCH_EVENTS + 277) as i64)
            .map(|i| {
                let kind = match i % 3 {
                    0 => EventKind::Note { what: "step".into(), detail: format!("event {i}") },
                    1 => EventKind::Swarm { name: format!("odds_{i}"), value: format!("{}", i * 7) },
                    _ => EventKind::FaultHang { who: format!("task {i}"), ms: i },
                };
                Event { t_ms: i * 250, who: Who::Engine, session: "".into(), kind }
            })
            .collect()
    }

    /// The thread's trace is the inline one byte for byte: every event, in order, the last
    /// partial batch included; the steps' sizes (how the engine drains) do not matter.
    #[test]
    fn the_thread_writes_the_trace_the_simulation_thread_would() {
        let dir = tempfile::tempdir().unwrap();
        let mut inline = observers(&dir.path().join("inline.csv"));
        for event in events() {
            inline.consume(&event).unwrap();
        }
        let mut thread = ObserverThread::start(observers(&dir.path().join("thread.csv"))).unwrap();
        let mut all = events();
        while !all.is_empty() {
            let step = all.len().min(1 + all.len() % 5);
            let mut pending: Vec<Event> = all.drain(..step).collect();
            thread.take(&mut pending);
            assert!(pending.is_empty(), "every event is taken");
        }
        let (threaded, outcome) = thread.finish();
        outcome.unwrap();
        assert_eq!(threaded.trace.rows_written(), inline.trace.rows_written());
        assert_eq!(threaded.checker.violations(), inline.checker.violations());
        let (inline_hash, thread_hash) = (inline.trace.finish().unwrap(), threaded.trace.finish().unwrap());
        assert_eq!(thread_hash, inline_hash);
        let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
        assert_eq!(read("thread.csv"), read("inline.csv"));
    }
}
