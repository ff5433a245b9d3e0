//! One writer per output folder. A command that writes into a folder (`run`, `sweep`,
//! `merge`, `compare`, `bench`, `explore`, `search`) first holds `.rehearsal-lock` there: a
//! file naming its pid, the pid's start time, the host and the command line. A second
//! command into the same folder is refused (bad input, exit 2) naming the holder; a lock
//! whose process is gone (killed, or a second Ctrl-C) is taken over. Two sweeps into one
//! folder used to both run, leaving `results.csv` of one and `failures/` of both (issue 30).

use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};

pub use crate::base::out_owner::LOCK_FILE;

/// Held while the command runs; removed on drop if the file is still this process's.
#[derive(Debug)]
pub struct OutLock {
    path: PathBuf,
    text: String,
    /// The lock is removed by a Ctrl-C that ends the command (its drop does not run then).
    _live: crate::base::live_files::Live,
}

/// Who holds a lock, as its file says.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Holder {
    pid: u32,
    /// The process's start time in clock ticks since boot (`/proc/PID/stat`, field 22): a pid
    /// reused by another process after the holder died does not hold the lock.
    started: Option<u64>,
    host: String,
    command: String,
}

impl Holder {
    fn this_process() -> Holder {
        let pid = std::process::id();
        let command = std::env::args().collect::<Vec<_>>().join(" ");
        Holder { pid, started: start_ticks(pid), host: host_name(), command }
    }

    fn text(&self) -> String {
        let started = self.started.map_or(String::new(), |t| t.to_string());
        format!("pid={}\nstarted={started}\nhost={}\ncommand={}\n", self.pid, self.host, self.command.replace('\n', " "))
    }

    fn parse(text: &str) -> Option<Holder> {
        let field = |key: &str| text.lines().find_map(|line| line.strip_prefix(key)?.strip_prefix('='));
        Some(Holder {
            pid: field("pid")?.parse().ok()?,
            started: field("started").and_then(|t| t.parse().ok()),
            host: field("host")?.to_string(),
            command: field("command").unwrap_or_default().to_string(),
        })
    }

    /// Whether the holder may still be running: on another host it cannot be checked, so it
    /// is taken to be.
    fn may_be_alive(&self) -> bool {
        if self.host != host_name() {
            return true;
        }
        alive(self.pid) && (self.started.is_none() || start_ticks(self.pid) == self.started)
    }
}

/// Whether a process with this pid exists on this host. Where `/proc` is missing the
/// answer is yes: a lock or scratch folder that cannot be proved stale is left alone.
pub fn alive(pid: u32) -> bool {
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new("/proc").join(pid.to_string()).exists()
}

fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, in parentheses that may themselves hold spaces or ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

impl OutLock {
    /// Makes `out` if needed and holds its lock, taking over a lock of a process that is gone.
    pub fn acquire(out: &Path) -> Result<OutLock> {
        // Before anything is made there: `/`, the home folder, a repository (issue 41).
        crate::base::out_owner::refuse_unsafe(out)?;
        if out.exists() && !out.is_dir() {
            return Err(Error::input(format!("output folder {} is a file, not a folder", out.display())));
        }
        // A folder the user cannot write is their input (exit 2), whether it exists or not:
        // refused here before the lock's own write would fail as I/O (exit 3).
        crate::base::out_probe::ensure_writable(out)?;
        crate::base::live_files::create_dir_all(out)
            .map_err(|e| Error::input(format!("cannot create output folder {}: {e}", out.display())))?;
        let path = out.join(LOCK_FILE);
        let text = Holder::this_process().text();
        // A few rounds: each lost race (another process took the lock over first) is retried.
        for _ in 0..4 {
            if let Some(_live) = try_create(&path, &text)? {
                clear_dead_temporaries(out);
                return Ok(OutLock { path, text, _live });
            }
            let held = std::fs::read_to_string(&path).unwrap_or_default();
            match Holder::parse(&held) {
                Some(holder) if holder.may_be_alive() => return Err(in_use(out, &path, &holder)),
                // A dead holder's lock, or one that is not a lock file at all: taken over.
                _ => take_over(&path, &held)?,
            }
        }
        Err(Error::harness(format!("cannot take the lock {}: other processes keep taking it", path.display())))
    }
}

