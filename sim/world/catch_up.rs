//! Bringing a run to its base run's snapshot on the base run's recorded replies, without
//! running a statement: `explore crashes` forks each explored run at the point (issue 47,
//! sim/run/fork.rs).
//!
//! The base run records every statement the world ran for an actor (`Playback`): what, with
//! what, at which instant, and what the world made of it — its rows or change count, or the
//! protocol failure it met. Not what was observed around a write (the task row before and
//! after, the messages inserted): that goes only into the statement's event, and a run
//! catching up drops its events unread, the snapshot's observers having had them. An explored
//! run then answers each statement from that record (`CatchUp`) until it reaches the snapshot: its
//! actors, executor, write lock and fault plan run as ever (their state is what a snapshot
//! cannot hold: an actor's memory is its `async` future), only SQLite is not asked. Sound for
//! the reason read sharing is (sim/world/read_replay.rs): while every statement a run asks is,
//! position for position, the base run's (the same statement, parameters and instant), the
//! database it would run on is the base run's, so its answer and what is observed around it
//! are too. Checked at every statement: the first that differs in anything parts the runs,
//! and the run stops as `parted` (its explorer makes it again the old way).

use std::sync::Arc;

use super::db::outcome::{Params, SqlOutcome};
use super::db::Observed;
use super::FailureKind;
use crate::vocab::Stmt;

/// What the world made of one statement: its answer with what was observed around it, or the
/// protocol failure it met (a failure that ends the run is no reply: it ends the base run).
pub type Played = std::result::Result<(SqlOutcome, Observed), (FailureKind, String)>;

/// One statement as the base run's world ran it.
struct Recorded {
    stmt: Stmt,
    params: Params,
    at_unix_ms: i64,
    answer: std::result::Result<SqlOutcome, (FailureKind, String)>,
}

/// Every statement a base run's world ran, in order (`World::record_playback`).
#[derive(Default)]
pub struct Playback {
    statements: Vec<Recorded>,
}

impl Playback {
    pub fn push(&mut self, stmt: Stmt, params: &Params, at_unix_ms: i64, played: &Played) {
        let answer = match played {
            Ok((outcome, _)) => Ok(outcome.clone()),
            Err(failure) => Err(failure.clone()),
        };
        self.statements.push(Recorded { stmt, params: params.clone(), at_unix_ms, answer });
    }

    /// Statements recorded so far: a snapshot's place in the record.
    pub fn len(&self) -> usize {
        self.statements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }
}

/// A run answering its statements from a base run's record up to `until` of them.
pub struct CatchUp {
    playback: Arc<Playback>,
    next: usize,
    until: usize,
}

impl CatchUp {
    pub fn new(playback: Arc<Playback>, until: usize) -> CatchUp {
        CatchUp { playback, next: 0, until }
    }

    /// The base run's reply to `stmt` with `params` at `at_unix_ms`, when it is the base run's
    /// next statement before the snapshot; `None`: the runs have parted.
    pub fn answer(&mut self, stmt: Stmt, params: &Params, at_unix_ms: i64) -> Option<Played> {
        if self.next >= self.until {
            return None;
        }
        let base = self.playback.statements.get(self.next)?;
        if base.stmt != stmt || base.at_unix_ms != at_unix_ms || !same_params(&base.params, params) {
            return None;
        }
        self.next += 1;
        // Nothing observed: it would go only into the statement's event, dropped unread.
        Some(match &base.answer {
            Ok(outcome) => Ok((outcome.clone(), Observed::default())),
            Err(failure) => Err(failure.clone()),
        })
    }

    /// Statements answered so far.
    pub fn answered(&self) -> usize {
        self.next
    }
}

