//! `REHEARSAL_TIMINGS=1`: one stderr line per phase of a run and of its reports (`rehearsal:
//! timing <phase> <ms> ms`), so what each part of a whole `rehearsal run` costs can be read off
//! one run (issue 47 item 3, docs/performance.md). Off, a phase costs one load of a flag set
//! once per process: no clock is read and nothing is printed. The lines go to stderr only, so
//! no output file changes either way.

use std::sync::OnceLock;
use std::time::Instant;

/// Whether `REHEARSAL_TIMINGS` is set (to anything but `0` or nothing), read once.
pub fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("REHEARSAL_TIMINGS").is_some_and(|v| !v.is_empty() && v != "0"))
}

/// A phase being timed: started by `start`, printed by `end` (or dropped unprinted).
#[must_use]
pub struct Phase {
    name: &'static str,
    started: Option<Instant>,
}

/// Starts timing `name` when timings are on.
pub fn start(name: &'static str) -> Phase {
    Phase { name, started: on().then(Instant::now) }
}

impl Phase {
    /// Prints the phase's wall time since `start`, with the thread it ran on.
    pub fn end(self) {
        if let Some(started) = self.started {
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let thread = std::thread::current();
            let thread = thread.name().unwrap_or("?");
            eprintln!("rehearsal: timing {:<22} {ms:9.1} ms ({thread})", self.name);
        }
    }
}

/// Times `f` as the phase `name`.
pub fn time<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
    let phase = start(name);
    let out = f();
    phase.end();
    out
}
