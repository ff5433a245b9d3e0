//! A fixed pool of worker threads over a list of independent items, for sweeps and bench
//! grids alike. Results come back in the items' order, whatever the number of threads, so
//! output never depends on `--jobs`. A panic in one item is caught and becomes that item's
//! result alone. After Ctrl-C (`interrupt`) or when the caller's `should_stop` says so, no
//! item starts; the items under way finish, and those never started are `None`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One item's result: what the work returned, or the message of its panic.
pub type Caught<R> = std::result::Result<R, String>;

/// What a caller adds to the pool's loop (see `map_with`).
pub struct Hooks<Stop, Done> {
    /// Asked before each item starts: `true` starts no more items (those under way finish).
    /// Ctrl-C always stops the pool, whatever this says.
    pub should_stop: Stop,
    /// Called once for every finished item, on the worker that ran it, with the item's index
    /// and result, before that worker takes another item: progress, checkpoints, fail-fast.
    pub on_done: Done,
}

/// Runs `work` on every item with `jobs` threads (at least one, at most one per item) and
/// returns the results in the items' order: `None` for an item that never started.
pub fn map_with<T, R, Stop, Done>(
    jobs: usize,
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    hooks: Hooks<Stop, Done>,
) -> Vec<Option<Caught<R>>>
where
    T: Sync,
    R: Send,
    Stop: Fn() -> bool + Sync,
    Done: Fn(usize, &Caught<R>) + Sync,
{
    let slots: Mutex<Vec<Option<Caught<R>>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                if crate::base::interrupt::interrupted() || (hooks.should_stop)() {
                    return;
                }
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(index) else { return };
                let result =
                    catch_unwind(AssertUnwindSafe(|| work(item))).map_err(|panic| crate::base::panic_guard::panic_message(&*panic));
                (hooks.on_done)(index, &result);
                slots.lock().expect("no item panics while holding the lock")[index] = Some(result);
            });
        }
    });
    slots.into_inner().expect("threads joined")
}

