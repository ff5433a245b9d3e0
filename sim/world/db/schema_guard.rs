//! The protocol's statements read and write rows; none may change the schema seed 004 fixes
//! (ARCHITECTURE.md, invariant "the protocol's SQL is data") or the connection the run set up. SQLite itself says what a statement
//! does while it is prepared: an authorizer (`sqlite3_set_authorizer`) sees each action
//! (SQLITE_DROP_TABLE, SQLITE_ALTER_TABLE, SQLITE_CREATE_TRIGGER, SQLITE_ATTACH, a PRAGMA with
//! its value, …), which text matching could miss (comments, case, a `CREATE TEMP TRIGGER`).
//! VACUUM has no action code, so it is recognised by its first word.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr};

use rusqlite::{ffi, Connection};

/// The authorizer of one connection and what it refused. Setting an authorizer marks every
/// statement already prepared on the connection for re-preparing (`sqlite3_set_authorizer`
/// expires them), so the guard is installed once, before the first protocol statement is
/// prepared, and stays: it costs a callback per action while a statement is prepared and
/// nothing while it runs.
pub struct Guard {
    /// Boxed, so the address SQLite holds does not move; read and cleared per statement.
    refused: Box<State>,
}

/// What the authorizer shares with the guard.
struct State {
    refused: RefCell<Option<String>>,
    /// Set while the harness itself runs a statement (`Guard::off`): nothing is refused.
    off: std::cell::Cell<bool>,
    /// Set while a protocol statement is prepared (`Guard::check`): what only the protocol's
    /// statements may not do (transaction control, …: `escape`) is refused then too.
    checking: std::cell::Cell<bool>,
}

impl Guard {
    /// Installs the guard on `conn`. It must stay alive, and `uninstall` be called, while
    /// `conn` may prepare a statement.
    pub fn install(conn: &Connection) -> Guard {
        let guard = Guard {
            refused: Box::new(State {
                refused: RefCell::new(None),
                off: std::cell::Cell::new(false),
                checking: std::cell::Cell::new(false),
            }),
        };
        let user = (&*guard.refused as *const State).cast_mut().cast::<c_void>();
        // SAFETY: the handle is the live connection's; `user` points into the box, which
        // lives until the guard is dropped, after `uninstall` or after the connection closed.
        unsafe {
            ffi::sqlite3_set_authorizer(conn.handle(), Some(authorize), user);
        }
        guard
    }

    /// Removes the guard from `conn` (before `conn` outlives it).
    pub fn uninstall(&self, conn: &Connection) {
        // SAFETY: as in `install`.
        unsafe {
            ffi::sqlite3_set_authorizer(conn.handle(), None, std::ptr::null_mut());
        }
    }

    /// Runs the harness's own `work` (a pragma that sets the run's bounds) with nothing refused.
    pub fn off<T>(&self, work: impl FnOnce() -> T) -> T {
        self.refused.off.set(true);
        let outcome = work();
        self.refused.off.set(false);
        outcome
    }

    /// Prepares with `prepare`; returns what it gave and, when the statement changes the
    /// schema or the connection, the action that does (`DROP TABLE orchestration_tasks`).
    pub fn check<T>(&self, sql: &str, prepare: impl FnOnce() -> T) -> (T, Option<String>) {
        self.refused.refused.borrow_mut().take();
        self.refused.checking.set(true);
        let outcome = prepare();
        self.refused.checking.set(false);
        let refused = self.refused.refused.borrow_mut().take();
        if first_word(sql).eq_ignore_ascii_case("vacuum") {
            return (outcome, Some("VACUUM".to_string()));
        }
        (outcome, refused.or_else(|| host_time(sql)))
    }
}

/// The action an authorizer code stands for when it changes the schema or the connection.
fn schema_change(code: c_int, arg1: Option<&str>, arg2: Option<&str>) -> Option<String> {
    let object = arg1.unwrap_or("?");
    let verb = match code {
        ffi::SQLITE_CREATE_INDEX | ffi::SQLITE_CREATE_TEMP_INDEX => "CREATE INDEX",
        ffi::SQLITE_CREATE_TABLE | ffi::SQLITE_CREATE_TEMP_TABLE => "CREATE TABLE",
        ffi::SQLITE_CREATE_TRIGGER | ffi::SQLITE_CREATE_TEMP_TRIGGER => "CREATE TRIGGER",
        ffi::SQLITE_CREATE_VIEW | ffi::SQLITE_CREATE_TEMP_VIEW => "CREATE VIEW",
        ffi::SQLITE_CREATE_VTABLE => "CREATE VIRTUAL TABLE",
        ffi::SQLITE_DROP_INDEX | ffi::SQLITE_DROP_TEMP_INDEX => "DROP INDEX",
        ffi::SQLITE_DROP_TABLE | ffi::SQLITE_DROP_TEMP_TABLE => "DROP TABLE",
        ffi::SQLITE_DROP_TRIGGER | ffi::SQLITE_DROP_TEMP_TRIGGER => "DROP TRIGGER",
        ffi::SQLITE_DROP_VIEW | ffi::SQLITE_DROP_TEMP_VIEW => "DROP VIEW",
        ffi::SQLITE_DROP_VTABLE => "DROP VIRTUAL TABLE",
        ffi::SQLITE_ALTER_TABLE => return Some(format!("ALTER TABLE {}", arg2.unwrap_or("?"))),
        ffi::SQLITE_REINDEX => "REINDEX",
        ffi::SQLITE_ANALYZE => "ANALYZE",
        ffi::SQLITE_ATTACH => "ATTACH",
        ffi::SQLITE_DETACH => "DETACH",
        // A PRAGMA with a value sets something (`PRAGMA journal_mode = DELETE`); one without
        // only reads.
        ffi::SQLITE_PRAGMA => return arg2.map(|value| format!("PRAGMA {object} = {value}")),
        _ => return None,
    };
    Some(format!("{verb} {object}"))
}

