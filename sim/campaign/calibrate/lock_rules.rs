//! rehearsal's lock rule (sim/world/write_lock.rs, the world's own) on a real load's writes,
//! three ways (issue 43), in the load's real µs: the busy handler's sleeps are real ms in the
//! load, so 1000 µs each (`sleep_scale`), its timeout the load's `.timeout` × 1000, and
//! SQLITE_BUSY retried 3 times 1 s / K apart as the tool layer (sim/actors/ctx.rs) and the
//! load's workers do.
//!
//! - [`open_loop`]: each write at a given instant, whatever happened before it. Fed the
//!   simulated instants / K (what the uncontended run planned) it is the open-loop prediction;
//!   fed each write's measured first try (`began` of attempt 1) it replays the load's own
//!   arrivals, which isolates the rule from how the load was generated: a diagnosis of the
//!   rule, not a prediction (it reads the measurement it is compared with).
//! - [`closed_loop`]: each actor's statements in order, each the compressed simulated gap
//!   after its previous one ended, as the closed-loop workers run them
//!   (sim/campaign/calibrate/closed_loop.rs): a read, and a write's work outside the lock,
//!   take a service time drawn from what the load measured for that statement, and a write
//!   that waits or gets SQLITE_BUSY delays its actor's next statements. It reads the load's
//!   distributions (service times, start delays, holds) but not its arrivals: a prediction.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::world::write_lock::{Grant, Waiter, WriteLock};

/// SQLITE_BUSY answers the tool layer retries (sim/actors/ctx.rs), as the load's workers do.
pub const BUSY_RETRIES: u32 = 3;

/// Lock figures of one side, in real ms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LockFigures {
    pub writes: u64,
    pub lock_waits: u64,
    pub wait_ms_total: f64,
    pub busy: u64,
}

/// The lock's settings in the load's real µs.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// The load's `.timeout` (`sqlite3_busy_timeout`), µs.
    pub busy_timeout_us: i64,
    /// The tool layer's 1 s between SQLITE_BUSY retries, compressed by K, µs.
    pub retry_gap_us: i64,
    /// Seeds the hold and service draws.
    pub seed: u64,
}

impl Rule {
    /// The rule of a load compressed `speedup` times with `.timeout` `busy_timeout_ms`.
    pub fn of_load(busy_timeout_ms: u64, speedup: u32, seed: u64) -> Rule {
        // The workers' own arithmetic (closed_loop.rs): 1 s / K in whole µs.
        Rule { busy_timeout_us: busy_timeout_ms as i64 * 1000, retry_gap_us: 1_000_000 / i64::from(speedup.max(1)), seed }
    }

    fn lock(&self) -> WriteLock {
        let mut lock = WriteLock::default();
        // The busy handler sleeps whole real ms: 1000 of the rule's µs.
        lock.sleep_scale = 1000;
        lock
    }
}

/// A hold, µs, for the write of this index (drawn only when the write takes the lock).
pub type DrawHold<'a> = dyn FnMut(usize, &mut ChaCha8Rng) -> i64 + 'a;

/// Per write, as the measurement counts: those that waited and then got the lock, and those
/// that got SQLITE_BUSY at least once.
#[derive(Default)]
struct Counted {
    waited: BTreeSet<usize>,
    refused: BTreeSet<usize>,
}

impl Counted {
    fn figures(&self, writes: u64, lock: &WriteLock) -> LockFigures {
        LockFigures {
            writes,
            lock_waits: self.waited.len() as u64,
            wait_ms_total: lock.contention.lock_wait_ms_total as f64 / 1000.0,
            busy: self.refused.len() as u64,
        }
    }
}

/// The rule on writes that each try first at a fixed instant: `arrivals` are (µs since the
/// load's start, the write's index).
pub fn open_loop(arrivals: &[(i64, usize)], rule: &Rule, hold_us: &mut DrawHold) -> LockFigures {
    let mut rng = ChaCha8Rng::seed_from_u64(rule.seed);
    let mut lock = rule.lock();
    let mut waiters: BTreeMap<usize, Waiter> = BTreeMap::new();
    // (instant, index, attempt): same-instant tries in the run's order, as the world's queue.
    let mut queue: BinaryHeap<Reverse<(i64, usize, u32)>> = arrivals.iter().map(|&(at, index)| Reverse((at, index, 1))).collect();
    let mut counted = Counted::default();
    while let Some(Reverse((now_us, index, attempt))) = queue.pop() {
        let waiter = waiters.remove(&index);
        match lock.request(now_us, waiter, rule.busy_timeout_us, || hold_us(index, &mut rng)) {
            Grant::Taken => {
                if waiter.is_some() {
                    counted.waited.insert(index);
                }
            }
            Grant::RetryAt(at_us, waiter) => {
                waiters.insert(index, waiter);
                queue.push(Reverse((at_us, index, attempt)));
            }
            Grant::Busy => {
                counted.refused.insert(index);
                if attempt <= BUSY_RETRIES {
                    queue.push(Reverse((now_us + rule.retry_gap_us, index, attempt + 1)));
                }
            }
        }
    }
    counted.figures(arrivals.len() as u64, &lock)
}

