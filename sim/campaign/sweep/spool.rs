//! A sweep's finished pairs' rows and wall times, in results.csv's order, kept on disk rather
//! than in memory (issue 41: a sweep's memory is flat in its pairs): summary.md's failure
//! lines, junit.xml, failures/known.txt, `--json`'s rows and a baseline's judgement read them
//! back, one at a time, at the end. The file is unnamed (made in the sweep's folder and
//! unlinked at once), so no kill, error or Ctrl-C leaves it behind.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::results::ResultRow;
use crate::base::error::{Error, Result};

#[derive(Serialize)]
struct LineOut<'a> {
    row: &'a ResultRow,
    wall_ns: u64,
}

#[derive(Deserialize)]
struct LineIn {
    row: ResultRow,
    wall_ns: u64,
}

/// Rows added one at a time; read back (after `seal`, or `each` on the way) in their order.
pub(crate) struct Spool {
    writer: BufWriter<File>,
    len: usize,
}

fn broken(e: impl std::fmt::Display) -> Error {
    Error::harness(format!("the sweep's rows on disk: {e}"))
}

impl Spool {
    /// An unnamed file in `folder` (where the sweep's files go: its disk holds results.csv).
    pub(crate) fn new(folder: &Path) -> Result<Spool> {
        // Through the registry (sim/base/live_files.rs): where the kernel cannot make a file
        // without a name, it is named for an instant, never after a Ctrl-C's removal.
        let file = crate::base::live_files::make(|| tempfile::tempfile_in(folder))
            .map_err(|e| Error::harness(format!("cannot make a file in {}: {e}", folder.display())))?;
        Ok(Spool { writer: BufWriter::new(file), len: 0 })
    }

    pub(crate) fn push(&mut self, row: &ResultRow, wall: Duration) -> Result<()> {
        let wall_ns = u64::try_from(wall.as_nanos()).unwrap_or(u64::MAX);
        serde_json::to_writer(&mut self.writer, &LineOut { row, wall_ns }).map_err(broken)?;
        self.writer.write_all(b"\n").map_err(broken)?;
        self.len += 1;
        Ok(())
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Every row so far, in a list: what a baseline compares (it holds a line a pair itself).
    pub(crate) fn collect(&mut self) -> Result<Vec<ResultRow>> {
        self.writer.flush().map_err(broken)?;
        collect_lines(self.writer.get_ref(), self.len)
    }

    /// No more rows: what reads them.
    pub(crate) fn seal(self) -> Result<Rows> {
        let len = self.len;
        let file = self.writer.into_inner().map_err(|e| broken(e.error()))?;
        Ok(Rows { file, len })
    }
}

/// A sealed spool: the rows of a finished sweep, read back as often as needed.
pub struct Rows {
    file: File,
    len: usize,
}

impl Rows {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every row, in order, to `visit` with its index and wall time.
    pub fn each(&self, visit: impl FnMut(usize, ResultRow, Duration) -> Result<()>) -> Result<()> {
        read_lines(&self.file, visit)
    }

    /// Every row, in a list (a baseline's comparison, a merge: they hold a line a pair anyway).
    pub fn collect(&self) -> Result<Vec<ResultRow>> {
        collect_lines(&self.file, self.len)
    }
}

/// Reads `file` from its start, whatever its offset (each reader has its own).
struct At<'a> {
    file: &'a File,
    offset: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

/// Every row of `file` (`len` of them), in a list.
fn collect_lines(file: &File, len: usize) -> Result<Vec<ResultRow>> {
    let mut rows = Vec::with_capacity(len);
    read_lines(file, |_, row, _| {
        rows.push(row);
        Ok(())
    })?;
    Ok(rows)
}

fn read_lines(file: &File, mut visit: impl FnMut(usize, ResultRow, Duration) -> Result<()>) -> Result<()> {
    let mut reader = BufReader::new(At { file, offset: 0 });
    let mut line = String::new();
    let mut index = 0;
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(broken)? == 0 {
            return Ok(());
        }
        let LineIn { row, wall_ns } = serde_json::from_str(&line).map_err(broken)?;
        visit(index, row, Duration::from_nanos(wall_ns))?;
        index += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::RunOutcome;

    fn row(seed: u64) -> ResultRow {
        ResultRow {
            scenario: "s.toml".into(),
            variant: "default".into(),
            seed,
            verdict: if seed.is_multiple_of(2) { RunOutcome::Pass } else { RunOutcome::Fail },
            first_violation: "budget: a line\nwith \"quotes\"".into(),
            rules: super::super::results::Rules::of(["budget", "liveness"]),
            sim_time_ms: -3,
            statements: seed,
            trace_hash: "ab".into(),
            replay: "rehearsal run s.toml --seed 1".into(),
            sql: String::new(),
            collapsed: String::new(),
            faults_armed: "crash=1".into(),
            faults_fired: String::new(),
            faults_unreached: String::new(),
        }
    }

    /// Rows read back are the rows added, in order, with their wall times to the nanosecond,
    /// as often as asked, while rows are still added and once sealed; the file is nowhere.
    #[test]
    fn rows_come_back_as_they_were_added_and_leave_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::new(dir.path()).unwrap();
        let rows: Vec<ResultRow> = (1..=300).map(row).collect();
        for (i, r) in rows.iter().enumerate().take(100) {
            spool.push(r, Duration::new(i as u64, 7 + i as u32)).unwrap();
        }
        assert_eq!(spool.collect().unwrap(), rows[..100]);
        for (i, r) in rows.iter().enumerate().skip(100) {
            spool.push(r, Duration::new(i as u64, 7 + i as u32)).unwrap();
        }
        let sealed = spool.seal().unwrap();
        assert_eq!(sealed.len(), 300);
        for _ in 0..2 {
            let mut seen = 0;
            sealed
                .each(|i, r, wall| {
                    assert_eq!((r, wall), (rows[i].clone(), Duration::new(i as u64, 7 + i as u32)));
                    seen += 1;
                    Ok(())
                })
                .unwrap();
            assert_eq!(seen, 300);
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "an unnamed file");
    }
}
