//! The folder of one run (`rehearsal run`): what the run owns there, how its database
//! reaches its name, and what a rerun clears.
//!
//! `comms.db` is made as `comms.db.tmp` and renamed into place when the run ends, after its
//! last checkpoint and after `trace.csv` (itself `trace.csv.tmp` until then): a run killed at
//! any moment, even inside a checkpoint, leaves no `comms.db` of its own, so the name holds
//! a complete database or nothing (issue 30: a kill inside a checkpoint left a malformed
//! one). `rehearsal run` holds the folder's lock (sim/base/out_lock.rs) and then clears the stale
//! temporaries of a killed run, or with `--force` everything an earlier run wrote.

use std::path::Path;

use crate::base::error::{Error, Result};
use crate::base::out_lock::OutLock;

/// The database's name while the run writes it.
pub const DB_TMP: &str = "comms.db.tmp";

/// What a run writes into its folder: its files, its reports, the sessions' files (the
/// protocol's `temp/` and the documents it writes under `docs/`). Paths may name a folder
/// inside another; removing them leaves the rest of that folder (a `docs/` of the user's).
pub const OWNED: &[&str] = &[
    "comms.db",
    DB_TMP,
    // SQLite's files beside the database (a reader that opened it, a run killed mid-write):
    // a stale one beside a new comms.db would be read as part of it.
    "comms.db-wal",
    "comms.db-shm",
    "comms.db-journal",
    "comms.db.tmp-wal",
    "comms.db.tmp-shm",
    "comms.db.tmp-journal",
    "trace.csv",
    "trace.csv.tmp",
    "violations.csv",
    "latency.csv",
    "timeline.html",
    "summary.md",
    "plots",
    "temp",
    "docs/implementation",
    "docs/plans/implementation",
];

/// `rehearsal run` keeps what is in its output folder: a folder that already holds a run
/// (comms.db or trace.csv) is refused unless `force`, and a comms.db another process has
/// open and locked is refused even then, before anything is written.
pub fn refuse_existing_run(out_dir: &Path, force: bool) -> Result<()> {
    if out_dir.exists() && !out_dir.is_dir() {
        return Err(Error::input(format!("output folder {} is a file, not a folder", out_dir.display())));
    }
    let db = out_dir.join("comms.db");
    // Only the finished files count: a killed run's `comms.db.tmp` and `trace.csv.tmp` are
    // no run, and are cleared (sim/world/run_folder.rs).
    let held: Vec<&str> = ["comms.db", "trace.csv"].into_iter().filter(|name| out_dir.join(name).exists()).collect();
    if !held.is_empty() && !force {
        return Err(Error::input(format!(
            "{} already holds a run ({}); pass --force to replace it, or choose another --out",
            out_dir.display(),
            held.join(", ")
        )));
    }
    if db.exists() {
        crate::world::db::ensure_not_locked(&db)?;
    }
    crate::base::out_probe::ensure_writable(out_dir)
}

/// Removes the temporaries of a run that ended in an error: its unfinished database (with
/// SQLite's files beside it) and trace. What it finished (a published `comms.db`) stays.
/// A run's unfinished files, renamed into place when it ends whole.
pub const TEMPORARIES: [&str; 5] = [DB_TMP, "comms.db.tmp-wal", "comms.db.tmp-shm", "comms.db.tmp-journal", "trace.csv.tmp"];

pub fn remove_temporaries(out_dir: &Path) {
    for name in TEMPORARIES {
        let _ = std::fs::remove_file(out_dir.join(name));
    }
}

/// Renames the finished database into place (replacing an earlier run's).
pub fn publish_db(out_dir: &Path) -> Result<()> {
    let (from, to) = (out_dir.join(DB_TMP), out_dir.join("comms.db"));
    std::fs::rename(&from, &to).map_err(|e| Error::harness(format!("cannot rename {} to {}: {e}", from.display(), to.display())))
}

/// Holds `out_dir` for one run: refused while another command holds it or (without `force`)
/// while it holds a finished run; then everything a run owns there is removed (an earlier
/// run's with `force`, else what a killed run left: its temporaries, sessions' files,
/// reports), `comms.db` and `trace.csv` first, so a kill while clearing leaves no run.
pub fn claim(out_dir: &Path, force: bool) -> Result<OutLock> {
    // The lock first: a folder in use is refused as such, naming its holder.
    let lock = OutLock::acquire(out_dir)?;
    // A file no rehearsal command wrote stops it, `--force` or not (issue 41: a folder of the
    // user's own `summary.md` and `temp/notes` was emptied, its files known by name alone).
    crate::base::out_owner::refuse_foreign(out_dir)?;
    refuse_existing_run(out_dir, force)?;
    crate::base::out_owner::clear_and_record(out_dir, OWNED, false)?;
    Ok(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names = Vec::new();
        for entry in walkdir(dir) {
            names.push(entry.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
        }
        names.sort();
        names
    }

    fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walkdir(&path));
            }
            out.push(path);
        }
        out
    }

    fn put(dir: &Path, files: &[&str]) {
        for file in files {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
    }

    #[test]
    fn what_a_killed_run_left_is_cleared_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let left = ["comms.db.tmp", "trace.csv.tmp", ".violations.csv.Ab12Cd.tmp", "temp/s1.md", "docs/implementation/reports/r.md"];
        put(dir.path(), &left);
        let refused = claim(dir.path(), false).expect_err("no record says a run wrote them");
        assert!(refused.to_string().contains("not rehearsal's to replace"), "{refused}");
        crate::base::out_owner::record(dir.path(), OWNED).unwrap();
        let lock = claim(dir.path(), false).expect("no finished run there");
        assert_eq!(names(dir.path()), [".rehearsal-lock", ".rehearsal-owned"]);
        drop(lock);
        put(dir.path(), &[".notes.txt.Ab12Cd.tmp", "notes.txt"]);
        let refused = claim(dir.path(), true).expect_err("the user's files, --force or not");
        assert!(refused.to_string().contains(".notes.txt.Ab12Cd.tmp: not rehearsal's to replace (and 1 more: notes.txt)"), "{refused}");
    }

    #[test]
    fn force_clears_every_file_of_an_earlier_run_and_leaves_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let run = [
            "comms.db",
            "trace.csv",
            "violations.csv",
            "latency.csv",
            "timeline.html",
            "summary.md",
            "plots/context.svg",
            "temp/s1.md",
            "docs/implementation/reports/task-01-completion.md",
            "docs/plans/implementation/task-01.md",
        ];
        crate::base::out_owner::record(dir.path(), OWNED).unwrap();
        put(dir.path(), &run);
        let refused = claim(dir.path(), false).expect_err("a finished run");
        assert_eq!(refused.exit_code(), 2);
        let lock = claim(dir.path(), true).expect("forced");
        assert_eq!(names(dir.path()), [".rehearsal-lock", ".rehearsal-owned"], "folders left empty by the run's files go too");
        drop(lock);
        put(dir.path(), &run[8..]);
        put(dir.path(), &["docs/mine.md"]);
        let refused = claim(dir.path(), true).expect_err("the user's file inside the run's docs/");
        assert!(refused.to_string().contains("docs/mine.md: not rehearsal's"), "{refused}");
        assert!(dir.path().join("docs/implementation/reports/task-01-completion.md").exists(), "nothing removed");
    }
}
