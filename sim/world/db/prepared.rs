//! The run's connection with every statement it executes prepared once, kept by handle.
//!
//! `prepare_cached` finds a statement by its SQL text: every execution hashed the text twice
//! (lookup, and return to the cache) and resolved each named parameter by string search.
//! Three of those per write (the statement and the observer's two reads of the row). Here each
//! protocol statement sits at its `Stmt`'s index with its parameters' indexes resolved once,
//! and the observer's two statements have fields of their own.
//!
//! A `Statement` borrows its `Connection`; to keep both in one value the connection lives on
//! the heap at a fixed address (a leaked `Box`) and the statements are finalized before it is
//! freed (`Drop`, `into_connection`). Only sim/world/db.rs sees `Prepared` (`pub(super)`): a
//! `&mut` to one of its statements could move it out and past the connection's life.

use std::ptr::NonNull;

use rusqlite::types::Value;
use rusqlite::{Connection, PrepFlags, Statement};

use super::schema_guard::Guard;
use crate::base::error::Result;
use crate::input::sql_catalog::Catalog;
use crate::vocab::Stmt;

/// The observer's look at a task row (not a protocol statement), with its rowid: the update
/// hook names changed rows by rowid, and a row changed that is not this one is another task's.
const SNAPSHOT_SQL: &str = "SELECT state, coalesce(session_id, ''), coalesce(retry_count, 0), (julianday('now') - julianday(last_heartbeat)) * 86400, rowid FROM orchestration_tasks WHERE task_id = ?1";
/// The observer's read-back of a message a statement inserted.
const MESSAGE_SQL: &str = "SELECT id, task_id, coalesce(message_type, '') FROM orchestration_messages WHERE id = ?1";

/// One protocol statement, prepared, with what is known of it before it runs. The run and the
/// floor it is compared to (sim/campaign/overhead.rs) bind through the same code.
pub struct Slot<'conn> {
    pub statement: Statement<'conn>,
    /// `(name, index)` for each parameter the engine supplies that the statement uses.
    params: Vec<(&'static str, usize)>,
    pub readonly: bool,
    pub column_count: usize,
}

