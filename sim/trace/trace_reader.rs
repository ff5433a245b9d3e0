//! Reading `trace.csv` back, typed at the edge: the actor column becomes an `ActorName`, the
//! statement column a `Stmt` (for SQL rows), the state column a `TaskState`. Reports, the
//! tests and re-judging read the trace only through this reader, never by column position or
//! by searching names and detail strings.
//!
//! Two views of the same rows: `read` gives every row as a `TraceRecord` (what reports and
//! tests look at); `events` (or `EventStream`, streamed) gives back the run's `Event`s, equal
//! to the ones the run's checker consumed, with the run's first and last rows (format v2,
//! sim/trace/trace_codec.rs). A file that is no trace of this format, a row that does not parse, or
//! a trace cut short is an input error naming the file and the line.

use std::borrow::Cow;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::trace::trace_codec::{self, FORMAT_VERSION};
use crate::trace::{RunEnd, RunStart, HEADER};
use crate::vocab::{ActorName, SessionPlace, Stmt, TaskState};
use crate::world::event::{ActorEnd, Event, EventKind, FileOp, Who};

/// The columns of trace format v1, which had no `observed` column, no facts and no first and
/// last rows: recognised only to say what it is.
pub const HEADER_V1: [&str; 10] = ["t_ms", "time", "actor", "session", "event", "statement", "rows", "state_after", "detail", "seq"];

/// One row of `trace.csv`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceRecord {
    /// Simulated milliseconds since the run's epoch.
    pub t_ms: i64,
    /// `None` for the engine's own rows (faults, swarm draws, the run's start and end).
    pub actor: Option<ActorName>,
    pub session: String,
    /// The event column: `sql`, `file_append`, `exit`, `fault_crash`, `truth`, `run_start`,
    /// a note's name, …
    pub event: String,
    /// For `sql` rows, the statement.
    pub stmt: Option<Stmt>,
    /// The statement column as written: a statement name, or a file's path.
    pub statement: String,
    /// Rows returned or changed, `busy`, `error`, or for files lines written or `missing`.
    pub rows: String,
    /// The task row's state after a write.
    pub state_after: Option<TaskState>,
    pub detail: String,
    /// The row's number (1 for the first row under the header).
    pub seq: u64,
    /// What the other columns lack (sim/trace/trace_codec.rs), as written.
    pub observed: String,
}

impl TraceRecord {
    pub fn is_sql(&self) -> bool {
        self.event == "sql"
    }

    /// A row of what happened during the run, the kinds trace v1 had: not the run's first or
    /// last row, nor a fact of ground truth. Reports show these.
    pub fn is_effect(&self) -> bool {
        !matches!(self.event.as_str(), "truth" | "run_start" | "run_end")
    }

    /// The session an actor belongs to (`None` for the conductor and the engine).
    pub fn place(&self) -> Option<SessionPlace> {
        self.actor.and_then(|a| a.place())
    }

    /// The task a row is about: the actor's own task, or for the conductor the `task_id=`
    /// it bound (the detail column of its SQL rows).
    pub fn task_id(&self) -> Option<String> {
        if let Some(place) = self.place() {
            return Some(place.task_id());
        }
        let rest = self.detail.split("task_id=").nth(1)?;
        Some(rest.split_whitespace().next()?.to_string())
    }

    /// The `[ctx: NN%]` a status line ends with (000 "Temporary File Management").
    pub fn context_pct(&self) -> Option<i64> {
        let (_, tail) = self.detail.rsplit_once("[ctx: ")?;
        tail.strip_suffix("%]")?.parse().ok()
    }

    /// A fault the engine applied: `fault_crash`, `fault_hang`, `fault_watcher_death`,
    /// `fault_context_spike`.
    pub fn is_fault(&self) -> bool {
        self.event.starts_with("fault_")
    }

    /// A statement answered SQLITE_BUSY: the virtual write lock stayed taken past the busy
    /// timeout.
    pub fn is_busy(&self) -> bool {
        self.rows == "busy"
    }

    /// How long a `fault_hang` row's actor hangs (its detail: `… hangs for N ms`).
    pub fn hang_ms(&self) -> Option<i64> {
        if self.event != "fault_hang" {
            return None;
        }
        self.detail.split_once("hangs for ")?.1.split(' ').next()?.parse().ok()
    }

    /// The actor column as written.
    pub fn actor_text(&self) -> String {
        self.actor.map_or_else(|| "engine".to_string(), |a| a.to_string())
    }

