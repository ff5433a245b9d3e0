//! The trace: one CSV row per event, streamed to disk and hashed as it is written. Format v2
//! (sim/trace_codec.rs documents it): a `run_start` row first, one row per event (facts of
//! ground truth included, as `truth` rows), a `run_end` row last, and an `observed` column
//! that holds what the other columns lack, so the trace reader gives back every event and a
//! finished run can be judged again from its files (`rehearsal judge`).
//!
//! The trace hash (SHA-256 of the exact bytes of `trace.csv`) is the run's fingerprint:
//! same scenario (as named on the command line), seed and build ⇒ same hash (DESIGN.md,
//! invariant 3).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::clock::format_utc_ms;
use crate::error::{Error, Result};
use crate::event::{Event, EventKind, SqlResult, Who};
use crate::trace_codec;

/// The columns of trace format v2 (`trace_codec::FORMAT_VERSION`).
pub const HEADER: [&str; 11] =
    ["t_ms", "time", "actor", "session", "event", "statement", "rows", "state_after", "detail", "seq", "observed"];

/// The first and last rows' contents live with their encoding (`trace_codec`), so the codec
/// needs nothing of this file.
pub use crate::trace_codec::{RunEnd, RunStart};

/// Bytes go to the file and into the hash at once, so the hash is of exactly what is on disk.
struct HashingWriter {
    file: BufWriter<File>,
    hasher: Sha256,
}

impl Write for HashingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

pub struct TraceSink {
    writer: csv::Writer<HashingWriter>,
    epoch_unix_ms: i64,
    rows_written: u64,
    tmp_path: PathBuf,
    final_path: PathBuf,
    /// The formatted `time` of the last row's second, reused by rows in the same second.
    second_cache: (i64, String),
    /// The actor column of the row being written, reused between rows.
    actor_buf: String,
    /// The observed column of the row being written, reused between rows.
    observed_buf: String,
}

/// Room for a count's decimal digits.
fn itoa_buf() -> [u8; 20] {
    [0; 20]
}

/// `n` in decimal, written into `buf`.
fn format_count(buf: &mut [u8; 20], mut n: usize) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).expect("ascii digits")
}

impl TraceSink {
    /// Writes to `path.tmp` and renames into place on `finish`, so a killed run never leaves
    /// half a trace under the real name.
    /// Not `atomic::write_atomically`: the trace is streamed (too large to hold) and hashed as written.
    pub fn create(path: &Path, epoch_unix_ms: i64) -> Result<TraceSink> {
        let tmp_path = PathBuf::from(format!("{}.tmp", path.display()));
        let file = File::create(&tmp_path).map_err(|e| Error::harness(format!("cannot create {}: {e}", tmp_path.display())))?;
        let inner = HashingWriter { file: BufWriter::new(file), hasher: Sha256::new() };
        let mut writer = csv::Writer::from_writer(inner);
        writer.write_record(HEADER).map_err(|e| Error::harness(format!("trace: {e}")))?;
        Ok(TraceSink {
            writer,
            epoch_unix_ms,
            rows_written: 0,
            tmp_path,
            final_path: path.to_path_buf(),
            second_cache: (i64::MIN, String::new()),
            actor_buf: String::new(),
            observed_buf: String::new(),
        })
    }

    /// The first row: the scenario, seed, variants and epoch the run was made with.
    pub fn write_run_start(&mut self, start: &RunStart) -> Result<()> {
        let mut observed = std::mem::take(&mut self.observed_buf);
        observed.clear();
        trace_codec::encode_run_start(&mut observed, start);
        let result = self.write_row(0, "engine", "", "run_start", "", "", "", "", &observed);
        self.observed_buf = observed;
        result
    }

    /// The last row: how the run ended, at its makespan.
    pub fn write_run_end(&mut self, end: &RunEnd) -> Result<()> {
        let mut observed = std::mem::take(&mut self.observed_buf);
        observed.clear();
        trace_codec::encode_run_end(&mut observed, end);
        let result = self.write_row(end.makespan_ms, "engine", "", "run_end", "", "", "", "", &observed);
        self.observed_buf = observed;
        result
    }

