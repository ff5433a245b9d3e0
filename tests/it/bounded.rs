//! Runs the binary with a hang guard and a memory measure: the child is reaped with `wait4`,
//! which gives its own peak resident set (`ru_maxrss`), and killed past `HANG_GUARD`. These are
//! guards against hangs and runaway growth (issue 30), not performance assertions: the bounds
//! are generous multiples of what the commands need.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Past this the child is killed and the case fails as a hang.
pub const HANG_GUARD: Duration = Duration::from_secs(60);
/// Peak resident memory any case may reach (the runs the battery makes need tens of MB).
pub const MEMORY_BOUND_KB: i64 = 500 * 1024;

pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub peak_rss_kb: i64,
    pub hung: bool,
}

impl Ran {
    /// The code, the fragments in stderr, no panic, no hang, memory under the bound.
    pub fn assert(&self, what: &str, code: i32, fragments: &[&str]) {
        let shown = format!("{what}\nstdout:\n{}\nstderr:\n{}", cut(&self.stdout), cut(&self.stderr));
        assert!(!self.hung, "{what}: still running after {HANG_GUARD:?}, killed\n{shown}");
        assert_eq!(self.code, Some(code), "{shown}");
        assert!(!self.stderr.contains("panicked"), "{what}: a panic\n{shown}");
        for fragment in fragments {
            assert!(self.stderr.contains(fragment), "{what}: expected `{fragment}` in stderr\n{shown}");
        }
        assert!(self.peak_rss_kb <= MEMORY_BOUND_KB, "{what}: peak RSS {} KB > {MEMORY_BOUND_KB} KB", self.peak_rss_kb);
    }
}

fn cut(text: &str) -> &str {
    let end = text.char_indices().nth(4000).map_or(text.len(), |(i, _)| i);
    &text[..end]
}

/// Runs `rehearsal ARGS` in `cwd`, its stdin empty.
// The child is reaped by `wait4` below, which `Child::wait` cannot replace: it alone gives the
// child's own peak memory.
#[allow(clippy::zombie_processes)]
pub fn rehearsal_in(cwd: &Path, args: &[String]) -> Ran {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rehearsal"))
        .args(args)
        .current_dir(cwd)
        .env_remove("REHEARSAL_SEED")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rehearsal starts");
    let pid = child.id() as libc::pid_t;
    let (mut out, mut err) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    let readers = (
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = out.read_to_end(&mut s);
            s
        }),
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = err.read_to_end(&mut s);
            s
        }),
    );
    let started = Instant::now();
    let (mut status, mut hung) = (0, false);
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our child, not yet reaped (std's `Child` never waits for it here).
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if reaped == pid {
            break;
        }
        if started.elapsed() > HANG_GUARD && !hung {
            hung = true;
            // SAFETY: signalling our own child, still unreaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    Ran {
        code,
        stdout: text(readers.0.join().expect("reader")),
        stderr: text(readers.1.join().expect("reader")),
        peak_rss_kb: usage.ru_maxrss,
        hung,
    }
}
