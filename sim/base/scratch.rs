//! Scratch folders: where sweeps, explorations and searches make their runs and remove them.
//!
//! A scratch folder is named `<prefix>pid<PID>-XXXXXX`: it is removed when dropped (a
//! command's end, and its first Ctrl-C, which lets it end), by the Ctrl-C handler that exits
//! at once (sim/base/interrupt.rs; it is made and tracked in one step through
//! sim/base/live_files.rs) before it exits, and, when its process was killed, by the next command
//! that makes a folder of the same prefix in the same place, which finds its pid gone
//! (issue 30: 61 MB each stayed on the tmpfs).

use std::path::Path;

use crate::base::error::{Error, Result};

/// Linux's tmpfs for everyone: the default scratch folder's parent where it exists.
const SHARED_MEMORY: &str = "/dev/shm";

/// A scratch folder, removed (with everything in it) when dropped.
#[derive(Debug)]
pub struct Scratch {
    /// Removes the folder when dropped; declared first, so it is gone before `_live` lets go.
    dir: tempfile::TempDir,
    /// What a Ctrl-C that exits at once removes.
    _live: crate::base::live_files::Live,
}

impl Scratch {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A fresh folder named `prefix…`, removed when dropped: in `chosen` when the user named
/// one (an error there is bad input), else on a tmpfs where there is one, else in `out`.
/// Creating, syncing and deleting every run's files on a disk file system costs more than
/// the runs (explore: 230 s against 64 s for quickstart's 4594 runs; a sweep of ci-smoke
/// pays the same per seed). Folders of the same prefix left there by processes that are
/// gone are removed first.
pub fn scratch_folder(prefix: &str, chosen: Option<&Path>, out: &Path) -> Result<Scratch> {
    let named = format!("{prefix}pid{}-", std::process::id());
    let in_folder = |parent: &Path| {
        remove_stale(parent, prefix);
        // Made and tracked in one step: a Ctrl-C finds it either not made or tracked.
        crate::base::live_files::make_tracked(
            || tempfile::Builder::new().prefix(&named).tempdir_in(parent),
            |dir| vec![dir.path().to_path_buf()],
        )
    };
    let dir = if let Some(parent) = chosen {
        check_chosen(Some(parent))?;
        in_folder(parent).map_err(|e| Error::input(format!("cannot make a scratch folder in {}: {e}", parent.display())))?
    } else {
        in_folder(Path::new(SHARED_MEMORY))
            .or_else(|_| in_folder(out))
            .map_err(|e| Error::harness(format!("cannot make a scratch folder in {}: {e}", out.display())))?
    };
    let (_live, dir) = dir;
    Ok(Scratch { dir, _live })
}

/// Removes the folders `<prefix>pid<PID>-…` in `parent` whose process is gone.
fn remove_stale(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = owner_pid(&name, prefix) else { continue };
        if pid != std::process::id() && !crate::base::out_lock::alive(pid) && entry.path().is_dir() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The pid in a scratch folder's name `<prefix>pid<PID>-XXXXXX`.
fn owner_pid(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?.strip_prefix("pid")?;
    let (digits, _) = rest.split_once('-')?;
    digits.parse().ok()
}

/// Refuses a chosen scratch folder that is not an existing folder: checked before a command
/// touches its output folder, so a mistyped `--scratch` (bad input) costs no earlier results.
pub fn check_chosen(chosen: Option<&Path>) -> Result<()> {
    match chosen {
        Some(parent) if !parent.is_dir() => {
            Err(Error::input(format!("cannot make a scratch folder in {}: not an existing folder", parent.display())))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chosen_folder_is_used_and_a_missing_one_is_bad_input() {
        let parent = tempfile::tempdir().expect("temp");
        let made = scratch_folder("t-", Some(parent.path()), parent.path()).expect("made");
        assert!(made.path().starts_with(parent.path()));
        let missing = parent.path().join("missing");
        let err = scratch_folder("t-", Some(&missing), parent.path()).expect_err("missing");
        assert_eq!(err.exit_code(), 2, "{err}");
    }

    #[test]
    fn folders_of_processes_that_are_gone_are_removed_and_live_ones_kept() {
        let parent = tempfile::tempdir().expect("temp");
        let mut child = std::process::Command::new("true").spawn().expect("spawn true");
        let dead = child.id();
        child.wait().expect("waited");
        let stale = parent.path().join(format!("sweep-pid{dead}-AbCdEf"));
        let other_prefix = parent.path().join(format!("explore-pid{dead}-AbCdEf"));
        let not_ours = parent.path().join(format!("sweep-{dead}-AbCdEf"));
        for dir in [&stale, &other_prefix, &not_ours] {
            std::fs::create_dir_all(dir.join("0-ci-smoke-1")).unwrap();
        }
        let made = scratch_folder("sweep-", Some(parent.path()), parent.path()).expect("made");
        assert!(!stale.exists(), "a dead process's folder is removed");
        assert!(other_prefix.exists() && not_ours.exists(), "only this prefix's, named by a pid");
        let again = scratch_folder("sweep-", Some(parent.path()), parent.path()).expect("made");
        assert!(made.path().exists(), "a live process's folder (this one's) is kept");
        let path = made.path().to_path_buf();
        drop(made);
        assert!(!path.exists());
        assert!(again.path().exists());
    }
}
