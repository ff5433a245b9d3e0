//! SQLite's write lock in virtual time (`[faults] write_hold_ms`, `busy_timeout_ms`,
//! `lock_model`): the one rule the world applies to every write (sim/world/mod.rs) and
//! `rehearsal calibrate load` applies to a real load's arrivals (sim/campaign/calibrate/load.rs),
//! so the prediction it compares with SQLite is the simulator's own rule, not a copy of it.
//!
//! The default (`lock_model = "busy-handler"`, docs/protocol.md C60) is what SQLite does: a
//! write that finds the lock held sleeps and tries again on the schedule of SQLite's default
//! busy handler (`sqliteDefaultBusyCallback`, src/main.c of SQLite: sleeps of 1, 2, 5, 10, 15,
//! 20, 25, 25, 25, 50, 50, 100 ms, then 100 ms each, the last one cut so the sleeps add up to
//! the busy timeout). Nothing queues: the lock goes to whichever write tries first after the
//! release, so a waiter can lose to a newcomer, and it gets SQLITE_BUSY at its last try, when
//! its sleeps add up to the timeout. SQLite counts the sleeps, not the clock (a try that comes
//! late because the process was descheduled does not shorten the next sleep), and so does
//! this rule. The old rule (`lock_model = "queue"`, C61) runs a waiter the instant the lock is
//! released, if that is within the timeout of its first try.

pub use crate::input::scenario::LockModel;

/// Lock contention in virtual time, for summaries and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Contention {
    /// Writes that found the lock held and then got it (each counted once).
    pub lock_waits: u64,
    /// Their waits, first try to the try that took the lock.
    pub lock_wait_ms_total: i64,
    /// SQLITE_BUSY answers (a write the tool layer retries may get several).
    pub busy_errors: u64,
    /// Writes that got SQLITE_BUSY at least once (counted by the world, which knows a retry
    /// from a new write: sim/world/mod.rs).
    pub busy_writes: u64,
}

/// A write that has found the lock held: when it first tried, and how many times the busy
/// handler has been called for it (SQLite's `count` argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiter {
    pub first_try_ms: i64,
    pub busy_count: u32,
}

/// What the lock says to a write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Grant {
    /// Free: the write goes ahead and holds it.
    Taken,
    /// Held: the write tries again at this instant, as this waiter.
    RetryAt(i64, Waiter),
    /// SQLITE_BUSY: the busy handler gave up.
    Busy,
}

/// SQLite's `sqliteDefaultBusyCallback` (src/main.c): the sleep before the next try after the
/// lock was found held `busy_count` times (0 the first time), or `None` when the handler gives
/// up and the statement gets SQLITE_BUSY.
pub fn busy_handler_sleep_ms(busy_count: u32, busy_timeout_ms: i64) -> Option<i64> {
    busy_handler_sleep(busy_count, busy_timeout_ms, 1)
}

/// The same in a time unit `scale` times finer (or, for a load compressed `scale` times, in
/// its simulated ms): every sleep and total times `scale`, the timeout in that unit.
pub fn busy_handler_sleep(busy_count: u32, busy_timeout: i64, scale: i64) -> Option<i64> {
    const DELAYS: [i64; 12] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];
    const TOTALS: [i64; 12] = [0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228];
    let count = busy_count as usize;
    let (delay, prior) = match DELAYS.get(count) {
        Some(&delay) => (delay * scale, TOTALS[count] * scale),
        None => (100 * scale, (TOTALS[11] + 100 * (count as i64 - 11)) * scale),
    };
    let busy_timeout_ms = busy_timeout;
    if prior + delay > busy_timeout_ms {
        let cut = busy_timeout_ms - prior;
        return (cut > 0).then_some(cut);
    }
    Some(delay)
}

/// The lock: when it is next free, and what it has counted.
#[derive(Clone, Debug)]
pub struct WriteLock {
    free_at_ms: i64,
    pub model: LockModel,
    /// The busy handler's sleeps are this many of the lock's time units (1: ms; 1000: µs; K:
    /// the simulated ms of a real load compressed K times, `[faults] busy_sleep_scale`).
    pub sleep_scale: i64,
    pub contention: Contention,
}

impl Default for WriteLock {
    fn default() -> WriteLock {
        WriteLock::new(LockModel::default())
    }
}

impl WriteLock {
    pub fn new(model: LockModel) -> WriteLock {
        WriteLock { free_at_ms: 0, model, sleep_scale: 1, contention: Contention::default() }
    }

    /// A write tries the lock at `now_ms` (`waiter` is `None` at its first try). A write that
    /// takes it holds it for `hold_ms()`, drawn only then (so the draws are those of the writes
    /// that ran).
    pub fn request(&mut self, now_ms: i64, waiter: Option<Waiter>, busy_timeout_ms: i64, hold_ms: impl FnOnce() -> i64) -> Grant {
        if now_ms >= self.free_at_ms {
            if let Some(waiter) = waiter {
                self.contention.lock_waits += 1;
                self.contention.lock_wait_ms_total += now_ms - waiter.first_try_ms;
            }
            self.free_at_ms = now_ms + hold_ms();
            return Grant::Taken;
        }
        let waiter = waiter.unwrap_or(Waiter { first_try_ms: now_ms, busy_count: 0 });
        let next_ms = match self.model {
            LockModel::BusyHandler => {
                busy_handler_sleep(waiter.busy_count, busy_timeout_ms, self.sleep_scale).map(|sleep_ms| now_ms + sleep_ms)
            }
            LockModel::Queue => (self.free_at_ms - waiter.first_try_ms <= busy_timeout_ms).then_some(self.free_at_ms),
        };
        match next_ms {
            Some(at_ms) => Grant::RetryAt(at_ms, Waiter { busy_count: waiter.busy_count + 1, ..waiter }),
            None => {
                self.contention.busy_errors += 1;
                Grant::Busy
            }
        }
    }