    /// The event this row records; the column that does not parse, and why, otherwise. The
    /// run's first and last rows are no events.
    pub fn into_event(self) -> std::result::Result<Event, (&'static str, String)> {
        let TraceRecord { t_ms, actor, session, event, stmt, statement, rows, state_after: _, detail, seq: _, observed } = self;
        let has_observed = matches!(event.as_str(), "sql" | "truth");
        if !has_observed && !observed.is_empty() {
            return Err(("observed", format!("a `{event}` row has none, found `{observed}`")));
        }
        let kind = match event.as_str() {
            "sql" => {
                let stmt = stmt.expect("sql rows have a statement");
                EventKind::Sql(Box::new(trace_codec::decode_sql(stmt, &rows, &detail, &observed).map_err(|e| ("observed", e))?))
            }
            "truth" => EventKind::Truth(trace_codec::decode_fact(&observed).map_err(|e| ("observed", e))?),
            "swarm" => {
                let (name, value) = detail.split_once('=').ok_or_else(|| ("detail", format!("`{detail}` is no NAME=VALUE")))?;
                EventKind::Swarm { name: name.to_string(), value: value.to_string() }
            }
            "fault_crash" => EventKind::FaultCrash { why: detail },
            "fault_hang" => {
                let parsed = detail.rsplit_once(" hangs for ").and_then(|(who, rest)| Some((who, rest.strip_suffix(" ms")?.parse().ok()?)));
                let (who, ms) = parsed.ok_or_else(|| ("detail", format!("`{detail}` is no `WHO hangs for N ms`")))?;
                EventKind::FaultHang { who: who.to_string(), ms }
            }
            "run_start" | "run_end" => return Err(("event", format!("`{event}` is the run's first or last row, not an event"))),
            name => match (FileOp::parse(name), ActorEnd::parse(name)) {
                (Some(op), _) => {
                    let lines = match rows.as_str() {
                        "missing" => None,
                        n => Some(n.parse().map_err(|_| ("rows", format!("`{n}` is neither a line count nor `missing`")))?),
                    };
                    EventKind::File { op, path: statement, lines, first_line: detail }
                }
                (None, Some(how)) => EventKind::Ended(how),
                (None, None) => EventKind::Note { what: Cow::Owned(event), detail },
            },
        };
        Ok(Event { t_ms, who: actor.map_or(Who::Engine, Who::Actor), session: session.into(), kind })
    }
}

/// Every row of a trace.
pub fn read(path: &Path) -> Result<Vec<TraceRecord>> {
    read_window(path, i64::MIN, i64::MAX)
}

/// Rows with `from_ms <= t_ms < to_ms`, streamed, so a window of a trace of any size fits in
/// memory.
pub fn read_window(path: &Path, from_ms: i64, to_ms: i64) -> Result<Vec<TraceRecord>> {
    let mut out = Vec::new();
    let mut rows = Rows::open(path, Seal::Unchecked)?;
    while let Some((_, row)) = rows.next()? {
        if row.t_ms >= from_ms && row.t_ms < to_ms {
            out.push(row);
        }
    }
    Ok(out)
}

/// Hands every row with `from_ms <= t_ms < to_ms` to `on_row`, in order, holding none: one
/// pass over a trace of any size (the reports build their pictures so). The row lent is the
/// same buffer each time, refilled in place: a day's trace has ~430,000 rows, and a row
/// and a record allocated for each cost the reports more than parsing them (issue 32).
pub fn for_each_in_window(path: &Path, from_ms: i64, to_ms: i64, mut on_row: impl FnMut(&TraceRecord)) -> Result<()> {
    let mut rows = Rows::open(path, Seal::Unchecked)?;
    let mut row = TraceRecord::default();
    while rows.next_into(&mut row)?.is_some() {
        if row.t_ms >= from_ms && row.t_ms < to_ms {
            on_row(&row);
        }
    }
    Ok(())
}

/// Hands every row of a trace arriving as a stream of bytes (`source`: the trace's bytes as
/// they are written, sim/trace/trace_spool.rs) to `on_row` with the byte offset it starts at,
/// in order, holding none, with the checks `for_each_in_window` makes: `path` names the
/// trace in errors. What a stream cannot show until it ends is the caller's to check: that
/// its last byte is a line end.
pub fn for_each_in_stream(source: impl Read, path: &Path, mut on_row: impl FnMut(&TraceRecord, u64)) -> Result<()> {
    let mut rows = Rows::from_reader(source, path, Seal::Unchecked)?;
    let mut row = TraceRecord::default();
    while rows.next_into(&mut row)?.is_some() {
        on_row(&row, rows.byte());
    }
    Ok(())
}

/// Hands the rows of the trace at `path` from the one starting at byte `at` (an offset
/// `for_each_in_stream` gave of the same file) to `on_row`, in order, while it returns true:
/// a second look at a few rows of a trace read before, so no check of order is made again.
pub fn for_each_from(path: &Path, at: u64, mut on_row: impl FnMut(&TraceRecord) -> bool) -> Result<()> {
    let display = path.display();
    let mut file = std::fs::File::open(path).map_err(|e| Error::input(format!("{display}: {e}")))?;
    file.seek(SeekFrom::Start(at))?;
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).buffer_capacity(1 << 16).from_reader(file);
    let (mut record, mut row) = (csv::StringRecord::new(), TraceRecord::default());
    while reader.read_record(&mut record).map_err(|e| Error::input(format!("{display}: {e}")))? {
        parse_row(&record, &mut row).map_err(|(column, why)| Error::input(format!("{display}: column `{column}`: {why}")))?;
        if !on_row(&row) {
            break;
        }
    }
    Ok(())
}

/// A whole run read back: its first row, its events in order, its last row.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecord {
    pub start: RunStart,
    pub events: Vec<Event>,
    pub end: RunEnd,
}

/// The run's events, in the order the run's consumers saw them.
pub fn events(path: &Path) -> Result<RunRecord> {
    let stream = EventStream::open(path)?;
    let start = stream.start.clone();
    let mut events = Vec::new();
    let end = stream.for_each(|event| events.push(event))?;
    Ok(RunRecord { start, events, end })
}

/// A run's events streamed from its trace, so a trace of any size can be judged: `open` reads
/// the first row, `for_each` hands over every event and returns the last row.
pub struct EventStream {
    rows: Rows,
    pub start: RunStart,
}

