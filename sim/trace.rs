//! The trace: one CSV row per event, streamed to disk and hashed as it is written.
//!
//! The trace hash (SHA-256 of the exact bytes of `trace.csv`) is the run's fingerprint:
//! same scenario, seed and build ⇒ same hash (DESIGN.md, invariant 3).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::clock::format_utc_ms;
use crate::error::{Error, Result};

pub const HEADER: [&str; 10] = ["t_ms", "time", "actor", "session", "event", "statement", "rows", "state_after", "detail", "seq"];

/// One row of `trace.csv`.
#[derive(Clone, Debug, Default)]
pub struct TraceRow {
    /// Simulated milliseconds since the run's epoch.
    pub t_ms: i64,
    pub actor: String,
    pub session: String,
    pub event: String,
    pub statement: String,
    pub rows: String,
    pub state_after: String,
    pub detail: String,
}

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
        })
    }

    pub fn push(&mut self, row: TraceRow) -> Result<()> {
        self.rows_written += 1;
        let unix_ms = self.epoch_unix_ms + row.t_ms;
        if self.second_cache.0 != unix_ms.div_euclid(1000) {
            let full = format_utc_ms(unix_ms);
            self.second_cache = (unix_ms.div_euclid(1000), full[..full.len() - 4].to_string());
        }
        let time = format!("{}.{:03}", self.second_cache.1, unix_ms.rem_euclid(1000));
        let (t_ms, seq) = (row.t_ms.to_string(), self.rows_written.to_string());
        let record: [&str; 10] =
            [&t_ms, &time, &row.actor, &row.session, &row.event, &row.statement, &row.rows, &row.state_after, &row.detail, &seq];
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
