//! The output folder of a command that writes many files (sweep, compare, bench, explore,
//! search): refused when it already holds something, unless `--force`; with `--force` what the
//! command owns there is cleared first, so no file or run folder of an earlier command is
//! left to be read as this one's. `rehearsal run` decides the same way for its one run
//! (`run::refuse_existing_run`). Each holds the folder's lock first (sim/base/out_lock.rs), which
//! is never counted as a result nor cleared.

use std::path::Path;

use crate::base::error::{Error, Result};
use crate::base::out_lock::{OutLock, LOCK_FILE};

/// What a command writes into its output folder: file and folder names, and name prefixes
/// written `prefix*` (a scratch folder `sweep-XXXX`, `heatmap-*.svg`). Any folder holding a
/// run (`comms.db` or `trace.csv`) is owned too: every one of these commands writes runs.
pub type Owned = &'static [&'static str];

/// Refuses an output folder that is a file, or holds anything while `force` is off.
pub fn refuse_unless_forced(out: &Path, force: bool) -> Result<()> {
    if out.exists() && !out.is_dir() {
        return Err(Error::input(format!("output folder {} is a file, not a folder", out.display())));
    }
    // Empty folders hold no results (a command stopped by bad input may leave its `failures/`).
    let held: Vec<String> = entries(out)?.into_iter().filter(|name| holds_a_file(&out.join(name))).collect();
    if held.is_empty() || force {
        return Ok(());
    }
    let shown: Vec<&str> = held.iter().take(4).map(String::as_str).collect();
    let more = if held.len() > shown.len() { format!(", and {} more", held.len() - shown.len()) } else { String::new() };
    Err(Error::input(format!(
        "{} already holds results ({}{more}); pass --force to replace them, or choose another --out",
        out.display(),
        shown.join(", ")
    )))
}

/// Holds the folder's lock (making the folder), then `refuse_unless_forced`, then clears
/// what the command owns. The lock is the caller's to keep while it writes.
pub fn claim<S: AsRef<str>>(out: &Path, owned: &[S], force: bool) -> Result<OutLock> {
    // The lock first: a folder in use is refused as such, naming its holder, whatever it
    // holds. (A folder the lock had to make holds nothing, so it is never refused after.)
    let lock = OutLock::acquire(out)?;
    // A file no rehearsal command wrote stops it, `--force` or not (issue 41).
    crate::base::out_owner::refuse_foreign(out)?;
    refuse_unless_forced(out, force)?;
    crate::base::out_probe::ensure_writable(out)?;
    crate::base::out_owner::clear_and_record(out, owned, true)?;
    Ok(lock)
}

fn holds_a_file(path: &Path) -> bool {
    match std::fs::read_dir(path) {
        Ok(entries) => entries.filter_map(|e| e.ok()).any(|e| holds_a_file(&e.path())),
        Err(_) => true,
    }
}

/// The names in `out`, sorted, but its lock and the lock's own temporaries; none when it
/// does not exist.
fn entries(out: &Path) -> Result<Vec<String>> {
    let Ok(read) = std::fs::read_dir(out) else { return Ok(Vec::new()) };
    let mut names = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| Error::harness(format!("cannot list {}: {e}", out.display())))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(LOCK_FILE) && !crate::base::out_owner::is_record(&name) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWNED: Owned = &["results.csv", "failures", "sweep-*"];

    #[test]
    fn an_empty_or_missing_folder_is_claimed_and_one_holding_anything_is_refused_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let lock = claim(&dir.path().join("new"), OWNED, false).unwrap();
        assert!(dir.path().join("new").is_dir());
        drop(lock);
        drop(claim(&dir.path().join("new"), OWNED, false).expect("an empty folder is free"));
        std::fs::create_dir_all(dir.path().join("new/failures/none")).unwrap();
        let lock = claim(&dir.path().join("new"), OWNED, false).expect("a folder of empty folders holds no results");
        assert!(claim(&dir.path().join("new"), OWNED, true).expect_err("locked").to_string().contains("in use"));
        drop(lock);
        std::fs::write(dir.path().join("new/results.csv"), "x").unwrap();
        let e = claim(&dir.path().join("new"), OWNED, false).expect_err("refused");
        assert!(matches!(e, Error::Input(_)) && e.to_string().contains("already holds results (results.csv)"), "{e}");
        std::fs::write(dir.path().join("file"), "x").unwrap();
        assert!(claim(&dir.path().join("file"), OWNED, true).expect_err("a file").to_string().contains("is a file"));
    }

    #[test]
    fn force_clears_what_the_command_owns_and_every_run_folder_and_leaves_an_earlier_command_s_rest() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        crate::base::out_owner::record(out, &["results.csv", "failures", "sweep-*", "default-3", "load.csv"]).unwrap();
        for sub in ["failures/old", "sweep-abc", "default-3", "notes"] {
            std::fs::create_dir_all(out.join(sub)).unwrap();
        }
        std::fs::write(out.join("default-3/comms.db"), "").unwrap();
        std::fs::write(out.join("results.csv"), "x").unwrap();
        std::fs::write(out.join(".results.csv.a1B2c3.tmp"), "half").unwrap();
        std::fs::write(out.join("load.csv"), "another command's").unwrap();
        std::fs::write(out.join("mine.txt"), "x").unwrap();
        let e = claim(out, OWNED, true).expect_err("the user's file");
        assert!(e.to_string().contains("mine.txt: not rehearsal's to replace"), "{e}");
        assert!(out.join("results.csv").exists(), "nothing removed when refused");
        std::fs::remove_file(out.join("mine.txt")).unwrap();
        let _lock = claim(out, OWNED, true).unwrap();
        assert_eq!(entries(out).unwrap(), ["load.csv", "notes"]);
    }
}