impl EventStream {
    pub fn open(path: &Path) -> Result<EventStream> {
        let mut rows = Rows::open(path, Seal::Checked)?;
        let Some((line, first)) = rows.next()? else {
            return Err(Error::input(format!("{}:1: a header and no rows: no run_start row, not a run's trace", path.display())));
        };
        if first.event != "run_start" {
            return Err(Error::input(format!(
                "{}:{line}: the first row is `{}`, not `run_start`: not the trace of a whole run",
                path.display(),
                first.event
            )));
        }
        let start = trace_codec::decode_run_start(&first.observed).map_err(|why| rows.column_error(line, "observed", why))?;
        Ok(EventStream { rows, start })
    }

    /// Hands every event to `on_event`, in order, and returns the run's last row. A trace
    /// that stops before its `run_end` row was cut short; rows after it are refused too.
    pub fn for_each(mut self, mut on_event: impl FnMut(Event)) -> Result<RunEnd> {
        loop {
            let Some((line, record)) = self.rows.next()? else {
                return Err(Error::input(format!(
                    "{}:{}: the trace ends without its run_end row: a truncated trace, or a run stopped before its end",
                    self.rows.path.display(),
                    self.rows.last_line
                )));
            };
            match record.event.as_str() {
                "run_end" => {
                    let (end, seal) =
                        trace_codec::decode_run_end(&record.observed).map_err(|why| self.rows.column_error(line, "observed", why))?;
                    if let Some((line, after)) = self.rows.next()? {
                        return Err(Error::input(format!(
                            "{}:{line}: a `{}` row after the run_end row",
                            self.rows.path.display(),
                            after.event
                        )));
                    }
                    self.rows.check_seal(line, record.seq, seal)?;
                    return Ok(end);
                }
                "run_start" => return Err(Error::input(format!("{}:{line}: a second run_start row", self.rows.path.display()))),
                _ => on_event(record.into_event().map_err(|(column, why)| self.rows.column_error(line, column, why))?),
            }
        }
    }
}

/// Whether a reading of a trace checks its `run_end` row's seal (C120), and so hashes the bytes
/// it reads: judging does (`EventStream`); the reports and the row readers, which check no
/// seal, do not hash (the SHA-256 was ~24 % of the reports' re-read of fleet-day's trace,
/// issue 47).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seal {
    Checked,
    Unchecked,
}

/// A file's bytes, hashed as they are read except its last line, held back until the end:
/// the bytes a trace's `run_end` row (its last line) seals (C120). Only the last physical
/// line is held back; that row never spans two (its columns hold no line end). Without a
/// hasher (`Seal::Unchecked`) the bytes pass through untouched.
struct SealReader<R> {
    inner: R,
    hasher: Option<sha2::Sha256>,
    /// Bytes read and not hashed yet: at most the last whole line and what follows it.
    held: Vec<u8>,
}

impl<R: Read> SealReader<R> {
    fn new(inner: R, seal: Seal) -> SealReader<R> {
        let hasher = (seal == Seal::Checked).then(sha2::Digest::new);
        SealReader { inner, hasher, held: Vec::new() }
    }

    /// The hex SHA-256 of every byte before the last line, once the whole file is read
    /// (`None`: opened with `Seal::Unchecked`).
    fn hash_before_last_line(&self) -> Option<String> {
        let digest = sha2::Digest::finalize(self.hasher.clone()?);
        Some(digest.iter().map(|b| format!("{b:02x}")).collect())
    }
}

impl<R: Read> Read for SealReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let Some(hasher) = self.hasher.as_mut() else { return Ok(n) };
        self.held.extend_from_slice(&buf[..n]);
        // Everything up to the line end before the last one is no longer the last line.
        if let Some(last) = self.held.iter().rposition(|b| *b == b'\n') {
            if let Some(before) = self.held[..last].iter().rposition(|b| *b == b'\n') {
                sha2::Digest::update(hasher, &self.held[..=before]);
                self.held.drain(..=before);
            }
        }
        Ok(n)
    }
}

/// The rows of a trace of this format, with their line numbers.
struct Rows<R = std::fs::File> {
    path: PathBuf,
    reader: csv::Reader<SealReader<R>>,
    /// The record each row is read into, reused.
    record: csv::StringRecord,
    /// The line of the last row read (1: the header).
    last_line: u64,
    /// The seq and t_ms of the last row read: each row's seq is the one before plus one and
    /// its time is never earlier (issue 41: two rows swapped, a time set to 0 or a row deleted
    /// were judged "PASS, agrees").
    last_seq: u64,
    last_t_ms: i64,
}

impl Rows {
    /// Opens a trace: it must end with a line end (a row cut short is a truncated trace) and
    /// its header must be this format's.
    fn open(path: &Path, seal: Seal) -> Result<Rows> {
        let display = path.display();
        if let Some(lines) = unfinished_lines(path)? {
            return Err(Error::input(format!(
                "{display}:{lines}: the last row is cut short (the file does not end with a line end): a truncated trace"
            )));
        }
        Rows::from_reader(std::fs::File::open(path).map_err(|e| Error::input(format!("{display}: {e}")))?, path, seal)
    }
}

