//! What this process has made and not finished: temporaries (a run's unfinished database and
//! trace, a file being written whole, a failure folder being copied, scratch folders), the
//! output folders' locks it holds, and the child processes that write into them. A Ctrl-C
//! that ends the command at once removes them before it exits (sim/base/interrupt.rs), since
//! `exit` runs no destructors; what was finished (renamed into place) is not here and is kept
//! (issue 41, item 2: every orderly exit, 130 included, removes the temporaries it made).
//!
//! The rule that makes the removal hold in every interleaving of the other threads: a path is
//! made (a file at a tracked name, a randomly named temporary, a folder that may lie inside a
//! tracked one, a child process that writes them) only through this registry, under its one
//! lock, and only while no interrupt has begun (`make`, `make_tracked`, `create_dir_all`,
//! `spawn`). The interrupt takes the same lock, marks the registry closed, kills the children
//! and waits for them to end, removes every tracked path, and exits still holding the lock. So
//! whatever was made before is tracked by then and removed; nothing is made after: a thread
//! that comes to the registry waits for the exit, and one that finds it closed is refused. A
//! thread that only writes into files it already has open (an unlinked database or trace)
//! makes no name. (Before, another thread could create a run's `comms.db.tmp`, a
//! `write_atomically` temporary or, through a `sqlite3` child, a `calibration.db` between
//! the removal and the exit, and it stayed: tests/it/kills.rs.)

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The registry of one process (`REGISTRY`; unit tests make their own).
struct Registry {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The paths of every `Live` of the registry: files or folders, made or about to be.
    paths: Vec<PathBuf>,
    /// The children of every `LiveChild`.
    children: Vec<Child>,
    /// An interrupt began removing: nothing more is made through the registry.
    closed: bool,
}

/// The process's registry: what a Ctrl-C removes.
static REGISTRY: Registry = Registry::new();

impl Registry {
    const fn new() -> Registry {
        Registry { state: Mutex::new(State { paths: Vec::new(), children: Vec::new(), closed: false }) }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn track(&'static self, paths: Vec<PathBuf>) -> Live {
        self.state().paths.extend(paths.iter().cloned());
        Live { paths, registry: self }
    }

    /// Runs `make` under the lock unless an interrupt began: see `make`.
    fn make<T, E: From<std::io::Error>>(&self, make: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let state = self.state();
        if state.closed {
            return Err(E::from(refused()));
        }
        make()
    }

    /// `make`, and the paths of what it made tracked under the same lock: see `make_tracked`.
    fn make_tracked<T, E: From<std::io::Error>>(
        &'static self,
        make: impl FnOnce() -> Result<T, E>,
        paths: impl FnOnce(&T) -> Vec<PathBuf>,
    ) -> Result<(Live, T), E> {
        let mut state = self.state();
        if state.closed {
            return Err(E::from(refused()));
        }
        let made = make()?;
        let paths = paths(&made);
        state.paths.extend(paths.iter().cloned());
        Ok((Live { paths, registry: self }, made))
    }

    /// Closes the registry, kills its children and waits until they are gone, and removes
    /// every tracked path; returns the lock still held, so nothing is made until it is let go
    /// (never, for an interrupt: the process exits holding it).
    fn close_and_remove(&self) -> MutexGuard<'_, State> {
        let mut state = self.state();
        state.closed = true;
        for child in &state.children {
            child.kill();
        }
        for child in &state.children {
            child.wait_gone();
        }
        for path in std::mem::take(&mut state.paths) {
            remove(&path);
        }
        state
    }
}

/// What `make` returns once an interrupt began: the thing is not made.
fn refused() -> std::io::Error {
    std::io::Error::other("refused: a Ctrl-C is ending this process and has removed its temporaries")
}

/// Paths an interrupt removes while this is held; dropped when the code that made them has
/// renamed or removed them itself (dropping removes nothing).
#[derive(Debug)]
#[must_use = "the paths are tracked only while this is held"]
pub struct Live {
    paths: Vec<PathBuf>,
    registry: &'static Registry,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Registry")
    }
}

/// Tracks `paths` (files or folders, existing or about to be made) until the `Live` is
/// dropped: before they are made, so a removal covers one not made yet. Make them with
/// `make` (or `create_dir_all`), so none is made after an interrupt's removal.
pub fn track(paths: impl IntoIterator<Item = PathBuf>) -> Live {
    REGISTRY.track(paths.into_iter().collect())
}

/// Makes something an interrupt must find (a file at a tracked path, a folder that may lie
/// inside a tracked one): `make` runs under the registry's lock, and not at all once an
/// interrupt began (an error, "refused: …"). Keep `make` short: every thread that makes or
/// tracks something waits for it.
pub fn make<T, E: From<std::io::Error>>(make: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    REGISTRY.make(make)
}

