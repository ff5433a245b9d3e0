//! The reports' model built while the run writes its trace (issue 47 item 3): `rehearsal run`
//! hands the trace's bytes, as the trace's writer writes them (`TraceSink::create_copied`), to
//! a thread that parses them with the trace reader and feeds `Model::add`, so reading
//! trace.csv back after the run (~0.4 s of fleet-day's ~1.5 s) overlaps the simulation.
//!
//! Every byte of the reports stays the same: the thread reads the very bytes trace.csv holds,
//! in order, with the same reader and the same checks, into the same model. What the pass
//! could not know yet is done after it:
//! - the first violation (the model's focus) is known once the run is judged: the few rows
//!   at its time are read again from trace.csv, from a row the pass noted (`Mark`), and given
//!   to `Model::focus_row`;
//! - a trace larger than `REPORT_ROWS_MAX` rows is shown in a window the run's end decides:
//!   the pass gives up past that many rows and the reports read the file as before.
//!
//! Whatever goes wrong on the way (a stream cut short, a row that does not parse, a thread
//! that panicked) leaves the streamed model unused: the reports then read trace.csv back as
//! they always did, with the errors that reading gives.

use std::io::Read;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::model::{Focus, Model};
use super::REPORT_ROWS_MAX;
use crate::trace::trace_reader;

/// Chunks of the trace (64 KiB each) the writer may be ahead of the parse: a slow parse holds
/// the run back rather than the whole trace piling up in memory.
const CHUNKS_IN_FLIGHT: usize = 32;
/// A row noted every this many rows, to read the rows at the first violation's time again.
const MARK_EVERY_ROWS: u64 = 4096;

/// A row the pass noted: its time and the byte of trace.csv it starts at.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Mark {
    t_ms: i64,
    byte: u64,
}

/// What the pass gathered: the model without its focus, and the rows it noted.
struct Gathered {
    model: Model,
    marks: Vec<Mark>,
}

/// How often the pass notes a row, and the most rows it models (more: the reports read the file).
#[derive(Clone, Copy, Debug)]
struct Limits {
    mark_every_rows: u64,
    rows_max: u64,
}

/// The thread building the model from the trace's bytes.
pub struct StreamedModel {
    thread: Option<JoinHandle<Option<Gathered>>>,
}

/// The sender of the trace's bytes, for `TraceSink::create_copied` (by way of
/// `run::Execution::trace_copy`).
pub type TraceCopy = SyncSender<Vec<u8>>;

impl StreamedModel {
    /// Starts the thread; it reads the bytes sent to the returned sender (the trace that will
    /// be `trace`, named so in errors) until the sender is dropped. `None` when no thread can
    /// be started: the reports then read the file.
    pub fn start(trace: &Path) -> Option<(TraceCopy, StreamedModel)> {
        Self::start_with(trace, Limits { mark_every_rows: MARK_EVERY_ROWS, rows_max: REPORT_ROWS_MAX })
    }

    /// `start` with other limits: the tests' small ones make a short trace exercise the marks
    /// and the window that only long traces reach with the real ones.
    fn start_with(trace: &Path, limits: Limits) -> Option<(TraceCopy, StreamedModel)> {
        let (copy, chunks) = sync_channel(CHUNKS_IN_FLIGHT);
        let trace = trace.to_path_buf();
        let thread = std::thread::Builder::new().name("report-model".to_string()).spawn(move || gather(chunks, &trace, limits)).ok()?;
        Some((copy, StreamedModel { thread: Some(thread) }))
    }

    /// The model of the finished trace at `trace` with its focus, when the pass read it whole;
    /// `None` tells the reports to read the file. Call it once the trace's sender is dropped
    /// (the run has finished its trace), or it waits for that.
    pub fn finish(mut self, trace: &Path, focus: Option<Focus<'_>>) -> Option<Model> {
        let Gathered { mut model, marks } = match self.thread.take()?.join() {
            Ok(gathered) => gathered?,
            Err(_) => return None,
        };
        if let Some(f) = &focus {
            let t_ms = f.t_ms;
            // The last noted row before the focus's time: no row at that time comes before it.
            let from = marks.iter().rev().find(|m| m.t_ms < t_ms).or(marks.first())?;
            let mut rows_at = Vec::new();
            let read = trace_reader::for_each_from(trace, from.byte, |r| {
                if r.t_ms == t_ms {
                    rows_at.push(r.clone());
                }
                r.t_ms <= t_ms
            });
            read.ok()?;
            model.set_focus(focus);
            rows_at.iter().for_each(|r| model.focus_row(r));
        }
        Some(model)
    }
}

