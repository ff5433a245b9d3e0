//! Reading `trace.csv` back, typed at the edge: the actor column becomes an `ActorName`, the
//! statement column a `Stmt` (for SQL rows), the state column a `TaskState`. Reports, the
//! tests and re-judging read the trace only through this reader, never by column position or
//! by searching names and detail strings.

use std::path::Path;

use crate::error::{Error, Result};
use crate::trace::HEADER;
use crate::vocab::{ActorName, SessionPlace, Stmt, TaskState};

/// One row of `trace.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRecord {
    /// Simulated milliseconds since the run's epoch.
    pub t_ms: i64,
    /// `None` for the engine's own rows (faults, swarm draws).
    pub actor: Option<ActorName>,
    pub session: String,
    /// The event column: `sql`, `file_append`, `exit`, `fault_crash`, a note's name, …
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
    pub seq: u64,
}

impl TraceRecord {
    pub fn is_sql(&self) -> bool {
        self.event == "sql"
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
}

/// Every row of a trace.
pub fn read(path: &Path) -> Result<Vec<TraceRecord>> {
    read_window(path, i64::MIN, i64::MAX)
}

/// Rows with `from_ms <= t_ms < to_ms`, streamed, so a window of a trace of any size fits in
/// memory. A file that is no trace, or a row that does not parse, is an input error naming
/// the file, the line and the column.
pub fn read_window(path: &Path, from_ms: i64, to_ms: i64) -> Result<Vec<TraceRecord>> {
    let mut reader =
        csv::ReaderBuilder::new().has_headers(false).from_path(path).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    let mut records = reader.records();
    let header = records.next().ok_or_else(|| Error::input(format!("{}: empty, not a trace", path.display())))?;
    let header = header.map_err(|e| Error::input(format!("{}:1: {e}", path.display())))?;
    if header.iter().collect::<Vec<_>>() != HEADER {
        return Err(Error::input(format!(
            "{}:1: not a trace of this version: header is `{}`, expected `{}`",
            path.display(),
            header.iter().collect::<Vec<_>>().join(","),
            HEADER.join(",")
        )));
    }
    let mut out = Vec::new();
    for (index, record) in records.enumerate() {
        let line = index + 2;
        let record = record.map_err(|e| Error::input(format!("{}:{line}: {e}", path.display())))?;
        let row =
            parse_row(&record).map_err(|(column, why)| Error::input(format!("{}:{line}: column `{column}`: {why}", path.display())))?;
        if row.t_ms >= from_ms && row.t_ms < to_ms {
            out.push(row);
        }
    }
    Ok(out)
}

fn parse_row(r: &csv::StringRecord) -> std::result::Result<TraceRecord, (&'static str, String)> {
    if r.len() != HEADER.len() {
        return Err(("seq", format!("{} fields, expected {}", r.len(), HEADER.len())));
    }
    let t_ms = r[0].parse().map_err(|_| ("t_ms", format!("`{}` is not an integer", &r[0])))?;
    let actor = match &r[2] {
        "engine" => None,
        text => Some(ActorName::parse(text).ok_or_else(|| ("actor", format!("`{text}` is no actor name")))?),
    };
    let event = r[4].to_string();
    let stmt = match event.as_str() {
        "sql" => Some(Stmt::parse(&r[5]).ok_or_else(|| ("statement", format!("`{}` is no statement", &r[5])))?),
        _ => None,
    };
    let state_after = match &r[7] {
        "" => None,
        text => Some(TaskState::parse(text).ok_or_else(|| ("state_after", format!("`{text}` is no task state")))?),
    };
    let seq = r[9].parse().map_err(|_| ("seq", format!("`{}` is not an integer", &r[9])))?;
    Ok(TraceRecord {
        t_ms,
        actor,
        session: r[3].to_string(),
        event,
        stmt,
        statement: r[5].to_string(),
        rows: r[6].to_string(),
        state_after,
        detail: r[8].to_string(),
        seq,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.csv");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    const HEAD: &str = "t_ms,time,actor,session,event,statement,rows,state_after,detail,seq\n";

    #[test]
    fn rows_come_back_typed() {
        let text = format!(
            "{HEAD}0,2026-01-01 00:00:00.000,engine,,swarm,,,,crash_probability=0.1,1\n\
             5,2026-01-01 00:00:00.005,task-02.S1.bg-watcher-1,abc,sql,heartbeat,1,working,task_id=task-02 session_id=abc,2\n\
             7,2026-01-01 00:00:00.007,conductor,conductor-session,sql,set_task_state,1,fix_proposed,task_id=task-03 state=fix_proposed,3\n\
             9,2026-01-01 00:00:00.009,task-02.S1,abc,file_append,temp/task-02-status,1,,step 1 done [ctx: 41%],4\n"
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
            "{HEAD}10,x,engine,,fault_hang,,,,task-01.S1 hangs for 120000 ms,1\n\
             11,x,engine,,fault_crash,,,,crashed after `set_needs_review`,2\n\
             12,x,task-01.S1,abc,sql,claim_task,busy,,database is locked,3\n\
             13,x,task-01.S1,abc,note,,,,hangs for 5 ms,4\n"
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
        assert!(err.contains("trace.csv:1: not a trace"), "{err}");
        let (_dir, path) = write(&format!("{HEAD}5,x,task-01.S1,abc,sql,drop_everything,1,,,2\n"));
        let err = read(&path).unwrap_err().to_string();
        assert!(err.contains("trace.csv:2: column `statement`"), "{err}");
        let (_dir, path) = write(&format!("{HEAD}5,x,task-01.S1,abc,sql,heartbeat,1,sleeping,,2\n"));
        assert!(read(&path).unwrap_err().to_string().contains("column `state_after`"));
    }
}
