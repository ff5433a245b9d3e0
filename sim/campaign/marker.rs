//! The `INCOMPLETE` marker: a file in a campaign's folder while its files hold fewer runs
//! than it planned (it is running, was interrupted or killed, or stopped at the first
//! failure). Its text says how many of how many and why. `merge` refuses a sweep folder
//! that has one.

use std::path::Path;

use crate::base::atomic::write_atomically;
use crate::base::error::Result;

pub const INCOMPLETE_MARKER: &str = "INCOMPLETE";

/// Writes the marker in `out` with `why` (one line).
pub fn mark(out: &Path, why: &str) -> Result<()> {
    write_atomically(&out.join(INCOMPLETE_MARKER), format!("{why}\n").as_bytes())
}

/// Removes the marker from `out`, if it is there.
pub fn unmark(out: &Path) -> Result<()> {
    let marker = out.join(INCOMPLETE_MARKER);
    if marker.exists() {
        std::fs::remove_file(&marker)?;
    }
    Ok(())
}

/// Writes a campaign's files with `write`, marked while they are written: when runs are
/// missing (`missing` says why) the marker comes first, so a kill in the middle leaves it;
/// when none are, it goes only after every file is whole.
pub fn settle(out: &Path, missing: Option<&str>, write: impl FnOnce() -> Result<()>) -> Result<()> {
    if let Some(why) = missing {
        mark(out, why)?;
    }
    write()?;
    if missing.is_none() {
        unmark(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_runs_are_marked_before_the_files_and_a_whole_campaign_unmarked_after() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join(INCOMPLETE_MARKER);
        settle(dir.path(), Some("3 of 9 runs finished: interrupted (Ctrl-C)"), || {
            assert!(marker.exists(), "marked before the files are written");
            Ok(())
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&marker).unwrap(), "3 of 9 runs finished: interrupted (Ctrl-C)\n");
        let failed = settle(dir.path(), None, || Err(crate::base::error::Error::harness("disk full")));
        assert!(failed.is_err() && marker.exists(), "files that failed to be written leave the marker");
        settle(dir.path(), None, || {
            assert!(marker.exists(), "unmarked only after the files are written");
            Ok(())
        })
        .unwrap();
        assert!(!marker.exists());
        settle(dir.path(), None, || Ok(())).unwrap();
    }
}
