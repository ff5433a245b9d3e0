//! A panic inside a run is a bug of the harness, never of the input: it is caught where the run
//! is carried out (`run::execute`), so every caller — `run`, a sweep's pair, a sweep's
//! look at its saved failures, `replay`, `compare`, `bench` — gets a harness error (exit 3)
//! naming the panic and how to reproduce it, instead of exit 101 (issue 30: a sweep recorded a
//! panicking pair, and every later `sweep --force` into that folder panicked replaying it).

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::base::error::{Error, Result};

/// Runs `work`; a panic in it becomes a harness error saying what panicked (`what`).
pub fn guarded<T>(what: &str, work: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(payload) => Err(Error::harness(format!(
            "panic in {what}: {} (a bug in rehearsal, not in the input: please report it with the command below)",
            panic_message(&*payload)
        ))),
    }
}

/// The message of a caught panic (`panic!` with a string or a format), or "" for any other
/// payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload.downcast_ref::<String>().cloned().or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_harness_error_and_a_result_passes_through() {
        let e = guarded::<()>("the run", || panic!("clock went backwards: 5 -> 3")).expect_err("caught");
        assert_eq!(e.exit_code(), 3);
        assert!(e.to_string().contains("panic in the run: clock went backwards: 5 -> 3 (a bug in rehearsal"), "{e}");
        assert_eq!(guarded("the run", || Ok(7)).unwrap(), 7);
        assert_eq!(guarded::<()>("the run", || Err(Error::input("bad"))).unwrap_err().exit_code(), 2);
    }
}
