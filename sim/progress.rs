//! Progress of long work (sweep, bench, explore) on stderr: a bar (indicatif) on a terminal,
//! a plain line every so many items otherwise (a CI log keeps lines, not redraws), nothing
//! under `--quiet`. Wall-clock only ever reaches stderr: no file depends on it.

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

impl Drop for Progress {
    fn drop(&mut self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
