//! Progress of long work (sweep, bench, explore, a long run) on stderr: a bar (indicatif) on
//! a terminal, a plain line every so many items otherwise (a CI log keeps lines, not redraws),
//! nothing under `--quiet`. Wall-clock only ever reaches stderr: no file depends on it.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

pub enum Progress {
    Quiet,
    /// `rehearsal: N/TOTAL WHAT done` every `every` items and at the end.
    Lines {
        total: usize,
        every: usize,
        what: &'static str,
    },
    Bar(ProgressBar),
}

impl Progress {
    /// A bar when stderr is a terminal, else lines every `every` items; `every == 0` is quiet.
    pub fn new(total: usize, every: usize, what: &'static str) -> Progress {
        if every == 0 {
            Progress::Quiet
        } else if std::io::stderr().is_terminal() {
            let style = ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} ({elapsed}, ~{eta} left)")
                .expect("a valid template")
                .progress_chars("=> ");
            let bar = ProgressBar::new(total as u64).with_style(style).with_prefix(what);
            Progress::Bar(bar)
        } else {
            Progress::Lines { total, every, what }
        }
    }

    /// `done` items of the total have finished.
    pub fn done(&self, done: usize) {
        match self {
            Progress::Quiet => {}
            Progress::Lines { total, every, what } => {
                if done.is_multiple_of(*every) || done == *total {
                    eprintln!("rehearsal: {done}/{total} {what} done");
                }
            }
            Progress::Bar(bar) => {
                bar.set_position(done as u64);
                if done as u64 >= bar.length().unwrap_or(0) {
                    bar.finish_and_clear();
                }
            }
        }
    }
}

/// A single run's progress in simulated time, shown only once the run has taken two seconds
/// of wall time (a short run prints nothing; `REHEARSAL_PROGRESS_AFTER_MS` sets another
/// delay, 0 for tests): a bar of simulated minutes on a terminal, else a line per simulated
/// hour.
pub struct RunProgress {
    started: std::time::Instant,
    show_after: std::time::Duration,
    terminal: bool,
    bar: Option<ProgressBar>,
    next_line_ms: i64,
}

impl RunProgress {
    const LINE_EVERY_MS: i64 = 3_600_000;

    pub fn new() -> RunProgress {
        let after_ms = std::env::var("REHEARSAL_PROGRESS_AFTER_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000);
        RunProgress {
            started: std::time::Instant::now(),
            show_after: std::time::Duration::from_millis(after_ms),
            terminal: std::io::stderr().is_terminal(),
            bar: None,
            next_line_ms: 0,
        }
    }

    /// The run has reached `now_ms` of at most `max_ms` simulated.
    pub fn update(&mut self, now_ms: i64, max_ms: i64) {
        if self.started.elapsed() < self.show_after {
            return;
        }
        if self.terminal {
            let bar = self.bar.get_or_insert_with(|| {
                let style = ProgressStyle::with_template("run [{bar:40}] {pos}/{len} simulated min ({elapsed})")
                    .expect("a valid template")
                    .progress_chars("=> ");
                ProgressBar::new((max_ms / 60_000) as u64).with_style(style)
            });
            bar.set_position((now_ms / 60_000) as u64);
        } else if now_ms >= self.next_line_ms {
            eprintln!("rehearsal: simulated {} of at most {}", hours_minutes(now_ms), hours_minutes(max_ms));
            self.next_line_ms = now_ms - now_ms % Self::LINE_EVERY_MS + Self::LINE_EVERY_MS;
        }
    }
}

impl Default for RunProgress {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for RunProgress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `3h05m`: simulated time as a progress line says it.
fn hours_minutes(ms: i64) -> String {
    let minutes = ms / 60_000;
    format!("{}h{:02}m", minutes / 60, minutes % 60)
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