impl<'conn> Slot<'conn> {
    /// Prepares `sql`, the catalog's text for `stmt`, to be kept (SQLITE_PREPARE_PERSISTENT).
    pub fn prepare(conn: &'conn Connection, stmt: Stmt, sql: &str) -> rusqlite::Result<Slot<'conn>> {
        Slot::kept(stmt, prepare_kept(conn, sql)?)
    }

    /// `statement`, prepared for `stmt`, with its parameters' indexes resolved.
    fn kept(stmt: Stmt, statement: Statement<'conn>) -> rusqlite::Result<Slot<'conn>> {
        let mut params = Vec::new();
        for name in stmt.supplied() {
            if let Some(index) = statement.parameter_index(name)? {
                params.push((*name, index));
            }
        }
        let (readonly, column_count) = (statement.readonly(), statement.column_count());
        Ok(Slot { statement, params, readonly, column_count })
    }

    /// Binds `params` from a fresh start (every parameter NULL, as a statement taken from the
    /// cache was); names the statement does not use are skipped.
    pub fn bind(&mut self, params: &[(&'static str, Value)]) -> rusqlite::Result<()> {
        self.statement.clear_bindings();
        for (param, value) in params {
            match self.params.iter().find(|(name, _)| name == param) {
                Some((_, index)) => self.statement.raw_bind_parameter(*index, value)?,
                // A name outside `Stmt::supplied` (none today): resolve it the slow way.
                None => {
                    if let Some(index) = self.statement.parameter_index(param)? {
                        self.statement.raw_bind_parameter(index, value)?;
                    }
                }
            }
        }
        Ok(())
    }
}

struct Statements {
    /// At `index(stmt)`.
    protocol: Vec<Slot<'static>>,
    snapshot: Statement<'static>,
    message: Statement<'static>,
}

pub(super) struct Prepared {
    /// `None` only while being taken apart; dropped before `conn` is freed.
    statements: Option<Statements>,
    /// From `Box::into_raw`; freed by `Drop` or handed back by `into_connection`.
    conn: Option<NonNull<Connection>>,
    /// The connection's authorizer: a field, so it outlives the connection (`Drop` frees the
    /// connection first), or is removed from it before it is handed back.
    guard: Option<Guard>,
}

impl Prepared {
    /// Prepares every statement of `catalog` (one per `Stmt`) and the observer's two, each
    /// once: the catalog's checks (`Catalog::validate_each`) run on the handles kept, so a
    /// statement that does not prepare, or uses a parameter the engine does not supply, is
    /// the same input error, naming it.
    pub(super) fn new(conn: Connection, catalog: &Catalog) -> Result<Prepared> {
        let raw = NonNull::from(Box::leak(Box::new(conn)));
        // Owns the connection from here on, so an error below frees it.
        let mut prepared = Prepared { statements: None, conn: Some(raw), guard: None };
        // SAFETY: the connection stays at `raw` until `Drop`/`into_connection`, which drop
        // every statement first; the borrow never leaves this struct.
        let conn: &'static Connection = unsafe { raw.as_ref() };
        let guard = prepared.guard.insert(Guard::install(conn));
        let protocol = prepare_validated(conn, catalog, guard)?;
        let (snapshot, message) = (prepare_kept(conn, SNAPSHOT_SQL)?, prepare_kept(conn, MESSAGE_SQL)?);
        prepared.statements = Some(Statements { protocol, snapshot, message });
        Ok(prepared)
    }

    /// Runs the harness's own `work` on the connection with the guard off (sim/world/db/schema_guard.rs).
    pub(super) fn unguarded<T>(&self, work: impl FnOnce(&Connection) -> T) -> T {
        match &self.guard {
            Some(guard) => guard.off(|| work(self.conn())),
            None => work(self.conn()),
        }
    }

    pub(super) fn conn(&self) -> &Connection {
        // SAFETY: see `new`; alive until `self` is dropped.
        unsafe { self.conn.expect("present until taken apart").as_ref() }
    }

    fn statements(&mut self) -> &mut Statements {
        self.statements.as_mut().expect("present until taken apart")
    }

    pub(super) fn slot(&mut self, stmt: Stmt) -> &mut Slot<'static> {
        &mut self.statements().protocol[index(stmt)]
    }

    pub(super) fn snapshot(&mut self) -> &mut Statement<'static> {
        &mut self.statements().snapshot
    }

    pub(super) fn message(&mut self) -> &mut Statement<'static> {
        &mut self.statements().message
    }

    /// Finalizes the statements and hands the connection back (to be closed).
    pub(super) fn into_connection(mut self) -> Connection {
        self.statements = None;
        let raw = self.conn.take().expect("present until taken apart");
        // SAFETY: from `Box::leak` in `new`; no statement borrows it any more.
        let conn = *unsafe { Box::from_raw(raw.as_ptr()) };
        if let Some(guard) = self.guard.take() {
            guard.uninstall(&conn);
        }
        conn
    }
}

/// `sql` prepared to be kept for the connection's life (SQLITE_PREPARE_PERSISTENT).
fn prepare_kept<'conn>(conn: &'conn Connection, sql: &str) -> rusqlite::Result<Statement<'conn>> {
    conn.prepare_with_flags(sql, PrepFlags::SQLITE_PREPARE_PERSISTENT)
}

