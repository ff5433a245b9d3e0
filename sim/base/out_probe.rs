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
    let probe = out.join(probe_name());
    // Named like the lock's temporaries, with this process's id: a probe a kill left behind
    // is then no user file to the next command into the folder (sim/base/out_folder.rs skips
    // the lock's names) and is removed once its process is gone (sim/base/out_lock.rs);
    // tests/it/kills.rs found `.rehearsal-probe-XXXX` left by a kill and the rerun refused.
    let _live = crate::base::live_files::track([probe.clone()]);
    match crate::base::live_files::make(|| std::fs::OpenOptions::new().write(true).create_new(true).open(&probe)) {
        Ok(file) => {
            drop(file);
            std::fs::remove_file(&probe).map_err(|e| Error::harness(format!("cannot remove a probe file in {}: {e}", out.display())))
        }
        Err(e) => Err(Error::input(format!("output folder {} is not writable ({e}); choose another --out", out.display()))),
    }
}

/// `.rehearsal-lock.PID.N.probe`: this process's id, and a count so two probes of one process
/// never meet.
fn probe_name() -> String {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}.{}.{n}.probe", crate::base::out_owner::LOCK_FILE, std::process::id())
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
        let name = probe_name();
        assert!(name.starts_with(".rehearsal-lock.") && name.ends_with(".probe"), "{name}");
        assert_ne!(probe_name(), name, "two probes of one process never share a name");
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
