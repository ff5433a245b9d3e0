//! An output folder that exists but cannot be written is bad input, found before anything
//! runs, as one that cannot be created is (issue 30: a read-only `--out` gave 2 when the
//! folder had to be created and 3 when it existed, after the run had started). A probe file is
//! made and removed: the only test that answers for permissions, read-only mounts, ACLs and
//! quotas alike.

use std::path::Path;

use crate::base::error::{Error, Result};

/// Refuses `out` when it is a folder no file can be created in; a folder that does not exist
/// yet is left to be created (and refused then).
pub fn ensure_writable(out: &Path) -> Result<()> {
    if !out.is_dir() {
        return Ok(());
    }
    match tempfile::Builder::new().prefix(".rehearsal-probe-").tempfile_in(out) {
        Ok(probe) => probe.close().map_err(|e| Error::harness(format!("cannot remove a probe file in {}: {e}", out.display()))),
        Err(e) => Err(Error::input(format!("output folder {} is not writable ({e}); choose another --out", out.display()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writable_or_missing_folder_passes_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        ensure_writable(dir.path()).unwrap();
        ensure_writable(&dir.path().join("not-yet")).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the probe is removed");
    }

    #[test]
    fn a_folder_nothing_can_be_created_in_is_bad_input() {
        // sysfs refuses new files even to root; a mode 0555 folder refuses them to anyone else.
        let dir = tempfile::tempdir().unwrap();
        let locked = dir.path().join("ro");
        std::fs::create_dir(&locked).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        let folder = if tempfile::tempfile_in(&locked).is_err() { locked.clone() } else { Path::new("/sys/kernel").to_path_buf() };
        if folder.is_dir() {
            let e = ensure_writable(&folder).expect_err("refused");
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains("is not writable"), "{e}");
        }
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
