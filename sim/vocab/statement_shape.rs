//! The shape of a statement as the table of sim/vocab/statement.rs declares it: what a write may
//! touch, the typed arguments a call binds (borrowed: an id is copied once, into the value
//! SQLite binds) and the typed columns a reader takes from its result.

use std::marker::PhantomData;

use super::{MessageKind, Stmt, TaskState};

/// The rows a statement may touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    /// A read: nothing.
    Nothing,
    /// The row of `:task_id`.
    TaskRow,
    /// The conductor's own row, `task-00`.
    ConductorRow,
    /// A task row it inserts.
    NewTask,
    /// The row `fallback-<session_id>` it inserts (000 "Stop Hook", no task found).
    Fallback,
    /// One message it inserts; no task row.
    Message,
}

/// The type of a result column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColType {
    Text,
    Int,
    Real,
    /// Text holding a `TaskState`.
    State,
    /// Text holding a `MessageKind`.
    Kind,
    /// One value computed by an expression (a `RETURNING (SELECT …)`): SQLite names the column
    /// after the expression's text, so its name is not checked.
    Expr,
}

/// A result column: its name (SQLite's `sqlite3_column_name`) and type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub ty: ColType,
}

impl Column {
    /// Whether SQLite's name for a prepared statement's column is this one.
    pub fn named(&self, name: &str) -> bool {
        self.ty == ColType::Expr || self.name == name
    }
}

/// Markers for `Col<T>`, one per `ColType`: the world reads a column as its marker's type.
pub mod col_types {
    pub struct Text;
    pub struct Int;
    pub struct Real;
    pub struct State;
    pub struct Kind;
    pub struct Expr;
}

/// A result column's position, typed by what it holds (`cols::read_task_state::state`).
pub struct Col<T> {
    pub index: usize,
    of: PhantomData<fn() -> T>,
}

impl<T> Col<T> {
    pub const fn at(index: usize) -> Col<T> {
        Col { index, of: PhantomData }
    }
}

impl<T> Clone for Col<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Col<T> {}

/// One bound argument, borrowed from the caller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg<'a> {
    Text(&'a str),
    Int(i64),
    Null,
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(text: &'a str) -> Self {
        Arg::Text(text)
    }
}
impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(text: Option<&'a str>) -> Self {
        text.map_or(Arg::Null, Arg::Text)
    }
}
impl From<i64> for Arg<'_> {
    fn from(n: i64) -> Self {
        Arg::Int(n)
    }
}
impl From<Option<i64>> for Arg<'_> {
    fn from(n: Option<i64>) -> Self {
        n.map_or(Arg::Null, Arg::Int)
    }
}
impl From<TaskState> for Arg<'_> {
    fn from(state: TaskState) -> Self {
        Arg::Text(state.as_str())
    }
}
impl From<MessageKind> for Arg<'_> {
    fn from(kind: MessageKind) -> Self {
        Arg::Text(kind.as_str())
    }
}

/// The most arguments a statement of the table takes (`send_receipt`'s five).
pub const ARGS_MAX: usize = 5;

/// A statement with its arguments, in the table's order (`statement::args`). The arguments
/// sit in the call itself, not on the heap: a typed call allocates nothing until the world
/// binds it (issue 47 item 2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Call<'a> {
    pub stmt: Stmt,
    args: [(&'static str, Arg<'a>); ARGS_MAX],
    len: usize,
}

impl<'a> Call<'a> {
    /// `stmt` with `args`, at most `ARGS_MAX` of them (the table's widest line).
    pub fn new(stmt: Stmt, args: &[(&'static str, Arg<'a>)]) -> Call<'a> {
        let mut call = Call { stmt, args: [("", Arg::Null); ARGS_MAX], len: args.len() };
        call.args[..args.len()].copy_from_slice(args);
        call
    }

    /// The arguments, in the table's order.
    pub fn args(&self) -> &[(&'static str, Arg<'a>)] {
        &self.args[..self.len]
    }
}
