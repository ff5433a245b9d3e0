//! The trace: one CSV row per event, streamed to disk and hashed as it is written. Format v2
//! (sim/trace/trace_codec.rs documents it): a `run_start` row first, one row per event (facts of
//! ground truth included, as `truth` rows), a `run_end` row last, and an `observed` column
//! that holds what the other columns lack, so the trace reader gives back every event and a
//! finished run can be judged again from its files (`rehearsal judge`). The row bytes and
//! their hash are `trace_rows`'.
//!
//! The trace hash (SHA-256 of the exact bytes of `trace.csv`) is the run's fingerprint:
//! same scenario (as named on the command line), seed and build ⇒ same hash (ARCHITECTURE.md,
//! invariant "byte-identical `trace.csv`").

pub mod trace_codec;
pub mod trace_reader;
pub mod trace_spool;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::base::trace_rows::{format_count, itoa_buf, Chunks, Hashed, RowText, RowWriter};
use crate::trace::trace_spool::Spool;
use crate::vocab::{ActorName, NameHash};
use crate::world::event::{Event, EventKind, ParamsText, SqlResult, Who};

/// The columns of trace format v2 (`trace_codec::FORMAT_VERSION`).
pub const HEADER: [&str; 11] =
    ["t_ms", "time", "actor", "session", "event", "statement", "rows", "state_after", "detail", "seq", "observed"];

/// The first and last rows' contents live with their encoding (`trace_codec`), so the codec
/// needs nothing of this file.
pub use crate::trace::trace_codec::{RunEnd, RunStart};

pub struct TraceSink {
    rows: RowWriter<Destination>,
    tmp_path: PathBuf,
    final_path: PathBuf,
    /// Each actor's column text, formatted once per run rather than once per row.
    actor_names: HashMap<ActorName, Box<str>, NameHash>,
    /// The observed column of the row being written, reused between rows.
    observed_buf: String,
    /// The detail column of a row whose detail is built, reused between rows.
    detail_buf: String,
}

/// Where a trace's bytes go: its file, written on a thread of its own, or nowhere when only
/// their hash is wanted (a sweep's pair that passes keeps nothing else of its trace:
/// `TraceSink::unwritten`; hashed on the run's thread, as a sweep's other jobs keep the
/// cores busy).
enum Destination {
    File(Spool),
    Nowhere(Hashed<std::io::Sink>),
}

impl Chunks for Destination {
    fn take(&mut self, pending: &mut Vec<u8>) {
        match self {
            Destination::File(spool) => spool.take(pending),
            Destination::Nowhere(hashed) => hashed.take(pending),
        }
    }

    fn hash_so_far(&mut self) -> String {
        match self {
            Destination::File(spool) => spool.hash_so_far(),
            Destination::Nowhere(hashed) => hashed.hash_so_far(),
        }
    }

    fn finish(self) -> std::io::Result<String> {
        match self {
            Destination::File(spool) => spool.finish(),
            Destination::Nowhere(hashed) => hashed.finish(),
        }
    }
}

/// The columns of one event's row that depend on its kind: event, statement, rows,
/// state_after, detail.
type KindColumns<'a> = (&'a str, &'a str, &'a str, &'a str, &'a str);