/// Makes something whose name is known only once it is made (a temporary named at random, a
/// lock that may be another's) and tracks `paths(&made)` under the same lock: an interrupt
/// finds it either not made or made and tracked, never made and not yet tracked. The `Live`
/// comes first: bound first (`let (_live, made) = …`), it is dropped last, after what `made`'s
/// own drop removes.
pub fn make_tracked<T, E: From<std::io::Error>>(
    make: impl FnOnce() -> Result<T, E>,
    paths: impl FnOnce(&T) -> Vec<PathBuf>,
) -> Result<(Live, T), E> {
    REGISTRY.make_tracked(make, paths)
}

/// `std::fs::create_dir_all` through the registry: a folder (a run's, a report's) may lie
/// inside a tracked one (a scratch folder, a `.NAME.partial-PID` copy), which it would make
/// again after an interrupt removed it.
pub fn create_dir_all(path: impl AsRef<Path>) -> std::io::Result<()> {
    make(|| std::fs::create_dir_all(path))
}

impl Live {
    /// Runs `finish` (a rename into place) and lets go of the paths under one lock, not at all
    /// once an interrupt began: an interrupt finds them all unfinished and tracked, or finished
    /// and let go of (a run's `comms.db` taking its name while its `trace.csv`, tracked until
    /// then, was removed would leave a database without its trace).
    pub fn finish<T, E: From<std::io::Error>>(&mut self, finish: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let mut state = self.registry.state();
        if state.closed {
            return Err(E::from(refused()));
        }
        let done = finish()?;
        for path in std::mem::take(&mut self.paths) {
            if let Some(i) = state.paths.iter().rposition(|p| *p == path) {
                state.paths.swap_remove(i);
            }
        }
        Ok(done)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let mut state = self.registry.state();
        for path in &self.paths {
            if let Some(i) = state.paths.iter().rposition(|p| p == path) {
                state.paths.swap_remove(i);
            }
        }
    }
}

/// A child process that writes into tracked paths (calibrate's `sqlite3` processes): killed,
/// and waited for until it is gone, before the paths are removed, so none makes a file again
/// after its removal (a `kill -INT` of rehearsal alone left a `calibration.db` that a running
/// `sqlite3` created afterwards, tests/it/kills.rs).
#[derive(Debug)]
struct Child {
    pid: u32,
    /// A pidfd of the child (Linux): it names this process even once it was reaped and its
    /// pid given to another, so the interrupt never kills a stranger.
    pidfd: Option<std::os::fd::OwnedFd>,
}

impl Child {
    fn of(pid: u32) -> Child {
        Child { pid, pidfd: pidfd_open(pid) }
    }

    fn kill(&self) {
        match &self.pidfd {
            Some(fd) => pidfd_kill(fd),
            None => {
                // SAFETY: kill(2) with a pid this process spawned and has not let go of.
                unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGKILL) };
            }
        }
    }

    /// Waits until the child has ended (a pidfd turns readable then, reaped or not); without
    /// a pidfd, waits for it without reaping it (its owner's wait still gets its status).
    fn wait_gone(&self) {
        match &self.pidfd {
            Some(fd) => {
                use std::os::fd::AsRawFd;
                let mut poll = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
                // SAFETY: poll(2) on one valid pollfd; EINTR is retried.
                while unsafe { libc::poll(&mut poll, 1, -1) } < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {}
            }
            None => {
                // SAFETY: waitid(2) with a zeroed siginfo to fill; ECHILD (already reaped) ends it.
                let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
                while unsafe { libc::waitid(libc::P_PID, self.pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) } < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {}
            }
        }
    }
}

/// SIGKILL through a pidfd (only Linux makes them).
fn pidfd_kill(fd: &std::os::fd::OwnedFd) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: pidfd_send_signal(2) with an open pidfd and no siginfo.
        unsafe { libc::syscall(libc::SYS_pidfd_send_signal, fd.as_raw_fd(), libc::SIGKILL, std::ptr::null::<u8>(), 0) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// A pidfd of `pid` where the kernel has them (Linux 5.3 and later); without one the child is
/// killed by its pid, which its owner lets go of only after reaping it (a pid reused in that
/// instant would be another's).
fn pidfd_open(pid: u32) -> Option<std::os::fd::OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open(2); a non-negative result is a new descriptor this process owns.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as std::os::fd::RawFd) })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// A child process an interrupt kills while this is held; dropped once the child was waited for.
#[derive(Debug)]
#[must_use = "the child is tracked only while this is held"]
pub struct LiveChild {
    pid: u32,
    registry: &'static Registry,
}

