//! The statement table's types at the database's edge (issue 46): a typed `Call` becomes the
//! values SQLite binds, and a typed column (`cols::read_task_state::state`) is read back as
//! its type. The watchers and the lease's heartbeat call this way; the other actors still build
//! `Params` and read columns by index (docs/development.md "Typed statement calls" says how to
//! move them).

use rusqlite::types::Value;

use super::{Params, SqlOutcome};
use crate::vocab::statement::{col_types, Arg, Call, Col};
use crate::vocab::{MessageKind, TaskState};

/// The values a call binds, in the table's order, each borrowed text copied once here.
pub fn params_of(call: &Call<'_>) -> Params {
    call.args()
        .iter()
        .map(|(name, arg)| {
            let value = match *arg {
                Arg::Text(text) => Value::Text(text.to_string()),
                Arg::Int(n) => Value::Integer(n),
                Arg::Null => Value::Null,
            };
            (*name, value)
        })
        .collect()
}

/// How a column of each `ColType` is read from a result.
pub trait ReadColumn<'r> {
    type Out;
    fn read(outcome: &'r SqlOutcome, row: usize, col: usize) -> Option<Self::Out>;
}

impl<'r> ReadColumn<'r> for col_types::Text {
    type Out = &'r str;
    fn read(outcome: &'r SqlOutcome, row: usize, col: usize) -> Option<&'r str> {
        outcome.text(row, col)
    }
}

impl<'r> ReadColumn<'r> for col_types::Expr {
    type Out = &'r str;
    fn read(outcome: &'r SqlOutcome, row: usize, col: usize) -> Option<&'r str> {
        outcome.text(row, col)
    }
}

impl ReadColumn<'_> for col_types::Int {
    type Out = i64;
    fn read(outcome: &SqlOutcome, row: usize, col: usize) -> Option<i64> {
        outcome.int(row, col)
    }
}

impl ReadColumn<'_> for col_types::Real {
    type Out = f64;
    fn read(outcome: &SqlOutcome, row: usize, col: usize) -> Option<f64> {
        outcome.real(row, col)
    }
}

impl ReadColumn<'_> for col_types::State {
    type Out = TaskState;
    fn read(outcome: &SqlOutcome, row: usize, col: usize) -> Option<TaskState> {
        outcome.state(row, col)
    }
}

impl ReadColumn<'_> for col_types::Kind {
    type Out = MessageKind;
    fn read(outcome: &SqlOutcome, row: usize, col: usize) -> Option<MessageKind> {
        MessageKind::parse(outcome.text(row, col)?)
    }
}

impl SqlOutcome {
    /// Row `row`'s value of the typed column `col`; `None` for a missing row, a NULL, or text
    /// that is not of the column's type.
    pub fn get<'r, T: ReadColumn<'r>>(&'r self, row: usize, col: Col<T>) -> Option<T::Out> {
        T::read(self, row, col.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::statement::{args, cols};

    #[test]
    fn a_call_binds_its_arguments_in_the_tables_order_and_columns_read_typed() {
        let call = args::release_task("task-01", TaskState::Watching, None);
        assert_eq!(
            params_of(&call),
            vec![(":task_id", Value::Text("task-01".into())), (":state", Value::Text("watching".into())), (":stale_after_s", Value::Null)]
        );
        assert_eq!(call.stmt.params(), call.args().iter().map(|(name, _)| *name).collect::<Vec<_>>());
        let row = vec![Value::Text("needs_review".into()), Value::Integer(2), Value::Text("t".into()), Value::Real(3.5)];
        let outcome = SqlOutcome { rows: crate::world::db::ResultRows::from_values(vec![row]), readonly: true, ..SqlOutcome::default() };
        assert_eq!(outcome.get(0, cols::read_task_state::state), Some(TaskState::NeedsReview));
        assert_eq!(outcome.get(0, cols::read_task_state::retry_count), Some(2));
        assert_eq!(outcome.get(0, cols::read_task_state::seconds_stale), Some(3.5));
        assert_eq!(outcome.get(1, cols::read_task_state::state), None);
    }

    #[test]
    fn every_statements_call_binds_what_the_trace_records() {
        // The generated functions and `Stmt::params` come from one table line; one statement
        // of each parameter type is enough to hold them together.
        let call = args::send_receipt("task-01", "s", "m", 4, Some("2026-01-01"));
        assert_eq!(call.stmt.params(), call.args().iter().map(|(name, _)| *name).collect::<Vec<_>>());
        assert_eq!(call.args()[3].1, Arg::Int(4));
    }
}