/// An event's kind as its row shows it; `observed` receives the observed column, and
/// `rows_buf` and `detail_buf` hold the columns that are built rather than borrowed.
fn kind_columns<'a>(
    kind: &'a EventKind,
    rows_buf: &'a mut [u8; 20],
    detail_buf: &'a mut String,
    observed: &mut String,
) -> Result<KindColumns<'a>> {
    Ok(match kind {
        EventKind::Truth(fact) => {
            trace_codec::encode_fact(observed, fact);
            ("truth", "", "", "", "")
        }
        EventKind::Swarm { name, value } => {
            let _ = write!(detail_buf, "{name}={value}");
            ("swarm", "", "", "", detail_buf.as_str())
        }
        EventKind::Sql(sql) => {
            let state_after = sql.after.as_ref().map_or("", |a| a.state.as_str());
            let rows = match &sql.result {
                SqlResult::Rows(n) => format_count(rows_buf, *n as u64),
                SqlResult::Busy(_) => "busy",
                SqlResult::Failed(_) | SqlResult::SqliteError(_) => "error",
            };
            let detail = match &sql.result {
                SqlResult::Rows(_) => match &sql.params_text {
                    ParamsText::Text(text) => text.as_str(),
                    bound => {
                        bound.push_to(detail_buf);
                        detail_buf.as_str()
                    }
                },
                SqlResult::Busy(message) => message.as_str(),
                SqlResult::Failed(message) | SqlResult::SqliteError(message) => {
                    detail_buf.push_str(message);
                    detail_buf.push_str("; ");
                    sql.params_text.push_to(detail_buf);
                    detail_buf.as_str()
                }
            };
            trace_codec::encode_sql(observed, sql);
            ("sql", sql.stmt.name(), rows, state_after, detail)
        }
        EventKind::File { op, path, lines, first_line } => {
            let rows = match lines {
                Some(n) => format_count(rows_buf, *n as u64),
                None => "missing",
            };
            (op.as_str(), path.as_str(), rows, "", first_line.as_str())
        }
        EventKind::Ended(how) => (how.as_str(), "", "", "", ""),
        EventKind::FaultCrash { why } => ("fault_crash", "", "", "", why.as_str()),
        EventKind::FaultHang { who, ms } => {
            let _ = write!(detail_buf, "{who} hangs for {ms} ms");
            ("fault_hang", "", "", "", detail_buf.as_str())
        }
        EventKind::Note { what, detail } => {
            if trace_codec::is_reserved_event(what) {
                return Err(Error::harness(format!("a note named `{what}` would read back as another kind of trace row")));
            }
            (what.as_ref(), "", "", "", detail.as_str())
        }
    })
}

impl TraceSink {
    /// Writes to `path.tmp` and renames into place on `finish`, so a killed run never leaves
    /// half a trace under the real name.
    /// Not `atomic::write_atomically`: the trace is streamed (too large to hold) and hashed as written.
    pub fn create(path: &Path, epoch_unix_ms: i64) -> Result<TraceSink> {
        TraceSink::create_copied(path, epoch_unix_ms, None)
    }

    /// `create`, and a copy of the file's bytes sent to `copy` as they are written, their end
    /// when the sink finishes (`Spool::start_copied`).
    pub fn create_copied(path: &Path, epoch_unix_ms: i64, copy: Option<std::sync::mpsc::SyncSender<Vec<u8>>>) -> Result<TraceSink> {
        let tmp_path = PathBuf::from(format!("{}.tmp", path.display()));
        // Through the registry (sim/base/live_files.rs): never made after a Ctrl-C's removal.
        let file = crate::base::live_files::make(|| File::create(&tmp_path))
            .map_err(|e| Error::harness(format!("cannot create {}: {e}", tmp_path.display())))?;
        let spool =
            Spool::start_copied(file, copy).map_err(|e| Error::harness(format!("cannot start writing {}: {e}", tmp_path.display())))?;
        Ok(TraceSink {
            rows: RowWriter::new(Destination::File(spool), epoch_unix_ms, &HEADER),
            tmp_path,
            final_path: path.to_path_buf(),
            actor_names: HashMap::default(),
            observed_buf: String::new(),
            detail_buf: String::new(),
        })
    }

    /// A sink that writes no file: `finish` returns the hash of the bytes `create`'s file
    /// would hold, and nothing else is kept.
    pub fn unwritten(epoch_unix_ms: i64) -> TraceSink {
        TraceSink {
            rows: RowWriter::new(Destination::Nowhere(Hashed::new(std::io::sink())), epoch_unix_ms, &HEADER),
            tmp_path: PathBuf::new(),
            final_path: PathBuf::new(),
            actor_names: HashMap::default(),
            observed_buf: String::new(),
            detail_buf: String::new(),
        }
    }

    /// The first row: the scenario, seed, variants and epoch the run was made with.
    pub fn write_run_start(&mut self, start: &RunStart) -> Result<()> {
        self.observed_buf.clear();
        trace_codec::encode_run_start(&mut self.observed_buf, start);
        self.engine_row(0, "run_start");
        Ok(())
    }