impl Registry {
    fn spawn(&'static self, command: &mut std::process::Command) -> std::io::Result<(std::process::Child, LiveChild)> {
        let mut state = self.state();
        if state.closed {
            return Err(refused());
        }
        let child = command.spawn()?;
        let pid = child.id();
        state.children.push(Child::of(pid));
        Ok((child, LiveChild { pid, registry: self }))
    }
}

/// Starts `command` and tracks the child under the registry's lock: an interrupt finds it
/// either not started or tracked (it kills it and waits for it before removing anything), and
/// none starts after an interrupt began.
pub fn spawn(command: &mut std::process::Command) -> std::io::Result<(std::process::Child, LiveChild)> {
    REGISTRY.spawn(command)
}

impl Drop for LiveChild {
    fn drop(&mut self) {
        let mut state = self.registry.state();
        if let Some(i) = state.children.iter().rposition(|c| c.pid == self.pid) {
            state.children.swap_remove(i);
        }
    }
}

/// Removes every tracked path (a folder with what is in it), after killing the tracked
/// children and waiting for them, then runs `exit` without letting go of the registry: a
/// thread that would make, track or rename anything waits, so nothing is made or half
/// removed under its final name before the process ends. For an exit that skips destructors
/// (a Ctrl-C).
pub fn remove_live_then(exit: impl FnOnce()) {
    let _closed = REGISTRY.close_and_remove();
    exit();
}

/// Renames a tracked folder (or file) into place while no Ctrl-C removes it: a removal that
/// began first finishes first (the rename is then refused), one that comes after finds it
/// gone. Without it a folder renamed while a removal walked it was left empty under its
/// final name.
pub fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    make(|| std::fs::rename(from, to))
}