/// One statement of an actor, as the closed-loop load runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub index: usize,
    pub statement: String,
    pub writes: bool,
    /// Real µs after the actor's previous statement ended (after the load's start, the first).
    pub gap_us: i64,
}

/// What the load measured, to draw from: per statement, the real µs a read took or a write
/// took outside the lock (its wall less its wait and hold); and how late the workers started
/// statements after they were due (sleep overshoot, waiting for a CPU).
#[derive(Clone, Debug, Default)]
pub struct Service {
    pub by_statement_us: BTreeMap<String, Vec<i64>>,
    pub late_us: Vec<i64>,
}

impl Service {
    fn service(&self, statement: &str, rng: &mut ChaCha8Rng) -> i64 {
        self.by_statement_us.get(statement).map_or(0, |samples| resample(samples, rng))
    }

    fn late(&self, rng: &mut ChaCha8Rng) -> i64 {
        resample(&self.late_us, rng)
    }
}

/// One of `samples` at random (0 without samples).
pub fn resample(samples: &[i64], rng: &mut ChaCha8Rng) -> i64 {
    use rand::RngExt;
    if samples.is_empty() {
        return 0;
    }
    samples[rng.random_range(0..samples.len())]
}

/// Where an actor is: its next step, the attempt at it, and the busy handler's state.
#[derive(Default)]
struct Cursor {
    step: usize,
    attempt: u32,
    waiter: Option<Waiter>,
}

