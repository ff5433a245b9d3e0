//! One `comms.db` connection kept per thread between the runs that keep only their trace's
//! hash (`run::Keep::Hash`: a sweep's first run of a pair, explore's, search's, schedules' and
//! shrink's runs), so the next such run on the thread empties its tables instead of creating
//! a file, applying the schema and preparing every statement again.
//!
//! Why: a short run pays those once, and at quickstart's size they were a tenth of an
//! explored run (`perf` of `explore crashes scenarios/quickstart.toml`: `CommsDb::create`
//! 7.8 %, closing 2.5 %; docs/performance.md). Why only those runs: a run that keeps its files
//! must leave the `comms.db` a new file gives, byte for byte (its pages, the run's
//! checkpoint), and a kept connection's file has the pages of the runs before it. A hash-only
//! run's file is deleted unread; what it reads through SQL is the same (`CommsDb::restart`),
//! which the tests beside `run::execute` and a sweep's second run of a failing pair (on a
//! new file, which must give the same trace hash) hold it to.
//!
//! A connection whose run ended in an error is not kept (the caller drops it): only one that
//! finished its run comes back. Its file stays where the first run made it; a run folder
//! removed after its run unlinks it, and the connection keeps it open until the thread ends.

use std::cell::RefCell;

use super::db::CommsDb;
use crate::input::sql_catalog::Catalog;

thread_local! {
    static KEPT: RefCell<Option<CommsDb>> = const { RefCell::new(None) };
}

/// This thread's kept connection, if its statements are `catalog`'s (`CommsDb::fits`); one
/// prepared from another catalog is dropped.
pub fn take(catalog: &Catalog, sql_sha256: &str) -> Option<CommsDb> {
    let kept = KEPT.with(|kept| kept.borrow_mut().take())?;
    kept.fits(catalog, sql_sha256).then_some(kept)
}

/// Keeps `db`, whose run finished, for this thread's next hash-only run, when it can stand
/// for a new file (`CommsDb::keepable`); else it is dropped. Closing it later (when the
/// thread ends, or another takes its place) discards its log unwritten.
pub fn keep(db: CommsDb) -> crate::base::error::Result<()> {
    db.discard_on_close()?;
    if db.keepable() {
        KEPT.with(|kept| *kept.borrow_mut() = Some(db));
    }
    Ok(())
}

/// Whether this thread keeps a connection (for tests that must know a run reused one).
#[cfg(test)]
pub fn kept_here() -> bool {
    KEPT.with(|kept| kept.borrow().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::SimClock;

    fn created(dir: &std::path::Path, name: &str, catalog: Catalog) -> CommsDb {
        CommsDb::create(&dir.join(name), SimClock::new(0), 1, catalog).expect("created")
    }

    /// The shipped catalog and its SHA-256, with a connection of it kept on this thread.
    fn kept_default(dir: &std::path::Path) -> (Catalog, String) {
        let catalog = Catalog::default_protocol();
        let sha = catalog.identity().sha256;
        keep(created(dir, "a.db", catalog.clone())).expect("kept");
        (catalog, sha)
    }

    #[test]
    fn a_kept_connection_comes_back_only_for_its_own_catalog() {
        let dir = tempfile::tempdir().expect("temp");
        let (catalog, sha) = kept_default(dir.path());
        assert!(take(&catalog, &sha).is_some(), "the same catalog takes it back");
        assert!(take(&catalog, &sha).is_none(), "taken once");
        keep(created(dir.path(), "b.db", catalog.clone())).expect("kept");
        let mut other = catalog.clone();
        other
            .override_with(
                "-- name: heartbeat\nUPDATE orchestration_tasks SET last_heartbeat = datetime('now') WHERE task_id = :task_id;\n",
                "other.sql",
            )
            .expect("override");
        assert!(take(&other, &other.identity().sha256).is_none(), "another catalog's SQL does not");
        assert!(take(&catalog, &sha).is_none(), "and the mismatch dropped it");
    }

    #[test]
    fn the_same_sql_from_another_file_does_not_fit() {
        // Same statements, other origins: an error would name the wrong file and line.
        let dir = tempfile::tempdir().expect("temp");
        let (catalog, sha) = kept_default(dir.path());
        let mut moved = catalog.clone();
        let text = format!("-- name: heartbeat\n{}\n", catalog.get("heartbeat").sql);
        moved.override_with(&text, "moved.sql").expect("override");
        assert_eq!(moved.identity().sha256, sha, "the same SQL");
        assert!(take(&moved, &sha).is_none());
    }
}