    /// The last row: how the run ended, at its makespan, and the seal of the rows before it
    /// (their count and the SHA-256 of their bytes, the header's included: C120).
    pub fn write_run_end(&mut self, end: &RunEnd) -> Result<()> {
        let (rows, sha256) = self.rows.seal();
        self.observed_buf.clear();
        trace_codec::encode_run_end(&mut self.observed_buf, end, &trace_codec::Seal { rows, sha256 });
        self.engine_row(end.makespan_ms, "run_end");
        Ok(())
    }

    /// A row of the engine's whose only content is its event name and `observed_buf`.
    fn engine_row(&mut self, t_ms: i64, event: &str) {
        let text = RowText {
            actor: "engine",
            session: "",
            event,
            statement: "",
            rows: "",
            state_after: "",
            detail: "",
            observed: &self.observed_buf,
        };
        self.rows.row(t_ms, &text);
    }

    /// Writes the trace row of one event.
    pub fn write(&mut self, event: &Event) -> Result<()> {
        let mut rows_buf = itoa_buf();
        self.detail_buf.clear();
        self.observed_buf.clear();
        let (event_name, statement, rows, state_after, detail) =
            kind_columns(&event.kind, &mut rows_buf, &mut self.detail_buf, &mut self.observed_buf)?;
        let actor = match event.who {
            Who::Engine => "engine",
            Who::Actor(name) => self.actor_names.entry(name).or_insert_with(|| name.to_string().into_boxed_str()),
        };
        let text = RowText {
            actor,
            session: &event.session,
            event: event_name,
            statement,
            rows,
            state_after,
            detail,
            observed: &self.observed_buf,
        };
        self.rows.row(event.t_ms, &text);
        Ok(())
    }

    /// Whether the rows go to a file (`create`), not only into a hash (`unwritten`): a run
    /// that keeps its trace is one a person waits for, whose consumers get a core of their own
    /// (sim/run/observer_thread.rs); a sweep's hash-only pairs keep both cores busy already.
    pub fn writes_a_file(&self) -> bool {
        matches!(self.rows.sink(), Destination::File(_))
    }

    pub fn rows_written(&self) -> u64 {
        self.rows.rows_written()
    }

    /// A sink that goes on from the rows this one has taken, as this one would: for a sink
    /// that writes no file (`unwritten`), whose state is its hash so far and the bytes not yet
    /// hashed. `explore crashes` keeps such copies at its base run's snapshots
    /// (sim/run/fork.rs); `None` for a sink writing a file.
    pub fn fork(&mut self, buffer: Vec<u8>) -> Option<TraceSink> {
        if self.writes_a_file() {
            return None;
        }
        // What is pending is hashed first (a hash does not depend on how its bytes come in
        // chunks), so the copy holds no pending rows of its own.
        self.rows.flush();
        let Destination::Nowhere(hashed) = self.rows.sink() else { return None };
        Some(TraceSink {
            rows: self.rows.fork_into(Destination::Nowhere(hashed.clone()), buffer),
            tmp_path: PathBuf::new(),
            final_path: PathBuf::new(),
            actor_names: self.actor_names.clone(),
            observed_buf: String::new(),
            detail_buf: String::new(),
        })
    }

    /// The buffer this sink makes its rows in, emptied and taken from it: what a sink forked
    /// in its place makes its rows in (`fork`). This sink takes no row after.
    pub fn take_buffer(&mut self) -> Vec<u8> {
        self.rows.take_buffer()
    }

    /// Flushes, renames into place and returns the hex SHA-256 of the file's bytes.
    pub fn finish(self) -> Result<String> {
        let trace_error = |e: std::io::Error| Error::harness(format!("trace: writing {}: {e}", self.tmp_path.display()));
        let destination = self.rows.into_chunks();
        let written = matches!(destination, Destination::File(_));
        // The file is written whole and synced before it takes its name.
        let hash = destination.finish().map_err(trace_error)?;
        if written {
            // Never after a Ctrl-C's removal (sim/base/live_files.rs): `trace.csv` is tracked
            // until the database takes its name.
            crate::base::live_files::rename(&self.tmp_path, &self.final_path)?;
        }
        Ok(hash)
    }
}