impl<R: Read> Rows<R> {
    /// The rows of the trace `source` holds (`path` names it in errors); its header must be
    /// this format's.
    fn from_reader(source: R, path: &Path, seal: Seal) -> Result<Rows<R>> {
        let display = path.display();
        let mut reader =
            csv::ReaderBuilder::new().has_headers(false).flexible(true).buffer_capacity(1 << 16).from_reader(SealReader::new(source, seal));
        let mut record = csv::StringRecord::new();
        if !reader.read_record(&mut record).map_err(|e| Error::input(format!("{display}:1: {e}")))? {
            return Err(Error::input(format!("{display}: empty, not a trace")));
        }
        let header: Vec<&str> = record.iter().collect();
        if header != HEADER {
            let what = if header == HEADER_V1 {
                "a trace of format v1 (no `observed` column; written before runs could be judged again)".to_string()
            } else {
                format!("not a trace of a known format: header `{}`", header.join(","))
            };
            return Err(Error::input(format!("{display}:1: {what}; this build reads format v{FORMAT_VERSION}: `{}`", HEADER.join(","))));
        }
        Ok(Rows { path: path.to_path_buf(), reader, record, last_line: 1, last_seq: 0, last_t_ms: 0 })
    }

    /// The byte offset the last row read starts at.
    fn byte(&self) -> u64 {
        self.record.position().map_or(0, |p| p.byte())
    }

    fn next(&mut self) -> Result<Option<(u64, TraceRecord)>> {
        let mut row = TraceRecord::default();
        Ok(self.next_into(&mut row)?.map(|line| (line, row)))
    }

    /// Reads the next row into `row` (its strings keep their buffers) and returns its line.
    fn next_into(&mut self, row: &mut TraceRecord) -> Result<Option<u64>> {
        let guess = self.last_line + 1;
        let read = self.reader.read_record(&mut self.record).map_err(|e| {
            let line = e.position().map_or(guess, |p| p.line());
            Error::input(format!("{}:{line}: {e}", self.path.display()))
        })?;
        if !read {
            return Ok(None);
        }
        let line = self.record.position().map_or(guess, |p| p.line());
        self.last_line = line;
        parse_row(&self.record, row).map_err(|(column, why)| self.column_error(line, column, why))?;
        if row.seq != self.last_seq + 1 {
            let why =
                format!("{} after {}: rows out of order, or one deleted or added; not the trace the run wrote", row.seq, self.last_seq);
            return Err(self.column_error(line, "seq", why));
        }
        if row.t_ms < self.last_t_ms {
            let why = format!("{} ms, before the previous row's {} ms: the trace's time never goes back", row.t_ms, self.last_t_ms);
            return Err(self.column_error(line, "t_ms", why));
        }
        (self.last_seq, self.last_t_ms) = (row.seq, row.t_ms);
        Ok(Some(line))
    }

    /// Once the whole file is read: the `run_end` row at `line` (whose seq is `end_seq`) seals
    /// the rows before it, their count and their bytes' hash (C120). A trace without a seal
    /// (written before C120, or the seal cut out) is refused: nothing would say it is whole.
    fn check_seal(&self, line: u64, end_seq: u64, seal: Option<trace_codec::Seal>) -> Result<()> {
        let Some(seal) = seal else {
            let why = "the run_end row has no `rows=` and `sha256=` seal: a trace written before this build sealed its rows (C120; judge it with the build that wrote it) or one whose seal was cut out".to_string();
            return Err(self.column_error(line, "observed", why));
        };
        let held = end_seq - 1;
        if seal.rows != held {
            let why = format!(
                "the run_end row seals {} rows, the trace holds {held} before it: rows deleted or added, or another trace's end row",
                seal.rows
            );
            return Err(self.column_error(line, "observed", why));
        }
        let read = self.reader.get_ref().hash_before_last_line().expect("a trace whose seal is checked is opened with Seal::Checked");
        if read != seal.sha256 {
            let why = format!(
                "the rows before the run_end row are not the ones it sealed (sealed sha256 {}, read {}): a row or field changed after the run wrote it (a forged seed or scenario, an edited time or value), or another trace's end row",
                &seal.sha256[..16],
                &read[..16]
            );
            return Err(self.column_error(line, "", why));
        }
        Ok(())
    }

    /// An error at `line`, in `column` unless it is empty (the row as a whole).
    fn column_error(&self, line: u64, column: &str, why: String) -> Error {
        match column {
            "" => Error::input(format!("{}:{line}: {why}", self.path.display())),
            column => Error::input(format!("{}:{line}: column `{column}`: {why}", self.path.display())),
        }
    }
}

/// `Some(number of lines)` when the file's last byte is not a line end: its last row was cut.
fn unfinished_lines(path: &Path) -> Result<Option<u64>> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(None);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(None);
    }
    let bytes = std::fs::read(path)?;
    Ok(Some(bytes.iter().filter(|b| **b == b'\n').count() as u64 + 1))
}

