//! The command's standard output and error, written without ever panicking (issue 41: every
//! command piped into `head -1` ended with exit 101, "failed printing to stdout: Broken
//! pipe", and so did `>/dev/full` and `2>/dev/full`). `println!`, `print!`, `eprintln!` and
//! `eprint!` of the crate come here (sim/lib.rs, sim/main.rs).
//!
//! A closed stream (the reader is gone: `| head -1`) is no error: what the command still had
//! to say is dropped, quietly, and the command finishes what it was doing, keeps what it
//! wrote and exits with its own code, as when nobody reads. Any other failure to write (a
//! full disk) is an I/O error: a message goes to stderr if it still can, and a command that
//! would have exited 0 or 1 exits 3 (`exit_code`).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);
static FAILED: AtomicBool = AtomicBool::new(false);

/// Writes to standard output.
pub fn out(args: std::fmt::Arguments) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_fmt(args).and_then(|()| stdout.flush());
    if let Err(e) = written {
        failed(e, "standard output", &STDOUT_CLOSED);
    }
}

/// Writes bytes to standard output (a completion script).
pub fn out_bytes(bytes: &[u8]) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        failed(e, "standard output", &STDOUT_CLOSED);
    }
}

/// Writes to standard error.
pub fn err(args: std::fmt::Arguments) {
    if STDERR_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = std::io::stderr().lock().write_fmt(args) {
        failed(e, "standard error", &STDERR_CLOSED);
    }
}

fn failed(e: std::io::Error, stream: &str, closed: &AtomicBool) {
    closed.store(true, Ordering::Relaxed);
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return;
    }
    // Said once; on stderr only while stderr still takes it.
    if !FAILED.swap(true, Ordering::Relaxed) && !STDERR_CLOSED.load(Ordering::Relaxed) {
        let _ = writeln!(std::io::stderr().lock(), "rehearsal: cannot write to {stream}: {e} (an I/O error: exit 3)");
    }
}

/// Whether writing to stdout or stderr failed other than by a closed pipe.
pub fn write_failed() -> bool {
    FAILED.load(Ordering::Relaxed)
}

/// The exit code once output is accounted for: a command that would have passed (0) or
/// failed (1) exits 3 when what it had to say could not be written.
pub fn exit_code(code: i32) -> i32 {
    if write_failed() && (code == 0 || code == 1) {
        3
    } else {
        code
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_turns_a_pass_or_a_failure_into_an_io_error_and_keeps_other_codes() {
        assert_eq!(exit_code(2), 2);
        FAILED.store(true, Ordering::Relaxed);
        assert_eq!([exit_code(0), exit_code(1), exit_code(2), exit_code(130)], [3, 3, 2, 130]);
        FAILED.store(false, Ordering::Relaxed);
    }
}