/// Every statement of `catalog` at `index(stmt)`, each prepared once and checked as
/// `Catalog::validate_each` checks it, and refused if it changes the schema (`guard`).
fn prepare_validated<'conn>(conn: &'conn Connection, catalog: &Catalog, guard: &Guard) -> Result<Vec<Slot<'conn>>> {
    let mut slots: Vec<Option<Slot<'conn>>> = Stmt::ALL.iter().map(|_| None).collect();
    catalog.validate_each(|stmt, entry| {
        let (outcome, refused) = guard.check(&entry.sql, || prepare_kept(conn, &entry.sql));
        if let Some(action) = refused {
            return Err(crate::base::error::Error::input(format!(
                "statement `{}` ({}) changes the schema or the connection ({action}): refused; the protocol's statements read and write rows only",
                entry.name, entry.origin
            )));
        }
        let statement = entry.prepared(stmt, outcome)?;
        slots[index(stmt)] = Some(Slot::kept(stmt, statement)?);
        Ok(())
    })?;
    // `validate_each` passed: every `Stmt` has its entry, and every entry is a `Stmt`'s.
    Ok(slots.into_iter().map(|slot| slot.expect("validated: one entry per Stmt")).collect())
}

/// Every statement of `catalog`, one per `Stmt`, at `index(stmt)`.
pub fn prepare_all<'conn>(conn: &'conn Connection, catalog: &Catalog) -> rusqlite::Result<Vec<Slot<'conn>>> {
    Stmt::ALL.into_iter().map(|stmt| Slot::prepare(conn, stmt, &catalog.get(stmt.name()).sql)).collect()
}

/// Where `stmt` sits in `Stmt::ALL` (and so among the prepared statements): the enum's
/// declaration order, which `Stmt::ALL` follows (tested below).
pub fn index(stmt: Stmt) -> usize {
    stmt as usize
}

impl Drop for Prepared {
    fn drop(&mut self) {
        self.statements = None;
        if let Some(raw) = self.conn.take() {
            // SAFETY: as in `into_connection`.
            drop(unsafe { Box::from_raw(raw.as_ptr()) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stmt_s_index_is_its_place_in_the_list_of_all() {
        for (i, stmt) in Stmt::ALL.into_iter().enumerate() {
            assert_eq!(index(stmt), i, "{stmt}");
        }
    }

    #[test]
    fn every_stmt_sits_at_its_own_index_with_its_parameters_resolved() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::world::db::SCHEMA_SQL).unwrap();
        let mut prepared = Prepared::new(conn, &Catalog::default_protocol()).unwrap();
        for stmt in Stmt::ALL {
            let slot = prepared.slot(stmt);
            assert_eq!(slot.readonly, !stmt.writes(), "{stmt}");
            for (name, index) in &slot.params {
                assert_eq!(slot.statement.parameter_index(name).unwrap(), Some(*index), "{stmt} {name}");
                assert!(stmt.supplied().contains(name));
            }
        }
        let sql = |stmt: Stmt, prepared: &mut Prepared| prepared.slot(stmt).statement.expanded_sql().unwrap();
        assert_eq!(sql(Stmt::Heartbeat, &mut prepared).split_whitespace().next(), Some("UPDATE"));
        assert_eq!(sql(Stmt::PollTasks, &mut prepared).split_whitespace().next(), Some("SELECT"));
    }

    #[test]
    fn binding_starts_from_null_so_no_value_outlives_its_execution() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::world::db::SCHEMA_SQL).unwrap();
        let mut prepared = Prepared::new(conn, &Catalog::default_protocol()).unwrap();
        let slot = prepared.slot(Stmt::ReadTaskState);
        slot.bind(&[(":task_id", Value::Text("task-01".into()))]).unwrap();
        assert!(slot.statement.expanded_sql().unwrap().contains("'task-01'"));
        slot.bind(&[]).unwrap();
        assert!(!slot.statement.expanded_sql().unwrap().contains("task-01"));
    }

    #[test]
    fn the_connection_comes_back_closable_after_its_statements_are_finalized() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::world::db::SCHEMA_SQL).unwrap();
        let prepared = Prepared::new(conn, &Catalog::default_protocol()).unwrap();
        // `close` fails (SQLITE_BUSY) while any statement is left unfinalized.
        prepared.into_connection().close().map_err(|(_, e)| e).unwrap();
    }
}