/// Creates `path` holding `text` whole, tracked for a Ctrl-C, or returns None when it exists.
/// The text goes to a file of this process first and is linked into place, so a reader never
/// sees it half written.
fn try_create(path: &Path, text: &str) -> Result<Option<crate::base::live_files::Live>> {
    let fail = |e: std::io::Error| Error::harness(format!("cannot write the lock {}: {e}", path.display()));
    let mine = path.with_file_name(format!("{LOCK_FILE}.{}.tmp", std::process::id()));
    // A Ctrl-C between the write and the removal below removes it too (issue 41: a merge
    // stopped 10 ms in left `.rehearsal-lock.PID.tmp`, tests/it/kills.rs); tracked before it
    // is made, and made through the registry, so none is made after the Ctrl-C's removal.
    let _live = crate::base::live_files::track([mine.clone()]);
    crate::base::live_files::make(|| std::fs::write(&mine, text)).map_err(fail)?;
    // Linked and tracked in one step: tracked only if it is ours (another's lock is never
    // removed), and never left untracked for a Ctrl-C between the link and the tracking.
    let linked = crate::base::live_files::make_tracked(
        || match std::fs::hard_link(&mine, path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        },
        |&linked| if linked { vec![path.to_path_buf()] } else { Vec::new() },
    );
    let _ = std::fs::remove_file(&mine);
    match linked.map_err(fail)? {
        (live, true) => Ok(Some(live)),
        (_, false) => Ok(None),
    }
}

