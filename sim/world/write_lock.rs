//! SQLite's write lock in virtual time (`[faults] write_hold_ms`, `busy_timeout_ms`): the one
//! rule the world applies to every write (sim/world/mod.rs) and `rehearsal calibrate load` applies
//! to a real load's arrivals (sim/campaign/calibrate/load.rs), so the prediction it compares with
//! SQLite is the simulator's own rule, not a copy of it.

/// Lock contention in virtual time, for summaries and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Contention {
    pub lock_waits: u64,
    pub lock_wait_ms_total: i64,
    pub busy_errors: u64,
}

/// What the lock says to a write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grant {
    /// Free: the write goes ahead and holds it.
    Taken,
    /// Held, but released within the busy timeout: the write runs again at this instant.
    WaitUntil(i64),
    /// Held past the busy timeout: SQLITE_BUSY.
    Busy,
}

/// The lock: when it is next free, and what it has counted.
#[derive(Clone, Debug, Default)]
pub struct WriteLock {
    free_at_ms: i64,
    pub contention: Contention,
}

impl WriteLock {
    /// A write at `now_ms` waits for the lock up to `busy_timeout_ms` (its request runs again
    /// at the release), beyond it SQLite answers SQLITE_BUSY; a write that takes it holds it
    /// for `hold_ms()`, drawn only then (so the draws are those of the writes that ran).
    pub fn request(&mut self, now_ms: i64, busy_timeout_ms: i64, hold_ms: impl FnOnce() -> i64) -> Grant {
        if now_ms < self.free_at_ms {
            let wait_ms = self.free_at_ms - now_ms;
            if wait_ms <= busy_timeout_ms {
                self.contention.lock_waits += 1;
                self.contention.lock_wait_ms_total += wait_ms;
                return Grant::WaitUntil(self.free_at_ms);
            }
            self.contention.busy_errors += 1;
            return Grant::Busy;
        }
        self.free_at_ms = now_ms + hold_ms();
        Grant::Taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_waits_within_the_timeout_and_is_refused_beyond_it() {
        let mut lock = WriteLock::default();
        assert_eq!(lock.request(0, 100, || 50), Grant::Taken);
        assert_eq!(lock.request(10, 100, || unreachable!("no draw while held")), Grant::WaitUntil(50));
        assert_eq!(lock.request(50, 100, || 500), Grant::Taken);
        assert_eq!(lock.request(60, 100, || 1), Grant::Busy);
        assert_eq!(lock.contention, Contention { lock_waits: 1, lock_wait_ms_total: 40, busy_errors: 1 });
    }
}