/// Fills `row` from `r`, reusing its strings' buffers.
fn parse_row(r: &csv::StringRecord, row: &mut TraceRecord) -> std::result::Result<(), (&'static str, String)> {
    if r.len() != HEADER.len() {
        return Err(("", format!("{} fields, expected {}", r.len(), HEADER.len())));
    }
    let t_ms = r[0].parse().map_err(|_| ("t_ms", format!("`{}` is not an integer", &r[0])))?;
    let actor = match &r[2] {
        "engine" => None,
        text => Some(ActorName::parse(text).ok_or_else(|| ("actor", format!("`{text}` is no actor name")))?),
    };
    let stmt = match &r[4] {
        "sql" => Some(Stmt::parse(&r[5]).ok_or_else(|| ("statement", format!("`{}` is no statement", &r[5])))?),
        _ => None,
    };
    let state_after = match &r[7] {
        "" => None,
        text => Some(TaskState::parse(text).ok_or_else(|| ("state_after", format!("`{text}` is no task state")))?),
    };
    let seq = r[9].parse().map_err(|_| ("seq", format!("`{}` is not an integer", &r[9])))?;
    (row.t_ms, row.actor, row.stmt, row.state_after, row.seq) = (t_ms, actor, stmt, state_after, seq);
    for (field, column) in [
        (&mut row.session, 3),
        (&mut row.event, 4),
        (&mut row.statement, 5),
        (&mut row.rows, 6),
        (&mut row.detail, 8),
        (&mut row.observed, 10),
    ] {
        field.clear();
        field.push_str(&r[column]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceSink;
    use crate::vocab::Ending;
    use crate::world::db::RowSnapshot;
    use crate::world::event::{Fact, SqlEvent, SqlResult};

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.csv");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    const HEAD: &str = "t_ms,time,actor,session,event,statement,rows,state_after,detail,seq,observed\n";

    #[test]
    fn rows_come_back_typed() {
        let text = format!(
            "{HEAD}0,2026-01-01 00:00:00.000,engine,,swarm,,,,crash_probability=0.1,1,\n\
             5,2026-01-01 00:00:00.005,task-02.S1.bg-watcher-1,abc,sql,heartbeat,1,working,task_id=task-02 session_id=abc,2,task=task-02\n\
             7,2026-01-01 00:00:00.007,conductor,conductor-session,sql,set_task_state,1,fix_proposed,task_id=task-03 state=fix_proposed,3,task=task-03\n\
             9,2026-01-01 00:00:00.009,task-02.S1,abc,file_append,temp/task-02-status,1,,step 1 done [ctx: 41%],4,\n"
        );
        let (_dir, path) = write(&text);
        let rows = read(&path).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].actor, None);
        assert_eq!(rows[1].stmt, Some(Stmt::Heartbeat));
        assert_eq!(rows[1].state_after, Some(TaskState::Working));
        assert_eq!(rows[1].task_id().as_deref(), Some("task-02"));
        assert_eq!(rows[2].task_id().as_deref(), Some("task-03"));
        assert_eq!(rows[3].context_pct(), Some(41));
        assert_eq!(rows[3].stmt, None);
        assert_eq!(read_window(&path, 5, 9).unwrap().len(), 2);
    }

    #[test]
    fn faults_busy_statements_and_hangs_are_recognised() {
        let text = format!(
            "{HEAD}10,x,engine,,fault_hang,,,,task-01.S1 hangs for 120000 ms,1,\n\
             11,x,engine,,fault_crash,,,,crashed after `set_needs_review`,2,\n\
             12,x,task-01.S1,abc,sql,claim_task,busy,,database is locked,3,task=task-01 result=busy params=\n\
             13,x,task-01.S1,abc,note,,,,hangs for 5 ms,4,\n"
        );
        let (_dir, path) = write(&text);
        let rows = read(&path).unwrap();
        assert_eq!(rows.iter().map(TraceRecord::is_fault).collect::<Vec<_>>(), [true, true, false, false]);
        assert_eq!(rows.iter().map(TraceRecord::is_busy).collect::<Vec<_>>(), [false, false, true, false]);
        assert_eq!(rows.iter().map(TraceRecord::hang_ms).collect::<Vec<_>>(), [Some(120_000), None, None, None]);
    }

    #[test]
    fn a_file_that_is_no_trace_is_refused_with_its_line() {
        let (_dir, path) = write("a,b\n1,2\n");
        let err = read(&path).unwrap_err().to_string();
        assert!(err.contains("trace.csv:1: not a trace of a known format"), "{err}");
        let (_dir, path) = write(&format!("{HEAD}5,x,task-01.S1,abc,sql,drop_everything,1,,,2,\n"));
        let err = read(&path).unwrap_err().to_string();
        assert!(err.contains("trace.csv:2: column `statement`"), "{err}");
        let (_dir, path) = write(&format!("{HEAD}5,x,task-01.S1,abc,sql,heartbeat,1,sleeping,,2,\n"));
        assert!(read(&path).unwrap_err().to_string().contains("column `state_after`"));
        let (_dir, path) = write(&format!("{HEAD}5,x,task-01.S1,abc,sql\n"));
        assert!(read(&path).unwrap_err().to_string().contains("trace.csv:2: 5 fields, expected 11"));
    }

    #[test]
    fn a_trace_of_format_v1_is_named_as_such() {
        let (_dir, path) = write("t_ms,time,actor,session,event,statement,rows,state_after,detail,seq\n0,x,engine,,swarm,,,,a=1,1\n");
        let err = read(&path).unwrap_err().to_string();
        assert!(err.contains("trace.csv:1: a trace of format v1") && err.contains("this build reads format v2"), "{err}");
    }

    #[test]
    fn a_cut_trace_is_refused_with_the_line_it_was_cut_at() {
        let (_dir, path) =
            write(&format!("{HEAD}0,x,engine,,run_start,,,,,1,scenario=s.toml seed=1 variants= epoch_unix_ms=0\n5,x,engine,,swa"));
        let err = events(&path).unwrap_err().to_string();
        assert!(err.contains("trace.csv:3: the last row is cut short"), "{err}");
        let (_dir, path) = write(&format!("{HEAD}0,x,engine,,run_start,,,,,1,scenario=s.toml seed=1 variants= epoch_unix_ms=0\n"));
        let err = events(&path).unwrap_err().to_string();
        assert!(err.contains("trace.csv:2: the trace ends without its run_end row"), "{err}");
        let (_dir, path) = write(&format!("{HEAD}0,x,engine,,swarm,,,,a=1,1,\n"));
        assert!(events(&path).unwrap_err().to_string().contains("trace.csv:2: the first row is `swarm`, not `run_start`"));
    }

    /// A snapshot of the task row.
    fn row(state: &str, session_id: &str, retry_count: i64) -> Option<RowSnapshot> {
        Some(RowSnapshot { state: state.parse().unwrap(), session_id: session_id.into(), retry_count, heartbeat_age_s: Some(12.25) })
    }

    fn sql(stmt: Stmt, result: SqlResult) -> SqlEvent {
        SqlEvent {
            stmt,
            task_id: "task-01".into(),
            result,
            rows_affected: 0,
            before: None,
            after: None,
            message: None,
            more_messages: Vec::new(),
            other_rows: Vec::new(),
            polled: Vec::new(),
            params_text: "task_id=task-01 session_id=abc".into(),
        }
    }

    fn event(t_ms: i64, who: &str, kind: EventKind) -> Event {
        let who = if who == "engine" { Who::Engine } else { Who::Actor(ActorName::parse(who).unwrap()) };
        Event { t_ms, who, session: if matches!(who, Who::Engine) { "".into() } else { "5e1c-session id".into() }, kind }
    }

    /// Text that needs every kind of escaping: separators, quotes, line ends, `%`, non-ASCII.
    const AWKWARD: &str = "a b,c;d=e \"q\" 100% ü\nnext\r\tend";

    /// At least one event of every kind, every fact and every statement result, with text that
    /// needs escaping and f64s that are not round in decimal.
    fn every_kind_of_event() -> Vec<Event> {
        let mut write = sql(Stmt::SetNeedsReview, SqlResult::Rows(1));
        write.rows_affected = 1;
        write.before = row("working", "abc", 0);
        write.after = row("needs_review", AWKWARD, 6);
        let mut insert = sql(Stmt::SendReviewRequest, SqlResult::Rows(1));
        insert.rows_affected = 1;
        insert.before = row("working", "abc", 2);
        insert.after = insert.before.clone();
        insert.message = Some((42, "task-01".into(), "review_request".into()));
        insert.params_text = format!("message={AWKWARD}").into();
        // One statement that inserted three messages and changed two other tasks' rows
        // (issue 26: every affected id is traced).
        let mut multi = insert.clone();
        multi.message = Some((43, "task-99".into(), "approval".into()));
        multi.more_messages = vec![(44, AWKWARD.into(), "approval".into()), (45, "task-01".into(), AWKWARD.into())];
        multi.other_rows = vec!["task-02".into(), AWKWARD.into()];
        let mut poll = sql(Stmt::PollTasks, SqlResult::Rows(3));
        poll.task_id = String::new();
        poll.polled = vec![
            ("task-01".into(), "working".into(), 0.1 + 0.2),
            ("task-02".into(), "needs_review".into(), 1e300),
            ("task-03".into(), AWKWARD.into(), -0.0),
            ("task-04".into(), "exited".into(), 5e-324),
        ];
        let busy = sql(Stmt::ClaimTask, SqlResult::Busy("simulated SQLITE_BUSY: lock held".into()));
        let failed = sql(Stmt::MarkComplete, SqlResult::Failed("CHECK constraint failed; state; x".into()));
        let locked = sql(Stmt::Heartbeat, SqlResult::SqliteError("database is locked".into()));
        let session = "task-01.S1";
        vec![
            event(0, "engine", EventKind::Swarm { name: "crash_probability".into(), value: "0.123=x".into() }),
            event(5, session, EventKind::Sql(Box::new(write))),
            event(6, session, EventKind::Sql(Box::new(insert))),
            event(7, "conductor", EventKind::Sql(Box::new(poll))),
            event(7, "conductor", EventKind::Sql(Box::new(multi))),
            event(8, session, EventKind::Sql(Box::new(busy))),
            event(9, session, EventKind::Sql(Box::new(failed))),
            event(10, "task-01.S1.bg-watcher-1", EventKind::Sql(Box::new(locked))),
            event(
                11,
                session,
                EventKind::File { op: FileOp::Append, path: "temp/task-01-status".into(), lines: Some(1), first_line: AWKWARD.into() },
            ),
            event(
                12,
                session,
                EventKind::File { op: FileOp::Write, path: "temp/task-01-HANDOFF".into(), lines: Some(0), first_line: String::new() },
            ),
            event(
                13,
                "conductor",
                EventKind::File { op: FileOp::Read, path: "temp/task-01-HANDOFF".into(), lines: None, first_line: String::new() },
            ),
            event(14, "task-01.S1.agent-1", EventKind::Ended(ActorEnd::KilledWithParent)),
            event(15, session, EventKind::Ended(ActorEnd::Exit)),
            event(16, "engine", EventKind::FaultCrash { why: AWKWARD.into() }),
            event(17, "engine", EventKind::FaultHang { who: "task-01.S1 hangs for 3 ms and".into(), ms: -5 }),
            event(18, session, EventKind::Note { what: Cow::Borrowed("stop_hook"), detail: AWKWARD.into() }),
            event(
                19,
                "conductor",
                EventKind::Truth(Fact::Launched { at_ms: 20, label: "S1".into(), session_id: "abc".into(), task_id: "task-01".into() }),
            ),
            event(20, "engine", EventKind::Truth(Fact::Crashed { session_id: "abc".into(), why: AWKWARD.into() })),
            event(21, "engine", EventKind::Truth(Fact::Hung { session_id: "abc".into(), until_ms: i64::MAX })),
            event(22, "engine", EventKind::Truth(Fact::WatcherDied { session_id: String::new() })),
            event(23, "engine", EventKind::Truth(Fact::Ended { session_id: "abc".into() })),
            event(23, session, EventKind::Truth(Fact::WorkOver { session_id: "abc".into() })),
            event(24, session, EventKind::Truth(Fact::MessageHandled { session_id: "abc".into(), message_id: -1 })),
            event(
                25,
                "conductor",
                EventKind::Truth(Fact::StaleDeclared {
                    task_id: "task-01".into(),
                    session_id: "abc".into(),
                    seconds_stale: 600.000_000_1,
                    polled_at_ms: 17,
                }),
            ),
            event(21, "conductor", EventKind::Truth(Fact::Answering { task_id: "task-01".into(), request_id: 4, requester: "abc".into() })),
            event(
                26,
                "task-01.S1.pause-watcher-2",
                EventKind::Truth(Fact::SleepJittered { session_id: "abc".into(), sleep_ms: 10_000, jitter_ms: -3 }),
            ),
        ]
    }

    /// Which kind each event is, by exhaustive matches: a new kind or fact does not compile
    /// until this test covers it.
    fn kind_of(event: &Event) -> &'static str {
        match &event.kind {
            EventKind::Swarm { .. } => "swarm",
            EventKind::Sql(sql) => match sql.result {
                SqlResult::Rows(_) => "sql",
                SqlResult::Busy(_) => "sql busy",
                SqlResult::Failed(_) => "sql failed",
                SqlResult::SqliteError(_) => "sql sqlite_error",
            },
            EventKind::File { .. } => "file",
            EventKind::Ended(_) => "ended",
            EventKind::FaultCrash { .. } => "fault_crash",
            EventKind::FaultHang { .. } => "fault_hang",
            EventKind::Note { .. } => "note",
            EventKind::Truth(fact) => match fact {
                Fact::Launched { .. } => "launched",
                Fact::Crashed { .. } => "crashed",
                Fact::Hung { .. } => "hung",
                Fact::WatcherDied { .. } => "watcher_died",
                Fact::Ended { .. } => "ended fact",
                Fact::WorkOver { .. } => "work_over",
                Fact::MessageHandled { .. } => "message_handled",
                Fact::StaleDeclared { .. } => "stale_declared",
                Fact::Answering { .. } => "answering",
                Fact::SleepJittered { .. } => "sleep_jittered",
                Fact::BlindRetry { .. } => "blind_retry",
            },
        }
    }

    /// Every f64 of an event, as bits: `==` holds for 0.0 and -0.0, bits do not.
    fn float_bits(event: &Event) -> Vec<u64> {
        match &event.kind {
            EventKind::Sql(sql) => sql.polled.iter().map(|(_, _, s)| s.to_bits()).collect(),
            EventKind::Truth(Fact::StaleDeclared { seconds_stale, .. }) => vec![seconds_stale.to_bits()],
            _ => Vec::new(),
        }
    }

    #[test]
    fn every_event_written_by_the_trace_sink_reads_back_equal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.csv");
        let mut events_in = every_kind_of_event();
        // A trace's time never goes back (the reader refuses one that does).
        events_in.sort_by_key(|e| e.t_ms);
        let kinds: std::collections::BTreeSet<&str> = events_in.iter().map(kind_of).collect();
        assert_eq!(kinds.len(), 20, "every kind, fact and statement result: {kinds:?}");
        let start = RunStart {
            scenario: "odd name, with=signs.toml".into(),
            scenario_sha256: Some("0123abcd".repeat(8)),
            seed: u64::MAX,
            profile: "repaired".into(),
            conductor: "slow-serial".into(),
            variants: vec!["fencing".into(), "strict-terminal".into()],
            epoch_unix_ms: 1_767_225_600_000,
        };
        let end = RunEnd { ending: Ending::TimeLimit, makespan_ms: events_in.last().map_or(25, |e| e.t_ms.max(25)) };
        let mut sink = TraceSink::create(&path, start.epoch_unix_ms).unwrap();
        sink.write_run_start(&start).unwrap();
        for event in &events_in {
            sink.write(event).unwrap();
        }
        sink.write_run_end(&end).unwrap();
        sink.finish().unwrap();
        let record = events(&path).unwrap();
        assert_eq!(record.start, start);
        assert_eq!(record.end, end);
        assert_eq!(record.events.len(), events_in.len());
        for (read_back, written) in record.events.iter().zip(&events_in) {
            assert_eq!(read_back, written);
            assert_eq!(float_bits(read_back), float_bits(written), "{written:?}");
        }
        // The same rows, as records: every row has its number, and only the new kinds are no effects.
        let rows = read(&path).unwrap();
        assert_eq!(rows.iter().map(|r| r.seq).collect::<Vec<_>>(), (1..=rows.len() as u64).collect::<Vec<_>>());
        assert_eq!(rows.iter().filter(|r| !r.is_effect()).count(), 2 + 10);
        // Lent one reused row at a time, the reports see the same rows, and a window only its own.
        let mut lent = Vec::new();
        for_each_in_window(&path, i64::MIN, i64::MAX, |r| lent.push(r.clone())).unwrap();
        assert_eq!(lent, rows);
        let (from_ms, to_ms) = (rows[3].t_ms, rows[rows.len() - 2].t_ms);
        let mut windowed = Vec::new();
        for_each_in_window(&path, from_ms, to_ms, |r| windowed.push(r.clone())).unwrap();
        assert_eq!(windowed, rows.iter().filter(|r| r.t_ms >= from_ms && r.t_ms < to_ms).cloned().collect::<Vec<_>>());
        // No run start either way round: the default profile (not written), no variants, and a quiescent end.
        let plain = RunStart {
            profile: crate::vocab::DEFAULT_PROFILE.into(),
            conductor: crate::input::conductor_profile::DEFAULT_CONDUCTOR.into(),
            variants: Vec::new(),
            scenario_sha256: None,
            ..start
        };
        let mut sink = TraceSink::create(&path, 0).unwrap();
        sink.write_run_start(&plain).unwrap();
        sink.write_run_end(&RunEnd { ending: Ending::Quiescent, makespan_ms: 0 }).unwrap();
        sink.finish().unwrap();
        let first_row = &read(&path).unwrap()[0];
        assert!(!first_row.observed.contains("conductor="), "an invented conductor's run's first row is as before: {}", first_row.observed);
        assert!(
            !first_row.observed.contains("profile="),
            "a seeds' run's first row is what it was before profiles: {}",
            first_row.observed
        );
        let record = events(&path).unwrap();
        assert_eq!((record.start, record.events.len(), record.end.ending), (plain, 0, Ending::Quiescent));
    }

    /// C120: the run_end row seals the rows before it. A byte changed anywhere before it, a
    /// row cut, a seal cut out or another trace's end row is refused with the end row's line;
    /// the trace as written reads back.
    #[test]
    fn the_end_row_seals_the_rows_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.csv");
        let start = RunStart {
            scenario: "s.toml".into(),
            scenario_sha256: Some("ab".repeat(32)),
            seed: 7,
            profile: crate::vocab::DEFAULT_PROFILE.into(),
            conductor: crate::input::conductor_profile::DEFAULT_CONDUCTOR.into(),
            variants: Vec::new(),
            epoch_unix_ms: 0,
        };
        let write_with = |seed: u64, path: &Path| {
            let mut sink = TraceSink::create(path, 0).unwrap();
            sink.write_run_start(&RunStart { seed, ..start.clone() }).unwrap();
            for t_ms in [1, 2, 3] {
                sink.write(&event(t_ms, "conductor", EventKind::Note { what: Cow::Borrowed("tick"), detail: String::new() })).unwrap();
            }
            sink.write_run_end(&RunEnd { ending: Ending::Quiescent, makespan_ms: 3 }).unwrap();
            sink.finish().unwrap();
            std::fs::read_to_string(path).unwrap()
        };
        let text = write_with(7, &path);
        let end_line = text.lines().last().unwrap().to_string();
        assert!(end_line.contains(" rows=4 sha256="), "{end_line}");
        assert_eq!(events(&path).unwrap().start.seed, 7);
        let refused = |edited: &str| {
            std::fs::write(&path, edited).unwrap();
            events(&path).unwrap_err().to_string()
        };
        let forged = refused(&text.replace("seed=7", "seed=8"));
        assert!(forged.contains("trace.csv:6: the rows before the run_end row are not the ones it sealed"), "{forged}");
        let time = refused(&text.replacen("\n2,", "\n1,", 1));
        assert!(time.contains("trace.csv:6:") && time.contains("not the ones it sealed"), "{time}");
        let unsealed = end_line.split(" rows=").next().unwrap().to_string();
        let cut = refused(&text.replace(&end_line, &unsealed));
        assert!(cut.contains("trace.csv:6: column `observed`: the run_end row has no `rows=` and `sha256=` seal"), "{cut}");
        let other = write_with(8, &dir.path().join("other.csv"));
        let swapped_end = refused(&text.replace(&end_line, other.lines().last().unwrap()));
        assert!(swapped_end.contains("not the ones it sealed"), "{swapped_end}");
        let miscounted = refused(&text.replace(" rows=4 ", " rows=3 "));
        assert!(miscounted.contains("the run_end row seals 3 rows, the trace holds 4 before it"), "{miscounted}");
        std::fs::write(&path, &text).unwrap();
        assert!(events(&path).is_ok(), "the trace as written");
    }

    #[test]
    fn a_note_named_like_another_kind_of_row_is_refused_by_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = TraceSink::create(&dir.path().join("trace.csv"), 0).unwrap();
        let note = event(1, "conductor", EventKind::Note { what: Cow::Borrowed("exit"), detail: String::new() });
        assert!(sink.write(&note).unwrap_err().to_string().contains("a note named `exit`"));
    }
}