/// `a == b`, the names first by address: both sides bind them from the same `&'static str`
/// literals, so the bytes of a name are compared only when the addresses differ (a tenth of
/// a catch-up went into this comparison, byte by byte).
fn same_params(a: &Params, b: &Params) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((a_name, a_value), (b_name, b_value))| (std::ptr::eq(*a_name, *b_name) || a_name == b_name) && a_value == b_value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::Value;

    fn params(task: &str) -> Params {
        vec![(":task_id", Value::Text(task.into()))]
    }

    fn rows(n: i64) -> Played {
        Ok((
            SqlOutcome {
                rows: crate::world::db::ResultRows::from_values(vec![vec![Value::Integer(n)]]),
                readonly: true,
                ..SqlOutcome::default()
            },
            Observed::default(),
        ))
    }

    fn playback() -> Arc<Playback> {
        let mut playback = Playback::default();
        playback.push(Stmt::ReadTaskState, &params("task-01"), 1_000, &rows(1));
        playback.push(Stmt::Heartbeat, &params("task-01"), 2_000, &Err((FailureKind::Constraint, "CHECK".into())));
        playback.push(Stmt::ReadTaskState, &params("task-01"), 3_000, &rows(3));
        Arc::new(playback)
    }

    fn value(played: Option<Played>) -> Option<Value> {
        played.and_then(|p| p.ok()).map(|(outcome, _)| Value::try_from(outcome.rows.value(0, 0).expect("one cell")).expect("UTF-8"))
    }

    #[test]
    fn each_statement_is_answered_with_the_base_run_s_reply_up_to_the_snapshot() {
        let mut catch_up = CatchUp::new(playback(), 2);
        assert_eq!(value(catch_up.answer(Stmt::ReadTaskState, &params("task-01"), 1_000)), Some(Value::Integer(1)));
        let failed = catch_up.answer(Stmt::Heartbeat, &params("task-01"), 2_000).expect("the base run's");
        assert_eq!(failed.unwrap_err().0, FailureKind::Constraint, "a write's failure too");
        assert_eq!(catch_up.answered(), 2);
        assert!(catch_up.answer(Stmt::ReadTaskState, &params("task-01"), 3_000).is_none(), "past the snapshot");
    }

    #[test]
    fn a_statement_that_differs_in_anything_parts_the_runs() {
        for (stmt, task, at) in
            [(Stmt::ReadTaskRecord, "task-01", 1_000), (Stmt::ReadTaskState, "task-02", 1_000), (Stmt::ReadTaskState, "task-01", 1_001)]
        {
            let mut catch_up = CatchUp::new(playback(), 3);
            assert!(catch_up.answer(stmt, &params(task), at).is_none(), "{stmt} {task} {at}");
            assert_eq!(catch_up.answered(), 0);
        }
        let mut short = CatchUp::new(playback(), 9);
        for (stmt, at) in [(Stmt::ReadTaskState, 1_000), (Stmt::Heartbeat, 2_000), (Stmt::ReadTaskState, 3_000)] {
            assert!(short.answer(stmt, &params("task-01"), at).is_some());
        }
        assert!(short.answer(Stmt::ReadTaskState, &params("task-01"), 4_000).is_none(), "past the record's end");
    }

    #[test]
    fn parameters_are_the_same_only_with_the_same_names_and_values_in_the_same_order() {
        let named = |name: &'static str, value: i64| (name, Value::Integer(value));
        let same = [named(":a", 1), named(":b", 2)].to_vec();
        assert!(same_params(&same, &same.clone()));
        // Another literal with the same bytes at another address is the same name.
        let other: &'static str = Box::leak(String::from(":a").into_boxed_str());
        assert!(same_params(&vec![named(":a", 1)], &vec![named(other, 1)]));
        for differs in [
            vec![named(":a", 1)],
            vec![named(":a", 1), named(":c", 2)],
            vec![named(":a", 1), named(":b", 3)],
            vec![named(":b", 2), named(":a", 1)],
        ] {
            assert!(!same_params(&same, &differs), "{differs:?}");
        }
    }
}