/// The rule on each actor's statements run in order (`actors`: each its steps), a statement
/// starting its gap after the previous one ended plus a start delay drawn from the load.
pub fn closed_loop(actors: &[Vec<Step>], rule: &Rule, service: &Service, hold_us: &mut DrawHold) -> LockFigures {
    let mut rng = ChaCha8Rng::seed_from_u64(rule.seed);
    let mut lock = rule.lock();
    let mut cursors: Vec<Cursor> = actors.iter().map(|_| Cursor { attempt: 1, ..Cursor::default() }).collect();
    // (instant, index of the statement, actor): same-instant tries in the run's order.
    let mut queue: BinaryHeap<Reverse<(i64, usize, usize)>> = BinaryHeap::new();
    for (actor, steps) in actors.iter().enumerate() {
        if let Some(first) = steps.first() {
            queue.push(Reverse((first.gap_us + service.late(&mut rng), first.index, actor)));
        }
    }
    let writes = actors.iter().flatten().filter(|s| s.writes).count() as u64;
    let mut counted = Counted::default();
    while let Some(Reverse((now_us, index, actor))) = queue.pop() {
        let cursor = &mut cursors[actor];
        let step = &actors[actor][cursor.step];
        let ended_us = if !step.writes {
            Some(now_us + service.service(&step.statement, &mut rng))
        } else {
            let mut held_us = 0;
            let waiter = cursor.waiter.take();
            let grant = lock.request(now_us, waiter, rule.busy_timeout_us, || {
                held_us = hold_us(index, &mut rng);
                held_us
            });
            match grant {
                Grant::Taken => {
                    if waiter.is_some() {
                        counted.waited.insert(index);
                    }
                    Some(now_us + held_us + service.service(&step.statement, &mut rng))
                }
                Grant::RetryAt(at_us, waiter) => {
                    cursor.waiter = Some(waiter);
                    queue.push(Reverse((at_us, index, actor)));
                    None
                }
                Grant::Busy => {
                    counted.refused.insert(index);
                    if cursor.attempt <= BUSY_RETRIES {
                        cursor.attempt += 1;
                        queue.push(Reverse((now_us + rule.retry_gap_us, index, actor)));
                        None
                    } else {
                        // Given up: the actor goes on to its next statement.
                        Some(now_us)
                    }
                }
            }
        };
        let Some(ended_us) = ended_us else { continue };
        cursor.step += 1;
        cursor.attempt = 1;
        if let Some(next) = actors[actor].get(cursor.step) {
            queue.push(Reverse((ended_us + next.gap_us + service.late(&mut rng), next.index, actor)));
        }
    }
    counted.figures(writes, &lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 ms timeout, retries 1 ms apart (a load at 1000x), holds of 5 ms.
    const RULE: Rule = Rule { busy_timeout_us: 10_000, retry_gap_us: 1000, seed: 1 };

    fn hold(us: i64) -> impl FnMut(usize, &mut ChaCha8Rng) -> i64 {
        move |_, _| us
    }

    fn write(index: usize, gap_us: i64) -> Step {
        Step { index, statement: "set_task_state".into(), writes: true, gap_us }
    }

    fn read(index: usize, gap_us: i64) -> Step {
        Step { index, statement: "poll_tasks".into(), writes: false, gap_us }
    }

    fn service(read_us: i64) -> Service {
        Service { by_statement_us: BTreeMap::from([("poll_tasks".to_string(), vec![read_us])]), late_us: vec![0] }
    }

    #[test]
    fn one_actor_s_writes_never_wait_for_each_other_closed_loop_but_do_at_fixed_instants() {
        // Three writes planned at the same instant by one actor: at fixed instants the second
        // waits (tries at 1, 3 and 8 ms, the first holds to 5 ms) and the third runs out of
        // timeout (its sleeps add up to 10 ms while the second holds to 13 ms), is retried at
        // 11 ms and waits again, to 14 ms.
        let open = open_loop(&[(0, 0), (0, 1), (0, 2)], &RULE, &mut hold(5000));
        assert_eq!((open.writes, open.lock_waits, open.busy), (3, 2, 1), "{open:?}");
        assert_eq!(open.wait_ms_total, 11.0);
        // In order, each after the previous ended: none waits.
        let actors = vec![vec![write(0, 0), write(1, 0), write(2, 0)]];
        let closed = closed_loop(&actors, &RULE, &service(0), &mut hold(5000));
        assert_eq!(closed, LockFigures { writes: 3, lock_waits: 0, wait_ms_total: 0.0, busy: 0 });
        // Two actors still contend, closed loop or not.
        let actors = vec![vec![write(0, 0)], vec![write(1, 0)]];
        let closed = closed_loop(&actors, &RULE, &service(0), &mut hold(5000));
        assert_eq!((closed.lock_waits, closed.busy), (1, 0), "{closed:?}");
    }

    #[test]
    fn a_write_that_tries_as_the_lock_is_released_does_not_wait_and_one_a_microsecond_earlier_does() {
        let at = |second_us: i64| open_loop(&[(0, 0), (second_us, 1)], &RULE, &mut hold(5000));
        assert_eq!((at(5000).lock_waits, at(5000).wait_ms_total), (0, 0.0));
        // 4.999 ms: it sleeps 1 ms and takes the lock at 5.999 ms.
        assert_eq!((at(4999).lock_waits, at(4999).wait_ms_total), (1, 1.0));
        // BUSY at the timeout's edge: the second write tries at 1, 3, 8 and 10 ms. Held to
        // 10 ms, its last try takes the lock; held a microsecond longer, it is refused, and
        // its retry 1 ms later finds the lock free (a new try: no wait).
        let held = |us: i64| open_loop(&[(0, 0), (0, 1)], &RULE, &mut hold(us));
        assert_eq!((held(10_000).busy, held(10_000).lock_waits), (0, 1));
        assert_eq!((held(10_001).busy, held(10_001).lock_waits), (1, 0));
    }

    #[test]
    fn a_read_s_service_time_delays_its_actor_s_next_write() {
        // Actor 0 reads, then writes; actor 1 writes at 2.5 ms and holds to 7.5 ms.
        let actors = vec![vec![read(0, 0), write(2, 0)], vec![write(1, 2500)]];
        let with_read_us = |us: i64| closed_loop(&actors, &RULE, &service(us), &mut hold(5000));
        // A read of 3 ms: actor 0's write comes at 3 ms, during actor 1's hold.
        assert_eq!(with_read_us(3000).lock_waits, 1);
        // A read of 7.5 ms: it comes as the lock is released: no wait. A microsecond less: a wait.
        assert_eq!(with_read_us(7500).lock_waits, 0);
        assert_eq!(with_read_us(7499).lock_waits, 1);
    }

    #[test]
    fn a_write_refused_four_times_is_given_up_and_its_actor_goes_on_when_the_last_retry_ended() {
        // Actor 0 holds from 0 to 100 ms. Actor 1's write (at 1 µs) is refused at 10.001 ms
        // and at each of its 3 retries 1 ms later (tries of 10 ms each), the last at
        // 43.001 ms; it gives up there, its read takes no time, and its next write comes
        // its gap later.
        let with_gap_us = |gap_us: i64| {
            let actors = vec![vec![write(0, 0)], vec![write(1, 1), read(2, 0), write(3, gap_us)]];
            closed_loop(&actors, &RULE, &service(0), &mut hold(100_000))
        };
        // At once: refused too.
        assert_eq!(with_gap_us(0), LockFigures { writes: 3, lock_waits: 0, wait_ms_total: 0.0, busy: 2 });
        // 56 ms later (99.001 ms): it tries again at 100.001 ms and takes the lock, a wait.
        let f = with_gap_us(56_000);
        assert_eq!((f.busy, f.lock_waits, f.wait_ms_total), (1, 1, 1.0), "{f:?}");
        // 57 ms later (100.001 ms): the lock is free: no wait.
        let f = with_gap_us(57_000);
        assert_eq!((f.busy, f.lock_waits), (1, 0), "{f:?}");
    }
}