    /// Writes the trace row of one event.
    pub fn write(&mut self, event: &Event) -> Result<()> {
        let mut rows_buf = itoa_buf();
        let detail_buf: String;
        let mut observed = std::mem::take(&mut self.observed_buf);
        observed.clear();
        let (event_name, statement, rows, state_after, detail): (&str, &str, &str, &str, &str) = match &event.kind {
            EventKind::Truth(fact) => {
                trace_codec::encode_fact(&mut observed, fact);
                ("truth", "", "", "", "")
            }
            EventKind::Swarm { name, value } => {
                detail_buf = format!("{name}={value}");
                ("swarm", "", "", "", &detail_buf)
            }
            EventKind::Sql(sql) => {
                let state_after = sql.after.as_ref().map_or("", |a| a.state.as_str());
                let rows = match &sql.result {
                    SqlResult::Rows(n) => format_count(&mut rows_buf, *n),
                    SqlResult::Busy(_) => "busy",
                    SqlResult::Failed(_) | SqlResult::Locked(_) => "error",
                };
                let detail = match &sql.result {
                    SqlResult::Rows(_) => sql.params_text.as_str(),
                    SqlResult::Busy(message) => message.as_str(),
                    SqlResult::Failed(message) | SqlResult::Locked(message) => {
                        detail_buf = format!("{message}; {}", sql.params_text);
                        &detail_buf
                    }
                };
                trace_codec::encode_sql(&mut observed, sql);
                ("sql", sql.stmt.name(), rows, state_after, detail)
            }
            EventKind::File { op, path, lines, first_line } => {
                let rows = match lines {
                    Some(n) => format_count(&mut rows_buf, *n),
                    None => "missing",
                };
                (op.as_str(), path.as_str(), rows, "", first_line.as_str())
            }
            EventKind::Ended(how) => (how.as_str(), "", "", "", ""),
            EventKind::FaultCrash { why } => ("fault_crash", "", "", "", why.as_str()),
            EventKind::FaultHang { who, ms } => {
                detail_buf = format!("{who} hangs for {ms} ms");
                ("fault_hang", "", "", "", &detail_buf)
            }
            EventKind::Note { what, detail } => {
                if trace_codec::is_reserved_event(what) {
                    return Err(Error::harness(format!("a note named `{what}` would read back as another kind of trace row")));
                }
                (what.as_ref(), "", "", "", detail.as_str())
            }
        };
        self.actor_buf.clear();
        match event.who {
            Who::Engine => self.actor_buf.push_str("engine"),
            Who::Actor(name) => {
                use std::fmt::Write as _;
                let _ = write!(self.actor_buf, "{name}");
            }
        }
        let actor = std::mem::take(&mut self.actor_buf);
        let result = self.write_row(event.t_ms, &actor, &event.session, event_name, statement, rows, state_after, detail, &observed);
        self.actor_buf = actor;
        self.observed_buf = observed;
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn write_row(
        &mut self,
        t_ms: i64,
        actor: &str,
        session: &str,
        event: &str,
        statement: &str,
        rows: &str,
        state_after: &str,
        detail: &str,
        observed: &str,
    ) -> Result<()> {
        self.rows_written += 1;
        let unix_ms = self.epoch_unix_ms + t_ms;
        if self.second_cache.0 != unix_ms.div_euclid(1000) {
            let full = format_utc_ms(unix_ms);
            self.second_cache = (unix_ms.div_euclid(1000), full[..full.len() - 4].to_string());
        }
        let time = format!("{}.{:03}", self.second_cache.1, unix_ms.rem_euclid(1000));
        let (t_ms, seq) = (t_ms.to_string(), self.rows_written.to_string());
        let record: [&str; 11] = [&t_ms, &time, actor, session, event, statement, rows, state_after, detail, &seq, observed];
        // Streamed only: a fleet-sized run has millions of rows, and nothing reads them back
        // before the file is whole (reports re-read trace.csv).
        self.writer.write_record(record).map_err(|e| Error::harness(format!("trace: {e}")))?;
        Ok(())
    }

    pub fn rows_written(&self) -> u64 {
        self.rows_written
    }

    /// Flushes, renames into place and returns the hex SHA-256 of the file's bytes.
    pub fn finish(self) -> Result<String> {
        let inner = self.writer.into_inner().map_err(|e| Error::harness(format!("trace flush: {e}")))?;
        let HashingWriter { file, hasher } = inner;
        let file = file.into_inner().map_err(|e| Error::harness(format!("trace flush: {e}")))?;
        file.sync_all()?;
        std::fs::rename(&self.tmp_path, &self.final_path)?;
        let digest = hasher.finalize();
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        Ok(hex)
    }
}
