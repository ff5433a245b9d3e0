//! Runs forked from a base run at a snapshot: how `explore crashes` skips the prefix each of
//! its runs shares with the base run (issue 47).
//!
//! A run with one fault added is its base run, event for event, until the fault strikes
//! (sim/campaign/explore/mod.rs). So the base run keeps, every so many statements, a snapshot
//! at an engine step's boundary (every event before it consumed): every row of `comms.db`
//! (sim/world/db/rows_image.rs), its counters, and a copy of its observers — the checker and
//! coverage are plain data, the trace is its hash so far (`Observers::fork`). It also records
//! what the world made of every statement (sim/world/catch_up.rs). An explored run whose
//! fault strikes after a snapshot starts as a run of its own, but its statements are answered
//! from that record and its events are dropped unread, until it reaches the snapshot's step;
//! there its database takes the snapshot's rows and its observers are the snapshot's copies,
//! and it goes on as any run (its reads shared while it is still the base run,
//! sim/world/read_replay.rs). What is not snapshotted is run again: the actors (an actor's
//! memory is its `async` future, which can be neither copied nor serialised), the executor,
//! the write lock and the fault plan, all cheap beside SQLite and the observers.
//!
//! Checked, not assumed: every statement of the catch-up must be the base run's (statement,
//! parameters, instant), and at the snapshot's step the run must have asked as many
//! statements, been answered as many and emitted as many events as the base run had. Anything
//! else ends the run as parted (`parted`), and its explorer makes it again from the start.

use std::sync::{Arc, Mutex};

use crate::base::error::Error;
use crate::run::observer_thread::Observers;
use crate::world::catch_up::Playback;
use crate::world::db::rows_image::RowsImage;
use crate::world::db::DbStats;

/// Statements asked between two snapshots at first; doubled each time the snapshots are
/// thinned.
const SNAPSHOT_EVERY_ASKED: u64 = 16;
/// Snapshots kept at most: past it every other one is dropped, so a long base run holds a
/// bounded number (and the catch-up from the nearest one stays a small part of any run).
const SNAPSHOTS_MAX: usize = 256;

/// The base run at one engine step's boundary.
pub struct Snapshot {
    /// Events the executor had popped: the step boundary.
    pub popped: u64,
    /// Statements every actor had asked to run (`FaultPlan::asked`): a point with at least
    /// as many before it strikes after this snapshot.
    pub asked: u64,
    /// Statements the world had run (the record's length at this step).
    pub played: usize,
    /// Events emitted.
    pub emitted: u64,
    /// The database's counters; `statements` is also the place in the base run's record of
    /// reads (sim/world/read_replay.rs).
    pub stats: DbStats,
    rows: RowsImage,
    /// Copied again for each run forked here (each consumes on its own).
    observers: Mutex<Observers>,
}

impl Snapshot {
    pub fn rows(&self) -> &RowsImage {
        &self.rows
    }

    /// Observers that go on from this snapshot's, their trace's rows made in `buffer` (the
    /// forked run's own trace buffer, unused while it caught up).
    pub fn observers(&self, buffer: Vec<u8>) -> Option<Observers> {
        self.observers.lock().ok()?.fork(buffer)
    }
}

/// What runs forked from a base run start from: its record of replies and its snapshots, in
/// the order taken.
#[derive(Default)]
pub struct ForkBase {
    pub playback: Arc<Playback>,
    pub snapshots: Vec<Snapshot>,
}

impl ForkBase {
    /// The last snapshot a run can start from whose first difference from the base run is
    /// at statement `asked` (its fault strikes when it is asked), if any.
    pub fn nearest(&self, asked: u64) -> Option<usize> {
        self.snapshots.iter().rposition(|s| s.asked <= asked)
    }
}

/// The snapshots a base run takes as it goes.
pub struct Snapshots {
    every: u64,
    next_at: u64,
    taken: Vec<Snapshot>,
}

impl Default for Snapshots {
    fn default() -> Snapshots {
        Snapshots { every: SNAPSHOT_EVERY_ASKED, next_at: SNAPSHOT_EVERY_ASKED, taken: Vec::new() }
    }
}

impl Snapshots {
    /// Whether a snapshot is due once `asked` statements have been asked.
    pub fn due(&self, asked: u64) -> bool {
        asked >= self.next_at
    }

    /// Keeps a snapshot of the base run at this boundary.
    #[allow(clippy::too_many_arguments)]
    pub fn keep(&mut self, popped: u64, asked: u64, played: usize, emitted: u64, stats: DbStats, rows: RowsImage, observers: Observers) {
        self.taken.push(Snapshot { popped, asked, played, emitted, stats, rows, observers: Mutex::new(observers) });
        self.next_at = asked + self.every;
        if self.taken.len() >= SNAPSHOTS_MAX {
            let mut index = 0;
            self.taken.retain(|_| {
                index += 1;
                index % 2 == 0
            });
            self.every *= 2;
        }
    }

    pub fn into_base(self, playback: Playback) -> ForkBase {
        ForkBase { playback: Arc::new(playback), snapshots: self.taken }
    }
}

/// Whether `e` ended a forked run that parted from its base run before its snapshot.
pub fn parted(e: &Error) -> bool {
    matches!(e, Error::Harness(message) if message == crate::world::PARTED)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observers() -> Observers {
        Observers {
            trace: crate::trace::TraceSink::unwritten(0),
            checker: crate::judging::oracle::Checker::new(Default::default()),
            coverage: Default::default(),
        }
    }

    #[test]
    fn snapshots_are_taken_every_so_many_statements_and_thinned_past_the_most_kept() {
        let mut snapshots = Snapshots::default();
        let mut asked = 0;
        let mut taken_at = Vec::new();
        while asked < 40 * SNAPSHOT_EVERY_ASKED * SNAPSHOTS_MAX as u64 {
            asked += 3;
            if snapshots.due(asked) {
                taken_at.push(asked);
                snapshots.keep(asked, asked, 0, 0, DbStats::default(), RowsImage::default(), observers());
            }
        }
        assert!(snapshots.taken.len() < SNAPSHOTS_MAX && snapshots.taken.len() > SNAPSHOTS_MAX / 4, "{}", snapshots.taken.len());
        let base = snapshots.into_base(Playback::default());
        let kept: Vec<u64> = base.snapshots.iter().map(|s| s.asked).collect();
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "in the order taken");
        assert!(kept.iter().all(|a| taken_at.contains(a)));
        assert_eq!(base.nearest(kept[0] - 1), None, "no snapshot before the first");
        assert_eq!(base.nearest(kept[0]), Some(0), "a point asked at the snapshot's count strikes after it");
        assert_eq!(base.nearest(kept[1] + 1), Some(1));
        assert_eq!(base.nearest(u64::MAX), Some(kept.len() - 1));
    }
}
