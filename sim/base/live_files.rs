//! What this process has made and not finished: temporaries (a run's unfinished database and
//! trace, a file being written whole, a failure folder being copied) and the output folders'
//! locks it holds. A Ctrl-C that ends the command at once removes them before it exits
//! (sim/base/interrupt.rs), since `exit` runs no destructors; what was finished (renamed into
//! place) is not here and is kept (issue 41, item 2: every orderly exit, 130 included, removes
//! the temporaries it made).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The paths of every `Live` of this process that exists.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Paths an interrupt removes while this is held; dropped when the code that made them has
/// renamed or removed them itself (dropping removes nothing).
#[derive(Debug)]
#[must_use = "the paths are tracked only while this is held"]
pub struct Live {
    paths: Vec<PathBuf>,
}

/// Tracks `paths` (files or folders, existing or about to be made) until the `Live` is dropped.
pub fn track(paths: impl IntoIterator<Item = PathBuf>) -> Live {
    let paths: Vec<PathBuf> = paths.into_iter().collect();
    live().extend(paths.iter().cloned());
    Live { paths }
}

impl Drop for Live {
    fn drop(&mut self) {
        let mut live = live();
        for path in &self.paths {
            if let Some(i) = live.iter().rposition(|p| p == path) {
                live.swap_remove(i);
            }
        }
    }
}

/// Child processes that write into tracked paths (calibrate's `sqlite3` processes): killed
/// before the paths are removed, so none makes a file again after its removal (a `kill -INT`
/// of rehearsal alone left a `calibration.db` that a running `sqlite3` created afterwards,
/// tests/it/kills.rs).
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn children() -> std::sync::MutexGuard<'static, Vec<u32>> {
    CHILDREN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A child process an interrupt kills while this is held; dropped once the child was waited for.
#[derive(Debug)]
#[must_use = "the child is tracked only while this is held"]
pub struct LiveChild {
    pid: u32,
}

/// Tracks the child process `pid` until the `LiveChild` is dropped.
pub fn track_child(pid: u32) -> LiveChild {
    children().push(pid);
    LiveChild { pid }
}

impl Drop for LiveChild {
    fn drop(&mut self) {
        let mut children = children();
        if let Some(i) = children.iter().rposition(|p| *p == self.pid) {
            children.swap_remove(i);
        }
    }
}

/// Kills every tracked child and gives the kills a moment to land.
fn kill_children() {
    kill_all(&children());
}

/// Kills `pids` (children of this process not yet waited for) and gives the kills a moment to land.
fn kill_all(pids: &[u32]) {
    for &pid in pids {
        // SAFETY: kill(2) with a pid this process spawned and has not yet waited for.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
    if !pids.is_empty() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Removes every tracked path (a folder with what is in it), then runs `exit` without letting
/// go of the registry: a thread that would rename a tracked folder into place (`rename`) or
/// track another waits, so nothing is half removed under its final name and nothing new is
/// made before the process ends. For an exit that skips destructors (a Ctrl-C).
pub fn remove_live_then(exit: impl FnOnce()) {
    kill_children();
    let mut live = live();
    for path in live.drain(..) {
        remove(&path);
    }
    exit();
}

/// Removes the tracked paths under `dir`, as `remove_live_then` removes them all: for tests,
/// which run beside other tests whose temporaries are tracked too.
#[cfg(test)]
fn remove_live_under(dir: &Path) {
    let mut live = live();
    let (mine, others): (Vec<PathBuf>, Vec<PathBuf>) = live.drain(..).partition(|p| p.starts_with(dir));
    *live = others;
    for path in mine {
        remove(&path);
    }
}

/// Renames a tracked folder (or file) into place while no Ctrl-C removes it: a removal that
/// began first finishes first (the rename then fails), one that comes after finds it gone.
/// Without it a folder renamed while a removal walked it was left empty under its final name.
pub fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    let _live = live();
    std::fs::rename(from, to)
}

/// A folder another thread may still be writing into is removed again until it is gone: that
/// thread stops at its rename (`rename` waits for the registry this removal holds).
fn remove(path: &Path) {
    for _ in 0..1000 {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => {
                let _ = std::fs::remove_dir_all(path);
            }
            Ok(_) => {
                let _ = std::fs::remove_file(path);
            }
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tracked_child_is_killed_and_an_untracked_one_is_not() {
        use std::os::unix::process::ExitStatusExt;
        let mut tracked = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let mut untracked = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        // The registry is the process's: other tests' children are in it too, so only the
        // tracked pid is killed here, as kill_children kills each of the registry's.
        let live = track_child(tracked.id());
        assert!(children().contains(&tracked.id()));
        kill_all(&[tracked.id()]);
        assert_eq!(tracked.wait().unwrap().signal(), Some(libc::SIGKILL));
        drop(live);
        assert!(!children().contains(&tracked.id()), "dropped, no longer tracked");
        assert!(untracked.try_wait().unwrap().is_none(), "an untracked child runs on");
        untracked.kill().unwrap();
        untracked.wait().unwrap();
    }

    #[test]
    fn tracked_paths_are_removed_until_dropped_and_others_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (file, folder, kept) = (dir.path().join("a.tmp"), dir.path().join("b.partial"), dir.path().join("done"));
        std::fs::write(&file, "half").unwrap();
        std::fs::create_dir_all(folder.join("inner")).unwrap();
        std::fs::write(folder.join("inner/x"), "x").unwrap();
        std::fs::write(&kept, "finished").unwrap();
        let held = track([file.clone(), folder.clone(), dir.path().join("never-made")]);
        let released = track([kept.clone()]);
        drop(released);
        assert!(live().contains(&file) && !live().contains(&kept));
        remove_live_under(dir.path());
        assert!(!file.exists() && !folder.exists(), "the tracked temporaries are gone");
        assert!(kept.exists(), "what was released (finished) is kept");
        drop(held);
        assert!(!live().iter().any(|p| p.starts_with(dir.path())), "what is dropped is no longer tracked");
    }

    /// A tracked folder renamed into place is finished: the removal finds only what is left
    /// under the tracked name.
    #[test]
    fn a_folder_renamed_into_place_is_kept_and_the_rename_moves_it() {
        let dir = tempfile::tempdir().unwrap();
        let (partial, whole) = (dir.path().join(".f.partial-1"), dir.path().join("f"));
        std::fs::create_dir_all(&partial).unwrap();
        std::fs::write(partial.join("x"), "x").unwrap();
        let _held = track([partial.clone()]);
        rename(&partial, &whole).unwrap();
        assert!(!partial.exists() && whole.join("x").exists(), "moved");
        remove_live_under(dir.path());
        assert_eq!(std::fs::read_to_string(whole.join("x")).unwrap(), "x", "what took its name is kept");
        assert!(rename(&partial, &whole).is_err(), "a folder that is gone is not renamed");
    }
}