/// The lock's own temporaries that a process killed while taking a lock left behind
/// (`.rehearsal-lock.PID.tmp` of `try_create`, `.rehearsal-lock.stale.PID` of `take_over`),
/// and the ownership record's (`.rehearsal-owned.PID.tmp`, sim/base/out_owner.rs: a merge
/// killed by SIGKILL while writing its record left one, tests/it/kills.rs):
/// removed once the lock is held, when their process is gone, so the next command into a
/// folder leaves nothing of a killed one (tests/it/kills.rs found one after a kill that
/// landed between `try_create`'s write and its removal).
fn clear_dead_temporaries(out: &Path) {
    let Ok(entries) = std::fs::read_dir(out) else { return };
    for entry in entries.filter_map(|e| e.ok()) {
        if temporary_pid(&entry.file_name().to_string_lossy()).is_some_and(|pid| !alive(pid)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The pid a name of one of the lock's temporaries carries (`.PID.tmp`, `.stale.PID`, and
/// sim/base/out_probe.rs's `.PID.N.probe`), or of the record's (`.PID.tmp`).
fn temporary_pid(name: &str) -> Option<u32> {
    if let Some(pid) = name.strip_prefix(crate::base::out_owner::RECORD_FILE).and_then(|r| r.strip_prefix('.')?.strip_suffix(".tmp")) {
        return pid.parse().ok();
    }
    let rest = name.strip_prefix(LOCK_FILE)?.strip_prefix('.')?;
    let pid = match rest.strip_suffix(".probe") {
        Some(probe) => probe.split('.').next()?,
        None => rest.strip_suffix(".tmp").or_else(|| rest.strip_prefix("stale."))?,
    };
    pid.parse().ok()
}

/// Moves a stale lock out of the way (one rename: of two processes taking it over, one
/// wins); a lock that changed since it was read (a live process took it meanwhile) is put
/// back.
fn take_over(path: &Path, stale_text: &str) -> Result<()> {
    let aside = path.with_file_name(format!("{LOCK_FILE}.stale.{}", std::process::id()));
    match std::fs::rename(path, &aside) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::harness(format!("cannot take over the stale lock {}: {e}", path.display()))),
    }
    let moved = std::fs::read_to_string(&aside).unwrap_or_default();
    if moved != stale_text {
        let _ = std::fs::hard_link(&aside, path);
    }
    let _ = std::fs::remove_file(&aside);
    Ok(())
}

fn in_use(out: &Path, path: &Path, holder: &Holder) -> Error {
    Error::input(format!(
        "{} is in use by another rehearsal command (pid {} on {}: `{}`); wait for it to end or choose another --out (its lock: {})",
        out.display(),
        holder.pid,
        holder.host,
        holder.command,
        path.display()
    ))
}

impl Drop for OutLock {
    fn drop(&mut self) {
        if std::fs::read_to_string(&self.path).is_ok_and(|text| text == self.text) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().expect("spawn true");
        let pid = child.id();
        child.wait().expect("waited");
        pid
    }

    #[test]
    fn a_second_holder_is_refused_naming_the_first_and_the_lock_goes_with_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let lock = OutLock::acquire(&out).expect("a free folder");
        let text = std::fs::read_to_string(out.join(LOCK_FILE)).unwrap();
        assert!(text.starts_with(&format!("pid={}\n", std::process::id())), "{text}");
        let e = OutLock::acquire(&out).expect_err("held");
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(e.to_string().contains(&format!("in use by another rehearsal command (pid {}", std::process::id())), "{e}");
        drop(lock);
        assert!(!out.join(LOCK_FILE).exists(), "dropped with its holder");
        let names: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(names.is_empty(), "no temporary left: {names:?}");
        drop(OutLock::acquire(&out).expect("free again"));
    }

    #[test]
    fn a_lock_of_a_process_that_is_gone_or_a_reused_pid_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        let dead = Holder { pid: dead_pid(), started: Some(1), host: host_name(), command: "rehearsal sweep".into() };
        let reused = Holder { pid: std::process::id(), started: Some(u64::MAX), ..dead.clone() };
        for stale in [dead, reused] {
            std::fs::write(&path, stale.text()).unwrap();
            let lock = OutLock::acquire(dir.path()).expect("taken over");
            assert_eq!(Holder::parse(&std::fs::read_to_string(&path).unwrap()), Some(Holder::this_process()));
            drop(lock);
        }
        // On another host the pid cannot be checked: the lock holds.
        let elsewhere = Holder { pid: dead_pid(), started: None, host: "some-other-host".into(), command: "rehearsal run".into() };
        std::fs::write(&path, elsewhere.text()).unwrap();
        assert!(OutLock::acquire(dir.path()).expect_err("held").to_string().contains("on some-other-host"));
    }

    #[test]
    fn taking_the_lock_clears_the_temporaries_of_lock_takers_that_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let (dead, live) = (dead_pid(), std::process::id());
        let names = [
            format!("{LOCK_FILE}.{dead}.tmp"),
            format!("{LOCK_FILE}.stale.{dead}"),
            format!("{LOCK_FILE}.stale.{live}"),
            format!("{LOCK_FILE}.notes.tmp"),
            format!(".other.{dead}.tmp"),
            format!("{LOCK_FILE}.{dead}.0.probe"),
            format!("{LOCK_FILE}.{live}.7.probe"),
            format!("{LOCK_FILE}.x.0.probe"),
            format!("{}.{dead}.tmp", crate::base::out_owner::RECORD_FILE),
            format!("{}.{live}.tmp", crate::base::out_owner::RECORD_FILE),
        ];
        for name in &names {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        let lock = OutLock::acquire(dir.path()).expect("free");
        let left: Vec<bool> = names.iter().map(|n| dir.path().join(n).exists()).collect();
        assert_eq!(
            left,
            [false, false, true, true, true, false, true, true, false, true],
            "only a gone process's lock temporaries, probes and record temporaries go"
        );
        drop(lock);
    }

    #[test]
    fn a_file_in_place_of_the_folder_is_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "x").unwrap();
        assert_eq!(OutLock::acquire(&dir.path().join("file")).expect_err("a file").exit_code(), 2);
    }
}