    /// Whether the lock is held at `now_ms` (by a write that took it before).
    pub fn held_at(&self, now_ms: i64) -> bool {
        now_ms < self.free_at_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs one write through the lock until it is taken or refused: its end and its tries.
    fn settle(lock: &mut WriteLock, at_ms: i64, timeout_ms: i64, hold_ms: i64) -> (Grant, Vec<i64>) {
        let (mut now_ms, mut waiter, mut tries) = (at_ms, None, Vec::new());
        loop {
            tries.push(now_ms);
            match lock.request(now_ms, waiter, timeout_ms, || hold_ms) {
                Grant::RetryAt(next_ms, next) => (now_ms, waiter) = (next_ms, Some(next)),
                end => return (end, tries),
            }
        }
    }

    #[test]
    fn the_busy_handler_sleeps_on_sqlites_schedule_and_its_last_try_falls_at_the_timeout() {
        // src/main.c: totals 0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228, then +100.
        let sleeps: Vec<i64> = (0..14).map_while(|count| busy_handler_sleep_ms(count, 1_000_000)).collect();
        assert_eq!(sleeps, [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100, 100, 100]);
        // An 8 ms timeout: tries at 0, 1, 3 and 8, then SQLITE_BUSY.
        let mut lock = WriteLock::default();
        assert_eq!(lock.request(0, None, 8, || 100), Grant::Taken);
        let (end, tries) = settle(&mut lock, 0, 8, 1);
        assert_eq!((end, tries), (Grant::Busy, vec![0, 1, 3, 8]));
        // A 10 ms timeout: the sleep after 8 is cut to 2 ms.
        let (end, tries) = settle(&mut lock, 0, 10, 1);
        assert_eq!((end, tries), (Grant::Busy, vec![0, 1, 3, 8, 10]));
        // In µs (scale 1000) the same tries, 1000 times apart.
        let sleeps_us: Vec<i64> = (0..5).map_while(|count| busy_handler_sleep(count, 10_000, 1000)).collect();
        assert_eq!(sleeps_us, [1000, 2000, 5000, 2000]);
        // A timeout of 0: no handler, SQLITE_BUSY at once.
        assert_eq!(settle(&mut lock, 0, 0, 1), (Grant::Busy, vec![0]));
        assert_eq!(lock.contention, Contention { lock_waits: 0, lock_wait_ms_total: 0, busy_errors: 3, busy_writes: 0 });
    }

    #[test]
    fn a_waiter_takes_the_lock_at_its_next_try_after_the_release_not_at_the_release() {
        let mut lock = WriteLock::default();
        assert_eq!(lock.request(0, None, 1000, || 4), Grant::Taken);
        // Held until 4: tries at 0, 1, 3 fail, 8 takes it (a queue would have run it at 4).
        let (end, tries) = settle(&mut lock, 0, 1000, 1);
        assert_eq!((end, tries), (Grant::Taken, vec![0, 1, 3, 8]));
        assert_eq!(lock.contention, Contention { lock_waits: 1, lock_wait_ms_total: 8, busy_errors: 0, busy_writes: 0 });
    }

    #[test]
    fn a_newcomer_between_the_release_and_the_waiters_next_try_wins() {
        let mut lock = WriteLock::default();
        assert_eq!(lock.request(0, None, 1000, || 4), Grant::Taken);
        let Grant::RetryAt(_, waiter) = lock.request(3, None, 1000, || unreachable!("held")) else { panic!("waits") };
        assert_eq!(waiter, Waiter { first_try_ms: 3, busy_count: 1 });
        // Released at 4; the waiter's next try is at 4 (3 + 1)... a newcomer at 4 asks first.
        assert_eq!(lock.request(4, None, 1000, || 50), Grant::Taken);
        assert_eq!(
            lock.request(4, Some(waiter), 1000, || unreachable!("held")),
            Grant::RetryAt(6, Waiter { first_try_ms: 3, busy_count: 2 })
        );
    }

    #[test]
    fn the_queue_runs_a_waiter_at_the_release_within_the_timeout_of_its_first_try() {
        let mut lock = WriteLock::new(LockModel::Queue);
        assert_eq!(lock.request(0, None, 100, || 50), Grant::Taken);
        let (end, tries) = settle(&mut lock, 10, 100, 500);
        assert_eq!((end, tries), (Grant::Taken, vec![10, 50]));
        assert_eq!(settle(&mut lock, 60, 100, 1), (Grant::Busy, vec![60]));
        assert_eq!(lock.contention, Contention { lock_waits: 1, lock_wait_ms_total: 40, busy_errors: 1, busy_writes: 0 });
    }
}