/// As `map_with`, for items made one at a time by `items` (never listed: a shard of 10^10
/// seeds holds nothing before its first pair) and results handed, with their item, to
/// `on_done` rather than kept: memory does not grow with the items (issue 41). `on_done`
/// runs on the worker, with the item's index in `items`' order.
pub fn for_each<T, R>(
    jobs: usize,
    items: impl Iterator<Item = T> + Send,
    work: impl Fn(&T) -> R + Sync,
    should_stop: impl Fn() -> bool + Sync,
    on_done: impl Fn(usize, T, Caught<R>) + Sync,
) where
    T: Send,
{
    // At most one thread an item, when the iterator knows how many (the caller clamps
    // otherwise: `--jobs 2^64` must not try to start 2^64 threads).
    let jobs = items.size_hint().1.map_or(jobs, |most| jobs.min(most)).max(1);
    let next = Mutex::new(items.enumerate());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                if crate::base::interrupt::interrupted() || should_stop() {
                    return;
                }
                let Some((index, item)) = next.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).next() else { return };
                let result =
                    catch_unwind(AssertUnwindSafe(|| work(&item))).map_err(|panic| crate::base::panic_guard::panic_message(&*panic));
                on_done(index, item, result);
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// The pool with no hooks: never stops early, tells nobody.
    fn map<T: Sync, R: Send>(jobs: usize, items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<Option<Caught<R>>> {
        map_with(jobs, items, work, Hooks { should_stop: || false, on_done: |_: usize, _: &Caught<R>| {} })
    }

    /// Items take uneven times, so threads finish them out of order.
    fn slow_square(x: &u64) -> u64 {
        std::thread::sleep(std::time::Duration::from_micros((x * 37) % 11 * 100));
        x * x
    }

    #[test]
    fn results_come_back_in_item_order_for_any_number_of_jobs() {
        let items: Vec<u64> = (0..40).collect();
        let expected: Vec<Option<Caught<u64>>> = items.iter().map(|x| Some(Ok(x * x))).collect();
        for jobs in [1, 2, 3, 8, 100] {
            assert_eq!(map(jobs, &items, slow_square), expected, "jobs {jobs}");
        }
        assert!(map(4, &[] as &[u64], slow_square).is_empty());
    }

    #[test]
    fn a_panic_in_one_item_is_its_result_alone() {
        let items: Vec<u64> = (0..12).collect();
        let results = map(3, &items, |&x| if x == 5 { panic!("item {x} broke") } else { x + 1 });
        for (x, result) in items.iter().zip(&results) {
            match x {
                5 => assert_eq!(result, &Some(Err("item 5 broke".to_string()))),
                _ => assert_eq!(result, &Some(Ok(x + 1))),
            }
        }
    }

    #[test]
    fn a_stop_starts_no_more_items() {
        let items: Vec<u64> = (0..30).collect();
        // One worker: exactly the items before the stop ran.
        let stop = AtomicBool::new(false);
        let hooks = Hooks {
            should_stop: || stop.load(Ordering::SeqCst),
            on_done: |i: usize, _: &Caught<u64>| stop.store(i == 4, Ordering::SeqCst),
        };
        let results = map_with(1, &items, slow_square, hooks);
        assert!(results[..5].iter().all(Option::is_some) && results[5..].iter().all(Option::is_none), "{results:?}");
        // Several workers: at most the items under way when it stopped finish after it.
        for jobs in [2, 4] {
            let (stop, finished) = (AtomicBool::new(false), AtomicUsize::new(0));
            let on_done = |_: usize, _: &Caught<u64>| {
                // `>= 3`, not `== 3`: every worker that finishes from the third on stops the
                // pool before it picks again, so one preempted between its count and its store
                // cannot let another start an item past the bound.
                if finished.fetch_add(1, Ordering::SeqCst) + 1 >= 3 {
                    stop.store(true, Ordering::SeqCst);
                }
            };
            let results = map_with(jobs, &items, slow_square, Hooks { should_stop: || stop.load(Ordering::SeqCst), on_done });
            let ran = results.iter().filter(|r| r.is_some()).count();
            assert!((3..3 + jobs).contains(&ran), "jobs {jobs}: {ran} ran");
            assert_eq!(ran, finished.load(Ordering::SeqCst));
        }
    }

    #[test]
    fn for_each_hands_every_item_made_on_the_way_to_on_done_once_in_index_order() {
        for jobs in [1, 3] {
            let seen = Mutex::new(Vec::new());
            let on_done = |i: usize, x: u64, r: Caught<u64>| seen.lock().unwrap().push((i, x, r));
            for_each(jobs, (0..40_u64).map(|x| x * 2), |&x| if x == 14 { panic!("fourteen") } else { x + 1 }, || false, on_done);
            let mut seen = seen.into_inner().unwrap();
            seen.sort_by_key(|(i, _, _)| *i);
            let expected: Vec<(usize, u64, Caught<u64>)> =
                (0..40).map(|i| (i, i as u64 * 2, if i == 7 { Err("fourteen".to_string()) } else { Ok(i as u64 * 2 + 1) })).collect();
            assert_eq!(seen, expected, "jobs {jobs}");
        }
    }

    #[test]
    fn on_done_sees_every_item_once_with_its_result() {
        let items: Vec<u64> = (0..50).collect();
        let seen = Mutex::new(Vec::new());
        let on_done = |i: usize, r: &Caught<u64>| seen.lock().unwrap().push((i, r.clone()));
        let results = map_with(4, &items, |&x| if x == 7 { panic!("seven") } else { x * 3 }, Hooks { should_stop: || false, on_done });
        let mut seen = seen.into_inner().unwrap();
        seen.sort_by_key(|(i, _)| *i);
        let expected: Vec<(usize, Caught<u64>)> =
            items.iter().map(|&x| (x as usize, if x == 7 { Err("seven".to_string()) } else { Ok(x * 3) })).collect();
        assert_eq!(seen, expected);
        assert_eq!(results, expected.into_iter().map(|(_, r)| Some(r)).collect::<Vec<_>>());
    }
}
