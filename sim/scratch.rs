//! Scratch folders: where sweeps, explorations and searches make their runs and remove them.

use std::path::Path;

use crate::error::{Error, Result};

/// Linux's tmpfs for everyone: the default scratch folder's parent where it exists.
const SHARED_MEMORY: &str = "/dev/shm";

/// A fresh folder named `prefix…`, removed when dropped: in `chosen` when the user named
/// one (an error there is bad input), else on a tmpfs where there is one, else in `out`.
/// Creating, syncing and deleting every run's files on a disk file system costs more than
/// the runs (explore: 230 s against 64 s for quickstart's 4594 runs; a sweep of ci-smoke
/// pays the same per seed).
pub fn scratch_folder(prefix: &str, chosen: Option<&Path>, out: &Path) -> Result<tempfile::TempDir> {
    let in_folder = |parent: &Path| tempfile::Builder::new().prefix(prefix).tempdir_in(parent);
    if let Some(parent) = chosen {
        check_chosen(Some(parent))?;
        return in_folder(parent).map_err(|e| Error::input(format!("cannot make a scratch folder in {}: {e}", parent.display())));
    }
    in_folder(Path::new(SHARED_MEMORY))
        .or_else(|_| in_folder(out))
        .map_err(|e| Error::harness(format!("cannot make a scratch folder in {}: {e}", out.display())))
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
}