impl Drop for StreamedModel {
    /// Unfinished (the run ended in an error), the thread still ends with its bytes.
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The pass: every row into the model, a row noted every `limits.mark_every_rows`. `None` when the
/// trace does not read whole or has more rows than the reports show whole; the bytes are
/// read to their end either way, so the trace's writer is never held up.
fn gather(chunks: Receiver<Vec<u8>>, trace: &Path, limits: Limits) -> Option<Gathered> {
    let mut source = ChunkReader { chunks, chunk: Vec::new(), at: 0, last_byte: None };
    let mut model = Some(Model::new(None));
    let mut marks = Vec::new();
    let read = trace_reader::for_each_in_stream(&mut source, trace, |r, byte| {
        let Some(building) = model.as_mut() else { return };
        if r.seq > limits.rows_max {
            model = None;
            return;
        }
        if r.seq % limits.mark_every_rows == 1 {
            marks.push(Mark { t_ms: r.t_ms, byte });
        }
        building.add(r);
    });
    // Whatever was not read (an error stopped the pass) is drained, so the writer ends.
    source.drain();
    read.ok()?;
    // A trace whose last byte is no line end was cut short: the file's reading says so.
    if source.last_byte != Some(b'\n') {
        return None;
    }
    Some(Gathered { model: model?, marks })
}

/// The trace's bytes as they arrive, read in order; the end is the sender's drop.
struct ChunkReader {
    chunks: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
    last_byte: Option<u8>,
}

impl ChunkReader {
    fn drain(&mut self) {
        for chunk in self.chunks.iter() {
            if let Some(last) = chunk.last() {
                self.last_byte = Some(*last);
            }
        }
    }
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.at == self.chunk.len() {
            match self.chunks.recv() {
                Ok(chunk) => (self.chunk, self.at) = (chunk, 0),
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        self.last_byte = Some(buf[n - 1]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::scenario::Scenario;
    use crate::run::{execute, Execution, RunOptions, RunSummary};

    /// A run of zombie.toml (a hang, a violation and its write) made with its trace's bytes
    /// sent to a streamed model.
    fn run(dir: &Path) -> (RunSummary, StreamedModel) {
        run_of(dir, "scenarios/faults/zombie.toml")
    }

    /// `run` of the scenario at `path`, at its own seed.
    fn run_of(dir: &Path, path: &str) -> (RunSummary, StreamedModel) {
        let path = Path::new(path);
        let options = RunOptions { scenario_path: path.to_path_buf(), seed: None, out_dir: Some(dir.join("run")), variants: Vec::new() };
        let (copy, streamed) = StreamedModel::start(&dir.join("run/trace.csv")).expect("a thread");
        let plan = options.plan(&Scenario::load(path).expect("loads")).expect("plans");
        let summary = execute(plan, Execution { trace_copy: Some(copy), ..Execution::default() }).expect("runs").summary;
        (summary, streamed)
    }

    /// The pictures drawn from the model built during the run are the ones drawn from
    /// trace.csv read back, the violating write (found after the pass) included.
    #[test]
    fn the_streamed_model_draws_what_the_trace_read_back_draws() {
        let dir = tempfile::tempdir().expect("temp");
        let (summary, streamed) = run(dir.path());
        let trace = summary.out_dir.join("trace.csv");
        let streamed = streamed.finish(&trace, super::super::focus(&summary)).expect("read whole");
        let read_back = super::super::report_model(&summary.out_dir, &summary).expect("reads");
        assert!(read_back.violating_write.is_some(), "zombie.toml's violation is about a write");
        assert_eq!(streamed.violating_write, read_back.violating_write);
        let timeline = |model: &Model| super::super::timeline(model, &summary);
        assert_eq!(timeline(&streamed), timeline(&read_back));
        let plots = |model: &Model| super::super::plots::plots(model, &summary, &summary.resolved);
        assert_eq!(plots(&streamed), plots(&read_back));
    }

    /// The run of the scenario at `path` and its trace's bytes, the run's own streamed model unused.
    fn trace_of(dir: &Path, path: &str) -> (RunSummary, Vec<u8>) {
        let (summary, streamed) = run_of(dir, path);
        drop(streamed);
        let bytes = std::fs::read(summary.out_dir.join("trace.csv")).expect("the trace");
        (summary, bytes)
    }

    /// The streamed model of `bytes` (a whole trace) under `limits`, finished with `summary`'s focus.
    fn streamed_with(dir: &Path, bytes: &[u8], limits: Limits, summary: &RunSummary) -> Option<Model> {
        let (copy, streamed) = StreamedModel::start_with(&dir.join("copy.csv"), limits).expect("a thread");
        copy.send(bytes.to_vec()).expect("sent");
        drop(copy);
        streamed.finish(&summary.out_dir.join("trace.csv"), super::super::focus(summary))
    }

    /// The rows at the violation's time are read again from the last noted row *before* that
    /// time: noted every few rows, some note falls on a row at that very time, after the
    /// violating write, and starting there would lose it. exit-request-during-report's first
    /// violation (`set_error` over `exit_requested`) is the first of three rows at its time.
    /// Every stride finds the same write and draws the same timeline as the trace read back.
    #[test]
    fn the_rows_at_the_violation_are_read_from_a_note_before_its_time_whatever_the_stride() {
        let dir = tempfile::tempdir().expect("temp");
        let (summary, bytes) = trace_of(dir.path(), "scenarios/faults/exit-request-during-report.toml");
        let read_back = super::super::report_model(&summary.out_dir, &summary).expect("reads");
        assert!(read_back.violating_write.is_some(), "the violation is about a write");
        let timeline = |model: &Model| super::super::timeline(model, &summary);
        for stride in 2..=9 {
            let limits = Limits { mark_every_rows: stride, rows_max: REPORT_ROWS_MAX };
            let streamed = streamed_with(dir.path(), &bytes, limits, &summary).expect("read whole");
            assert_eq!(streamed.violating_write, read_back.violating_write, "noted every {stride} rows");
            assert_eq!(timeline(&streamed), timeline(&read_back), "noted every {stride} rows");
        }
    }

    /// A trace of exactly the most rows the reports show whole is modelled; one row more is not.
    #[test]
    fn a_trace_of_the_most_rows_is_modelled_and_one_more_is_left_to_the_file() {
        let dir = tempfile::tempdir().expect("temp");
        let (summary, bytes) = trace_of(dir.path(), "scenarios/faults/zombie.toml");
        let rows = bytes.iter().filter(|b| **b == b'\n').count() as u64 - 1;
        let limits = |rows_max| Limits { mark_every_rows: MARK_EVERY_ROWS, rows_max };
        assert!(streamed_with(dir.path(), &bytes, limits(rows), &summary).is_some(), "{rows} rows, at most {rows}");
        assert!(streamed_with(dir.path(), &bytes, limits(rows - 1), &summary).is_none(), "{rows} rows, at most {}", rows - 1);
    }

    /// Bytes that stop inside a row are no whole trace: the reports read the file instead.
    #[test]
    fn a_trace_cut_short_gives_no_model() {
        let dir = tempfile::tempdir().expect("temp");
        let (summary, bytes) = trace_of(dir.path(), "scenarios/faults/zombie.toml");
        let (copy, streamed) = StreamedModel::start(&dir.path().join("cut.csv")).expect("a thread");
        copy.send(bytes[..bytes.len() - 1].to_vec()).expect("sent");
        drop(copy);
        assert!(streamed.finish(&summary.out_dir.join("trace.csv"), None).is_none());
        let (copy, streamed) = StreamedModel::start(&dir.path().join("whole.csv")).expect("a thread");
        for chunk in bytes.chunks(1000) {
            copy.send(chunk.to_vec()).expect("sent");
        }
        drop(copy);
        assert!(streamed.finish(&summary.out_dir.join("trace.csv"), None).is_some(), "the same bytes whole, in other chunks");
    }
}