/// A folder another thread may still be writing into is removed again until it is gone: that
/// thread cannot make it again (a folder is made through the registry, which this removal
/// holds), and a file it makes in it after it is gone finds no folder.
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

    /// A registry of the test's own: closing the process's would refuse every other test's files.
    fn registry() -> &'static Registry {
        Box::leak(Box::new(Registry::new()))
    }

    fn tracked(registry: &Registry) -> Vec<PathBuf> {
        registry.state().paths.clone()
    }

    #[test]
    fn a_tracked_child_is_killed_and_waited_for_and_an_untracked_one_is_not() {
        use std::os::unix::process::ExitStatusExt;
        let registry = registry();
        let (mut tracked, live) = registry.spawn(std::process::Command::new("sleep").arg("30")).unwrap();
        let mut untracked = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        assert!(registry.state().children.iter().any(|c| c.pid == tracked.id()));
        drop(registry.close_and_remove());
        // Gone already: the removal waited for it (not reaped: its owner's wait still says how).
        let ended = tracked.try_wait().unwrap();
        assert_eq!(ended.and_then(|s| s.signal()), Some(libc::SIGKILL), "killed and ended before the removal");
        drop(live);
        assert!(registry.state().children.is_empty(), "dropped, no longer tracked");
        assert!(untracked.try_wait().unwrap().is_none(), "an untracked child runs on");
        untracked.kill().unwrap();
        untracked.wait().unwrap();
        let refused = registry.spawn(&mut std::process::Command::new("true")).unwrap_err();
        assert!(refused.to_string().starts_with("refused: a Ctrl-C"), "no child starts once closed: {refused}");
    }

    #[test]
    fn tracked_paths_are_removed_until_dropped_and_others_kept() {
        let registry = registry();
        let dir = tempfile::tempdir().unwrap();
        let (file, folder, kept) = (dir.path().join("a.tmp"), dir.path().join("b.partial"), dir.path().join("done"));
        std::fs::write(&file, "half").unwrap();
        std::fs::create_dir_all(folder.join("inner")).unwrap();
        std::fs::write(folder.join("inner/x"), "x").unwrap();
        std::fs::write(&kept, "finished").unwrap();
        let held = registry.track(vec![file.clone(), folder.clone()]);
        let released = registry.track(vec![kept.clone()]);
        drop(released);
        assert!(tracked(registry).contains(&file) && !tracked(registry).contains(&kept));
        drop(registry.close_and_remove());
        assert!(!file.exists() && !folder.exists(), "the tracked temporaries are gone");
        assert!(kept.exists(), "what was released (finished) is kept");
        drop(held);
        assert!(tracked(registry).is_empty(), "what is dropped is no longer tracked");
    }

    /// Tracked before it is made, and never made: the removal finds nothing and is content;
    /// made afterwards it is refused, so it cannot appear after the removal.
    #[test]
    fn a_path_registered_but_not_made_is_fine_and_making_it_after_the_interrupt_is_refused() {
        let registry = registry();
        let dir = tempfile::tempdir().unwrap();
        let (db, sub) = (dir.path().join("comms.db.tmp"), dir.path().join("run/temp"));
        let _live = registry.track(vec![db.clone(), dir.path().join("run")]);
        let closed = registry.close_and_remove();
        assert!(!db.exists() && tracked_in(&closed).is_empty(), "nothing to remove, nothing left tracked");
        drop(closed);
        let file = registry.make(|| std::fs::File::create(&db)).unwrap_err();
        assert!(file.to_string().starts_with("refused: a Ctrl-C"), "{file}");
        let folder = registry.make(|| std::fs::create_dir_all(&sub)).unwrap_err();
        assert!(folder.to_string().starts_with("refused"), "{folder}");
        let temporary = registry.make_tracked(|| tempfile::NamedTempFile::new_in(dir.path()), |f| vec![f.path().to_path_buf()]);
        assert!(temporary.is_err());
        assert!(registry.make(|| std::fs::rename(dir.path(), dir.path().join("x"))).is_err(), "nor renamed into place");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(names.is_empty(), "nothing was made after the removal: {names:?}");
    }

    fn tracked_in(state: &State) -> Vec<PathBuf> {
        state.paths.clone()
    }

    /// Made while the registry is open, what `make_tracked` makes is tracked at once: the
    /// removal finds it (a `write_atomically` temporary made and only then tracked was left).
    #[test]
    fn what_is_made_and_tracked_in_one_step_is_removed_and_what_is_made_before_is_kept() {
        let registry = registry();
        let dir = tempfile::tempdir().unwrap();
        let (_live, temporary) =
            registry.make_tracked(|| tempfile::NamedTempFile::new_in(dir.path()), |f| vec![f.path().to_path_buf()]).unwrap();
        let path = temporary.path().to_path_buf();
        assert!(tracked(registry).contains(&path));
        let finished = dir.path().join("finished");
        registry.make(|| std::fs::write(&finished, "x")).unwrap();
        drop(registry.close_and_remove());
        assert!(!path.exists(), "the temporary is removed");
        assert!(finished.exists(), "an untracked file made through the registry (finished) stays");
        // Its drop would remove it: it is gone already, which is fine.
        drop(temporary);
    }

    /// A tracked folder renamed into place is finished: the removal finds only what is left
    /// under the tracked name.
    #[test]
    fn a_folder_renamed_into_place_is_kept_and_the_rename_moves_it() {
        let registry = registry();
        let dir = tempfile::tempdir().unwrap();
        let (partial, whole) = (dir.path().join(".f.partial-1"), dir.path().join("f"));
        std::fs::create_dir_all(&partial).unwrap();
        std::fs::write(partial.join("x"), "x").unwrap();
        let _held = registry.track(vec![partial.clone()]);
        registry.make(|| std::fs::rename(&partial, &whole)).unwrap();
        assert!(!partial.exists() && whole.join("x").exists(), "moved");
        drop(registry.close_and_remove());
        assert_eq!(std::fs::read_to_string(whole.join("x")).unwrap(), "x", "what took its name is kept");
    }

    /// What `finish` renamed into place is let go of in the same step: the removal keeps it.
    #[test]
    fn a_finished_rename_lets_go_of_its_paths_and_none_finishes_after_the_interrupt() {
        let registry = registry();
        let dir = tempfile::tempdir().unwrap();
        let (tmp, done, trace) = (dir.path().join("comms.db.tmp"), dir.path().join("comms.db"), dir.path().join("trace.csv"));
        std::fs::write(&tmp, "db").unwrap();
        std::fs::write(&trace, "trace").unwrap();
        let mut live = registry.track(vec![tmp.clone(), trace.clone()]);
        live.finish(|| std::fs::rename(&tmp, &done)).unwrap();
        assert!(tracked(registry).is_empty(), "let go of with the rename");
        drop(registry.close_and_remove());
        assert!(done.exists() && trace.exists(), "a finished run is kept whole");
        let mut late = registry.track(vec![trace.clone()]);
        assert!(late.finish(|| std::fs::rename(&trace, &tmp)).is_err(), "refused once closed");
        assert!(trace.exists() && !tmp.exists());
    }

    /// The process's own registry is the one the functions use, and stays open here.
    #[test]
    fn the_process_registry_tracks_and_makes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a");
        let live = track([path.clone()]);
        make(|| std::fs::write(&path, "x")).unwrap();
        assert!(REGISTRY.state().paths.contains(&path));
        drop(live);
        assert!(!REGISTRY.state().paths.contains(&path));
        create_dir_all(dir.path().join("b/c")).unwrap();
        assert!(dir.path().join("b/c").is_dir());
    }
}
