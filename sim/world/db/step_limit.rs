//! A bound on how long one statement runs, counted in SQLite virtual-machine steps (issue 30:
//! a recursive CTE in `--sql` hung `run` and `sweep` forever). SQLite calls a progress handler
//! every `STEPS_PER_CALL` steps; past the run's budget (`run.sql_steps_max`) the handler
//! interrupts the statement, which fails with SQLITE_INTERRUPT, and the world names the
//! statement and its entry (`message`). Steps, not wall time: the same statement stops at the
//! same step on every machine, so a run that meets the limit is reproducible like any other.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rusqlite::Connection;

/// Steps between two calls of the handler: its cost is a call per this many steps.
const STEPS_PER_CALL: u64 = 1000;

/// The scenario's default `run.sql_steps_max` (the input layer owns it: sim/input/scenario/file.rs).
pub use crate::input::scenario::DEFAULT_STEPS_MAX;

/// The budget of the statement running now, shared with the connection's handler.
pub struct StepLimit {
    left: Arc<AtomicU64>,
    /// Set by the handler when it stopped a statement; cleared by `arm`.
    stopped: Arc<AtomicBool>,
    max: u64,
}

impl StepLimit {
    /// Installs the handler on `conn`, with the default budget per statement.
    pub fn install(conn: &mut Connection) -> rusqlite::Result<StepLimit> {
        let (left, stopped) = (Arc::new(AtomicU64::new(DEFAULT_STEPS_MAX)), Arc::new(AtomicBool::new(false)));
        let (budget, stop) = (left.clone(), stopped.clone());
        conn.progress_handler(
            STEPS_PER_CALL as std::ffi::c_int,
            Some(move || {
                let now = budget.load(Ordering::Relaxed);
                if now < STEPS_PER_CALL {
                    stop.store(true, Ordering::Relaxed);
                    // `true` interrupts the statement.
                    return true;
                }
                budget.store(now - STEPS_PER_CALL, Ordering::Relaxed);
                false
            }),
        )?;
        Ok(StepLimit { left, stopped, max: DEFAULT_STEPS_MAX })
    }

    pub fn set_max(&mut self, max: u64) {
        self.max = max;
    }

    /// A fresh budget for the statement about to run.
    pub fn arm(&self) {
        self.stopped.store(false, Ordering::Relaxed);
        self.refill();
    }

    /// A full budget again, keeping whether the last statement was stopped: the harness's own
    /// reads after a statement (the observer's, the verdict's) never run on what it left.
    pub fn refill(&self) {
        self.left.store(self.max, Ordering::Relaxed);
    }

    /// Whether `e` is this limit's interruption (SQLITE_INTERRUPT from the handler).
    pub fn spent_by(&self, e: &rusqlite::Error) -> bool {
        e.sqlite_error_code() == Some(rusqlite::ErrorCode::OperationInterrupted) && self.stopped.load(Ordering::Relaxed)
    }

    /// What the run reports: the statement, its entry, the limit and the key that sets it.
    pub fn message(&self, entry: &str) -> String {
        format!(
            "statement {entry} ran past {} SQLite steps (run.sql_steps_max) and was stopped: a statement that does not end, such as a recursive CTE without a bound? Raise run.sql_steps_max if it is only slow",
            self.max
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEVER_ENDS: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

    #[test]
    fn a_statement_that_never_ends_is_stopped_at_its_budget_and_the_next_gets_a_fresh_one() {
        let mut conn = Connection::open_in_memory().unwrap();
        let mut limit = StepLimit::install(&mut conn).unwrap();
        limit.set_max(50_000);
        limit.arm();
        let e = conn.query_row(NEVER_ENDS, [], |r| r.get::<_, i64>(0)).expect_err("stopped");
        assert!(limit.spent_by(&e), "{e}");
        limit.arm();
        let small: i64 = conn
            .query_row("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100) SELECT count(*) FROM c", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(small, 100, "a bounded statement within the budget runs");
        assert!(limit.message("`poll_tasks` (x.sql:1)").contains("`poll_tasks` (x.sql:1) ran past 50000 SQLite steps (run.sql_steps_max)"));
    }
}
