//! What the engine hands a statement and gets back: its named parameters and its outcome (rows
//! for a query, the change count for a write). Apart from the database (sim/world/db.rs), so
//! the reads answered from a base run (sim/world/read_replay.rs) speak it without importing the
//! database that imports them.

use rusqlite::types::{Value, ValueRef};

use super::result_rows::ResultRows;
use crate::vocab::TaskState;

/// Named parameter values for one statement, in the engine's fixed order.
pub type Params = Vec<(&'static str, Value)>;

/// What a statement returned: rows for a query, the change count for a write.
#[derive(Clone, Debug, Default)]
pub struct SqlOutcome {
    pub rows_affected: usize,
    pub rows: ResultRows,
    /// True when the statement only reads.
    pub readonly: bool,
}

impl SqlOutcome {
    pub fn text(&self, row: usize, col: usize) -> Option<&str> {
        self.rows.text(row, col)
    }

    /// A task state column; `None` for a null or for text that is no state (a `--sql` file's
    /// query may return anything there).
    pub fn state(&self, row: usize, col: usize) -> Option<TaskState> {
        TaskState::parse(self.text(row, col)?)
    }

    pub fn int(&self, row: usize, col: usize) -> Option<i64> {
        match self.rows.value(row, col)? {
            ValueRef::Integer(i) => Some(i),
            ValueRef::Real(r) => Some(r as i64),
            _ => None,
        }
    }

    pub fn real(&self, row: usize, col: usize) -> Option<f64> {
        match self.rows.value(row, col)? {
            ValueRef::Integer(i) => Some(i as f64),
            ValueRef::Real(r) => Some(r),
            _ => None,
        }
    }
}