/// What a protocol statement may not do besides changing the schema (issue 41: these passed
/// `check --sql` and then failed the run with no file:line). Refused only while a protocol
/// statement is prepared: the harness's own use of the connection (a test's `BEGIN`) is not
/// the protocol's.
fn escape(code: c_int, arg1: Option<&str>, arg2: Option<&str>) -> Option<String> {
    let object = arg1.unwrap_or("?");
    match code {
        // Transaction control: the harness runs each statement in its own transaction.
        ffi::SQLITE_TRANSACTION => Some(format!("{object}: transaction control")),
        ffi::SQLITE_SAVEPOINT => Some(format!("SAVEPOINT {}: transaction control", arg2.unwrap_or("?"))),
        // An extension is code from outside the run.
        ffi::SQLITE_FUNCTION if arg2.is_some_and(|f| f.eq_ignore_ascii_case("load_extension")) => {
            Some("load_extension(): code from outside the run".to_string())
        }
        // A table-valued pragma reads the connection's internals, not the protocol's rows.
        ffi::SQLITE_READ if object.get(..7).is_some_and(|p| p.eq_ignore_ascii_case("pragma_")) => {
            Some(format!("{object}(): a table-valued pragma"))
        }
        _ => None,
    }
}

unsafe extern "C" fn authorize(
    user: *mut c_void,
    code: c_int,
    arg1: *const c_char,
    arg2: *const c_char,
    _database: *const c_char,
    _trigger: *const c_char,
) -> c_int {
    let text = |p: *const c_char| if p.is_null() { None } else { CStr::from_ptr(p).to_str().ok() };
    // SAFETY: `user` is the guard's box (`Guard::install`); SQLite calls this on the
    // thread preparing, while no borrow of it is held (`check` holds none across it).
    let state = &*user.cast::<State>();
    if state.off.get() {
        return ffi::SQLITE_OK;
    }
    let escaped = || if state.checking.get() { escape(code, text(arg1), text(arg2)) } else { None };
    match schema_change(code, text(arg1), text(arg2)).or_else(escaped) {
        Some(action) => {
            state.refused.borrow_mut().get_or_insert(action);
            ffi::SQLITE_DENY
        }
        None => ffi::SQLITE_OK,
    }
}

/// A date and time modifier that reads the host's time zone (`'localtime'`, `'utc'`): the
/// same run would give another trace in another zone (issue 41: a FAIL under
/// America/New_York). The simulated clock is UTC.
fn host_time(sql: &str) -> Option<String> {
    let mut literals = sql.split('\'').skip(1).step_by(2);
    literals
        .find(|l| l.trim().eq_ignore_ascii_case("localtime") || l.trim().eq_ignore_ascii_case("utc"))
        .map(|l| format!("'{l}': a time modifier that reads the host's time zone; the run's clock is UTC, use times without it"))
}

/// The statement's first word, past whitespace and `--` and `/* */` comments.
fn first_word(sql: &str) -> &str {
    let mut rest = sql.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, next)| next).trim_start();
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, next)| next).trim_start();
        } else {
            break;
        }
    }
    rest.split(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(sql: &str) -> Option<String> {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (a); CREATE INDEX ti ON t (a);").unwrap();
        let guard = Guard::install(&conn);
        let refused = guard.check(sql, || conn.prepare(sql).map(|_| ())).1;
        guard.uninstall(&conn);
        refused
    }

    #[test]
    fn statements_that_change_the_schema_or_the_connection_are_named_and_row_statements_pass() {
        let cases = [
            ("DROP TABLE t", "DROP TABLE t"),
            ("/* x */ alter table t add column b", "ALTER TABLE t"),
            ("CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END", "CREATE TRIGGER tr"),
            ("create temp trigger tr after insert on t begin select 1; end", "CREATE TRIGGER tr"),
            ("CREATE TABLE u (a)", "CREATE TABLE u"),
            ("CREATE VIEW v AS SELECT a FROM t", "CREATE VIEW v"),
            ("DROP INDEX ti", "DROP INDEX ti"),
            ("ATTACH 'x.db' AS x", "ATTACH"),
            ("PRAGMA journal_mode = DELETE", "PRAGMA journal_mode = DELETE"),
            ("-- why\n  VACUUM", "VACUUM"),
            ("BEGIN IMMEDIATE", "BEGIN: transaction control"),
            ("commit", "COMMIT: transaction control"),
            ("SAVEPOINT s", "SAVEPOINT s"),
            ("SELECT load_extension('x.so')", "load_extension()"),
            ("SELECT name FROM pragma_table_info('t')", "pragma_table_info(): a table-valued pragma"),
            ("UPDATE t SET a = datetime('now', 'localtime')", "'localtime': a time modifier"),
            ("UPDATE t SET a = datetime('now', ' UTC')", "' UTC': a time modifier"),
        ];
        for (sql, action) in cases {
            assert!(refused(sql).is_some_and(|a| a.starts_with(action)), "{sql}: {:?}", refused(sql));
        }
        let near = ["SELECT a FROM t WHERE a = 'utc time'", "UPDATE t SET a = datetime('now', '+1 second')", "SELECT lower('x')"];
        for sql in ["SELECT a FROM t", "UPDATE t SET a = 1", "INSERT INTO t VALUES (random())", "DELETE FROM t", "PRAGMA journal_mode"]
            .into_iter()
            .chain(near)
        {
            assert_eq!(refused(sql), None, "{sql}");
        }
    }
}
