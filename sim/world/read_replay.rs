//! A run that answers its reads from an earlier run's while it has done exactly what that run
//! did: `explore crashes`' runs share the base run's prefix up to their fault (issue 32).
//!
//! Why it is sound: a statement's result depends only on the database it runs on, the
//! statement, its parameters and the instant SQLite reads (`datetime('now')`), and the
//! database is the schema plus the writes executed so far, in order. So while every statement
//! a run executes is, position for position, the base run's (the same statement, parameters
//! and instant), its database is the base run's, and a read there returns the rows the base
//! run's read returned: those are handed back without running it. Writes always run (the
//! database must be the base run's when the runs part). The first statement that differs in
//! anything ends the sharing for the rest of the run; nothing is assumed about where the
//! fault strikes. A statement left to run at a matching position must return what the base
//! run's returned, or the sharing ends too (`confirm`): the argument is checked wherever the
//! run itself shows it. Where `run.sql_steps_max` stops a statement depends on its own steps
//! in that execution only (`CommsDb::execute_armed` resets SQLite's count), so a read not run
//! leaves no trace on the reads after it. `random()` would break the argument (a read that
//! draws moves the stream), and so would a statement SQLite counts as a read but that changes
//! the connection (`BEGIN`, `ROLLBACK TO`): a catalog whose SQL names either never replays
//! (`CommsDb::set_replay`).
//!
//! What it saves: most of a run's statements are reads (2,450 of quickstart's 2,694: the
//! watchers' polls), and an explored run repeats on average 46 % of the base run's statements
//! before its point (the `prefix` line of `explore crashes`). What it does not: the actors,
//! the trace and the oracles still see every event, so the run's trace and verdict are made
//! as before and are byte-identical (explore.csv's trace hashes; each distinct failure is run
//! again without it by `save_failure`, which checks the hash).

use std::sync::Arc;

use super::db::outcome::{Params, SqlOutcome};
use crate::vocab::Stmt;

/// One statement a base run executed: what, with what, when, and what it returned (`None`:
/// it failed).
struct BaseStatement {
    stmt: Stmt,
    params: Params,
    at_unix_ms: i64,
    outcome: Option<SqlOutcome>,
}

impl BaseStatement {
    /// The rows to answer with: a read's that succeeded.
    fn read(&self) -> Option<&SqlOutcome> {
        self.outcome.as_ref().filter(|o| o.readonly)
    }
}

/// Every statement a run executed, in order (`Execution::record_base`).
#[derive(Default)]
pub struct BaseRun {
    statements: Vec<BaseStatement>,
}

impl BaseRun {
    /// Adds the statement just executed, with what it returned if it succeeded.
    pub fn push(&mut self, stmt: Stmt, params: &Params, at_unix_ms: i64, outcome: &rusqlite::Result<SqlOutcome>) {
        let outcome = outcome.as_ref().ok().cloned();
        self.statements.push(BaseStatement { stmt, params: params.clone(), at_unix_ms, outcome });
    }
}

/// A run following a base run: where it is in the base run's statements, and whether it has
/// matched them all so far.
pub struct ReadReplay {
    base: Arc<BaseRun>,
    next: usize,
    matching: bool,
    /// The base run's statement that the one running now matched, until `confirm`.
    running: Option<usize>,
}

impl ReadReplay {
    pub fn new(base: Arc<BaseRun>) -> ReadReplay {
        ReadReplay { base, next: 0, matching: true, running: None }
    }

    /// Goes on from the base run's statement `next`: a run forked at a snapshot of the base
    /// run taken after `next` statements (sim/run/fork.rs), which got there on the base run's
    /// own replies and so matched every one before it.
    pub fn resume_at(&mut self, next: usize) {
        self.next = next;
        self.running = None;
    }

    /// Before `stmt` runs with `params` at `at_unix_ms`: the base run's rows when this and
    /// every statement before it are the base run's and this is a read that succeeded there.
    /// `None`: run it (a write, or anything once the runs have parted).
    pub fn answer(&mut self, stmt: Stmt, params: &Params, at_unix_ms: i64) -> Option<SqlOutcome> {
        if !self.matching {
            return None;
        }
        let same = self.base.statements.get(self.next).filter(|b| b.stmt == stmt && b.at_unix_ms == at_unix_ms && b.params == *params);
        let Some(base) = same else {
            self.matching = false;
            return None;
        };
        let at = self.next;
        self.next += 1;
        let answer = base.read().cloned();
        if answer.is_none() {
            self.running = Some(at);
        }
        answer
    }

    /// After a statement `answer` matched but left to run: what it returned must be what
    /// the base run's returned, or the runs have parted after all (the argument holds only
    /// while they are the same; this checks it where it can, at no cost to a run that is).
    pub fn confirm(&mut self, outcome: &rusqlite::Result<SqlOutcome>) {
        let Some(at) = self.running.take() else { return };
        let base = &self.base.statements[at].outcome;
        let same = match (outcome, base) {
            (Ok(ran), Some(then)) => ran.rows_affected == then.rows_affected && ran.rows == then.rows,
            (Err(_), None) => true,
            _ => false,
        };
        self.matching &= same;
    }

