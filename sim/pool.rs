//! A fixed pool of worker threads over a list of independent jobs. Results come back in the
//! jobs' order, whatever the number of threads, so output never depends on `--jobs`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `f` on every item with `jobs` threads. A panic in one job is caught and returned as
/// `Err(message)` for that job alone; the others carry on. After Ctrl-C no job starts, and
/// those never started are `None`. `progress` is called after each job with the number
/// finished so far.
pub fn map<T: Sync, R: Send>(
    jobs: usize,
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
    progress: impl Fn(usize) + Sync,
) -> Vec<Option<std::result::Result<R, String>>> {
    let slots: Mutex<Vec<Option<std::result::Result<R, String>>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let (next, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                if crate::interrupt::interrupted() {
                    return;
                }
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(index) else { return };
                let outcome = catch_unwind(AssertUnwindSafe(|| f(item))).map_err(|panic| {
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                });
                slots.lock().expect("no job panics while holding the lock")[index] = Some(outcome);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1);
            });
        }
    });
    slots.into_inner().expect("threads joined")
}