    /// Whether the run is still the base run, statement for statement.
    #[cfg(test)]
    fn matching(&self) -> bool {
        self.matching
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::types::Value;

    fn params(task: &str) -> Params {
        vec![(":task_id", Value::Text(task.into()))]
    }

    fn read(rows: i64) -> rusqlite::Result<SqlOutcome> {
        Ok(SqlOutcome {
            rows: crate::world::db::ResultRows::from_values(vec![vec![Value::Integer(rows)]]),
            readonly: true,
            ..SqlOutcome::default()
        })
    }

    fn base() -> Arc<BaseRun> {
        let mut base = BaseRun::default();
        base.push(Stmt::ReadTaskState, &params("task-01"), 1_000, &read(1));
        base.push(Stmt::Heartbeat, &params("task-01"), 2_000, &Ok(SqlOutcome { rows_affected: 1, ..SqlOutcome::default() }));
        base.push(Stmt::ReadTaskState, &params("task-01"), 3_000, &read(3));
        base.push(Stmt::ReadTaskState, &params("task-02"), 4_000, &Err(rusqlite::Error::InvalidQuery));
        base.push(Stmt::ReadTaskState, &params("task-01"), 5_000, &read(5));
        Arc::new(base)
    }

    fn rows(outcome: Option<SqlOutcome>) -> Option<Value> {
        outcome.map(|o| Value::try_from(o.rows.value(0, 0).expect("one cell")).expect("UTF-8"))
    }

    #[test]
    fn reads_are_answered_while_every_statement_is_the_base_run_s_and_writes_and_failed_reads_run() {
        let mut replay = ReadReplay::new(base());
        assert_eq!(rows(replay.answer(Stmt::ReadTaskState, &params("task-01"), 1_000)), Some(Value::Integer(1)));
        assert!(replay.answer(Stmt::Heartbeat, &params("task-01"), 2_000).is_none(), "a write runs");
        assert_eq!(rows(replay.answer(Stmt::ReadTaskState, &params("task-01"), 3_000)), Some(Value::Integer(3)));
        assert!(replay.answer(Stmt::ReadTaskState, &params("task-02"), 4_000).is_none(), "a read that failed there runs");
        assert!(replay.matching());
        assert_eq!(rows(replay.answer(Stmt::ReadTaskState, &params("task-01"), 5_000)), Some(Value::Integer(5)));
        assert!(replay.answer(Stmt::ReadTaskState, &params("task-01"), 6_000).is_none(), "past the base run's end");
        assert!(!replay.matching());
    }

    #[test]
    fn a_statement_left_to_run_that_returns_other_than_the_base_run_s_ends_the_sharing() {
        let mut replay = ReadReplay::new(base());
        replay.answer(Stmt::ReadTaskState, &params("task-01"), 1_000);
        assert!(replay.answer(Stmt::Heartbeat, &params("task-01"), 2_000).is_none());
        replay.confirm(&Ok(SqlOutcome { rows_affected: 1, ..SqlOutcome::default() }));
        assert!(replay.matching(), "the same change count");
        assert!(replay.answer(Stmt::ReadTaskState, &params("task-01"), 3_000).is_some());
        assert!(replay.answer(Stmt::ReadTaskState, &params("task-02"), 4_000).is_none());
        replay.confirm(&Err(rusqlite::Error::InvalidQuery));
        assert!(replay.matching(), "failed there, failed here");
        let mut parted = ReadReplay::new(base());
        parted.answer(Stmt::ReadTaskState, &params("task-01"), 1_000);
        parted.answer(Stmt::Heartbeat, &params("task-01"), 2_000);
        parted.confirm(&Ok(SqlOutcome { rows_affected: 0, ..SqlOutcome::default() }));
        assert!(!parted.matching(), "another change count");
        assert!(parted.answer(Stmt::ReadTaskState, &params("task-01"), 3_000).is_none());
        let mut failed = ReadReplay::new(base());
        failed.answer(Stmt::ReadTaskState, &params("task-01"), 1_000);
        failed.answer(Stmt::Heartbeat, &params("task-01"), 2_000);
        failed.confirm(&Err(rusqlite::Error::InvalidQuery));
        assert!(!failed.matching(), "failed here only");
    }

    #[test]
    fn the_first_statement_that_differs_ends_the_sharing_for_good() {
        for (stmt, task, at) in
            [(Stmt::ReadTaskRecord, "task-01", 1_000), (Stmt::ReadTaskState, "task-09", 1_000), (Stmt::ReadTaskState, "task-01", 1_001)]
        {
            let mut replay = ReadReplay::new(base());
            assert!(replay.answer(stmt, &params(task), at).is_none(), "{stmt} {task} {at}");
            assert!(!replay.matching());
            // Even the base run's own next statements are run from now on.
            assert!(replay.answer(Stmt::ReadTaskState, &params("task-01"), 1_000).is_none());
        }
        let mut replay = ReadReplay::new(base());
        replay.answer(Stmt::ReadTaskState, &params("task-01"), 1_000);
        assert!(replay.answer(Stmt::Heartbeat, &params("task-02"), 2_000).is_none());
        assert!(replay.answer(Stmt::ReadTaskState, &params("task-01"), 3_000).is_none(), "a write that differed parts the runs");
    }
}
