//! A recorded comms.db history (scenarios/recorder/install.sql), read whole and checked before
//! anything is judged from it: the sequence runs 1, 2, 3, ... to the number SQLite last gave
//! (a deleted row leaves a gap, a cut tail a shortfall), every row is the JSON the triggers
//! write, every UPDATE and DELETE starts from the row the history left (an edited value breaks
//! the chain), and replaying the history ends at the tables as they are. A history that fails
//! any check is bad input naming the row and what is wrong (`rehearsal judge --db`, exit 2).

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::Connection;
use serde_json::{Map, Value};

use crate::base::error::{Error, Result};

/// Which of seed 004's tables a change is to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Tasks,
    Messages,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Insert,
    Update,
    Delete,
}

/// A row's columns, as the triggers wrote them.
pub type Row = Map<String, Value>;

/// One recorded change to a row.
#[derive(Clone, Debug)]
pub struct Change {
    pub seq: i64,
    /// SQLite's own time of the statement, Unix ms.
    pub at_unix_ms: i64,
    pub at: String,
    pub table: Table,
    pub op: Op,
    pub old: Option<Row>,
    pub new: Option<Row>,
    /// The session whose connection named itself (`recorder::identity_statement`), if it did.
    pub writer: Option<String>,
}

/// The history, checked: its changes in order, the rows it started from, and what it found
/// changed while the recorder was removed.
#[derive(Clone, Debug, Default)]
pub struct History {
    pub changes: Vec<Change>,
    /// The task rows of the first SNAPSHOT (the tables as the install found them).
    pub initial_tasks: Vec<Row>,
    /// The time of the first recorded row, Unix ms: the judge's t = 0.
    pub start_unix_ms: i64,
    /// Rows a later install's SNAPSHOT found other than the history had left them: written
    /// while the recorder was removed, unrecorded.
    pub unrecorded: Vec<String>,
}

/// The replayed tables: task rows by task_id, message rows by id.
#[derive(Default)]
struct Replay {
    tasks: BTreeMap<String, Row>,
    messages: BTreeMap<i64, Row>,
}

impl Replay {
    fn key(table: Table, row: &Row) -> Option<String> {
        match table {
            Table::Tasks => row.get("task_id")?.as_str().map(str::to_string),
            Table::Messages => row.get("id")?.as_i64().map(|id| id.to_string()),
        }
    }

    fn get(&self, table: Table, key: &str) -> Option<&Row> {
        match table {
            Table::Tasks => self.tasks.get(key),
            Table::Messages => self.messages.get(&key.parse::<i64>().ok()?),
        }
    }

    fn put(&mut self, table: Table, key: &str, row: Option<Row>) {
        match (table, row) {
            (Table::Tasks, Some(row)) => drop(self.tasks.insert(key.to_string(), row)),
            (Table::Tasks, None) => drop(self.tasks.remove(key)),
            (Table::Messages, row) => {
                let id = key.parse::<i64>().unwrap_or_default();
                match row {
                    Some(row) => drop(self.messages.insert(id, row)),
                    None => drop(self.messages.remove(&id)),
                }
            }
        }
    }
}

/// Whether `conn` holds a recorded history.
pub fn recorded(conn: &Connection) -> Result<bool> {
    let n: i64 = conn
        .query_row("SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = 'rehearsal_history'", [], |r| r.get(0))
        .map_err(|e| Error::input(format!("not an SQLite database ({e})")))?;
    Ok(n == 1)
}

/// Reads and checks the whole history of `conn` (in one read transaction, so a live database's
/// writers cannot move the tables between the history and the rows it must end at).
pub fn read(conn: &Connection, path: &Path) -> Result<History> {
    let bad = |what: String| Error::input(format!("{}: rehearsal_history: {what}", path.display()));
    let rows = raw_rows(conn).map_err(|e| bad(format!("not the recorder's table ({e})")))?;
    check_sequence(conn, &rows).map_err(bad)?;
    let writers = writers(conn).map_err(|e| bad(format!("rehearsal_writers: {e}")))?;
    let mut history = History { start_unix_ms: rows.first().map_or(0, |r| r.1 .1), ..History::default() };
    let mut replay = Replay::default();
    // The first install's SNAPSHOT rows are seq 1, 2, ... before any change.
    let mut first_batch_end = 0;
    for (seq, (at, at_unix_ms), table, op, old, new) in rows {
        let parse = |text: Option<String>, column: &str| -> std::result::Result<Option<Row>, String> {
            match text {
                None => Ok(None),
                Some(text) => match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(row)) => Ok(Some(row)),
                    _ => Err(format!("seq {seq}: {column} is not the JSON object the recorder writes")),
                },
            }
        };
        let (old, new) = (parse(old, "old_values").map_err(bad)?, parse(new, "new_values").map_err(bad)?);
        let table = match table.as_str() {
            "orchestration_tasks" => Table::Tasks,
            "orchestration_messages" => Table::Messages,
            other => return Err(bad(format!("seq {seq}: unknown table `{other}`"))),
        };
        if op == "SNAPSHOT" {
            let row = new.ok_or_else(|| bad(format!("seq {seq}: a SNAPSHOT without new_values")))?;
            let first = history.changes.is_empty() && seq == first_batch_end + 1;
            if first {
                first_batch_end = seq;
            }
            snapshot(&mut replay, &mut history, table, row, first, seq).map_err(bad)?;
            continue;
        }
        let op = match op.as_str() {
            "INSERT" => Op::Insert,
            "UPDATE" => Op::Update,
            "DELETE" => Op::Delete,
            other => return Err(bad(format!("seq {seq}: unknown operation `{other}`"))),
        };
        let change = Change { seq, at_unix_ms, at, table, op, old, new, writer: writers.get(&seq).cloned() };
        apply(&mut replay, &change).map_err(bad)?;
        history.changes.push(change);
    }
    if let Some(seq) = writers.keys().find(|seq| !history.changes.iter().any(|c| c.seq == **seq)) {
        return Err(bad(format!("rehearsal_writers names a writer for seq {seq}, which is no recorded change")));
    }
    ends_at_tables(conn, &replay).map_err(bad)?;
    Ok(history)
}

type RawRow = (i64, (String, i64), String, String, Option<String>, Option<String>);

fn raw_rows(conn: &Connection) -> rusqlite::Result<Vec<RawRow>> {
    let mut stmt = conn.prepare("SELECT seq, at, tbl, op, old_values, new_values FROM rehearsal_history ORDER BY seq")?;
    let rows = stmt.query_map([], |r| {
        let at: String = r.get(1)?;
        let at_unix_ms = parse_at(&at)
            .ok_or_else(|| rusqlite::Error::InvalidColumnType(1, format!("at `{at}` is not a time"), rusqlite::types::Type::Text))?;
        Ok((r.get(0)?, (at, at_unix_ms), r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
    })?;
    rows.collect()
}

/// `YYYY-MM-DD HH:MM:SS.SSS` (SQLite's `strftime('%Y-%m-%d %H:%M:%f')`) as Unix ms.
pub fn parse_at(at: &str) -> Option<i64> {
    let (whole, fraction) = at.split_once('.').unwrap_or((at, "0"));
    let ms: i64 = format!("{fraction:0<3}").get(..3)?.parse().ok()?;
    Some(crate::base::clock::parse_utc(whole)? + ms)
}

/// The numbers run 1..=n, and n is the number SQLite last gave (AUTOINCREMENT keeps it in
/// sqlite_sequence, and a rolled-back write rolls it back too).
fn check_sequence(conn: &Connection, rows: &[RawRow]) -> std::result::Result<(), String> {
    let mut expected = 1;
    for (seq, ..) in rows {
        if *seq != expected {
            return Err(format!(
                "the sequence jumps from {} to {seq}: rows {expected}..{} are missing (deleted or edited)",
                expected - 1,
                seq - 1
            ));
        }
        expected += 1;
    }
    let given: Option<i64> = conn.query_row("SELECT seq FROM sqlite_sequence WHERE name = 'rehearsal_history'", [], |r| r.get(0)).ok();
    let last = expected - 1;
    match given {
        Some(given) if given > last => {
            Err(format!("ends at seq {last} but SQLite numbered up to {given}: the last {} row(s) are missing (truncated)", given - last))
        }
        Some(given) if given < last => Err(format!("holds seq {last} but SQLite's own counter says {given}: the history was edited")),
        None if last > 0 => Err("SQLite's counter of the history is gone (sqlite_sequence edited)".to_string()),
        _ => Ok(()),
    }
}

fn writers(conn: &Connection) -> rusqlite::Result<BTreeMap<i64, String>> {
    let mut stmt = conn.prepare("SELECT seq, writer FROM rehearsal_writers ORDER BY seq")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// A SNAPSHOT row: the first install's sets the rows the history starts from; a later one
/// (after a remove) must find them as the history left them, or they changed unrecorded.
fn snapshot(replay: &mut Replay, history: &mut History, table: Table, row: Row, first: bool, seq: i64) -> std::result::Result<(), String> {
    let key = Replay::key(table, &row).ok_or_else(|| format!("seq {seq}: a SNAPSHOT row without its key"))?;
    if !first && replay.get(table, &key) != Some(&row) {
        history.unrecorded.push(format!("{key} (seq {seq}: the re-install found it other than the history left it)"));
    }
    if first && table == Table::Tasks {
        history.initial_tasks.push(row.clone());
    }
    replay.put(table, &key, Some(row));
    Ok(())
}

/// Applies one change to the replayed tables, checking it starts from the row the history left.
fn apply(replay: &mut Replay, change: &Change) -> std::result::Result<(), String> {
    let seq = change.seq;
    let (before, after) = (&change.old, &change.new);
    let row = after.as_ref().or(before.as_ref()).ok_or_else(|| format!("seq {seq}: neither old_values nor new_values"))?;
    let key = Replay::key(change.table, row).ok_or_else(|| format!("seq {seq}: the row has no key column"))?;
    match (change.op, before, after) {
        (Op::Insert, None, Some(new)) => {
            if replay.get(change.table, &key).is_some() {
                return Err(format!("seq {seq} inserts {key}, which the history already holds (edited?)"));
            }
            replay.put(change.table, &key, Some(new.clone()));
        }
        (Op::Update | Op::Delete, Some(old), _) => {
            let old_key = Replay::key(change.table, old).unwrap_or_default();
            if replay.get(change.table, &old_key) != Some(old) {
                return Err(format!("seq {seq}: the row {old_key} before this change is not the row the history left (edited, or written while the recorder was removed)"));
            }
            replay.put(change.table, &old_key, None);
            if let (Op::Update, Some(new)) = (change.op, after) {
                replay.put(change.table, &key, Some(new.clone()));
            }
        }
        _ => return Err(format!("seq {seq}: old_values and new_values do not fit its operation")),
    }
    Ok(())
}

/// Replaying the history must end at the tables as they are now.
fn ends_at_tables(conn: &Connection, replay: &Replay) -> std::result::Result<(), String> {
    let read = |sql: &str| -> std::result::Result<Vec<Row>, String> {
        let mut stmt = conn.prepare(sql).map_err(|e| e.to_string())?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(|e| e.to_string())?;
        let texts: Vec<String> = rows.collect::<rusqlite::Result<_>>().map_err(|e| e.to_string())?;
        Ok(texts.iter().filter_map(|t| serde_json::from_str::<Value>(t).ok()).filter_map(|v| v.as_object().cloned()).collect())
    };
    let tasks = read(TASKS_JSON_SQL)?;
    let messages = read(MESSAGES_JSON_SQL)?;
    let recorded_tasks: Vec<&Row> = replay.tasks.values().collect();
    let recorded_messages: Vec<&Row> = replay.messages.values().collect();
    let table_tasks: Vec<&Row> = tasks.iter().collect();
    let table_messages: Vec<&Row> = messages.iter().collect();
    if let Some(diff) = first_difference(&recorded_tasks, &table_tasks, "task_id") {
        return Err(format!(
            "does not end at the tables: orchestration_tasks {diff} (truncated, edited, or written while the recorder was removed)"
        ));
    }
    if let Some(diff) = first_difference(&recorded_messages, &table_messages, "id") {
        return Err(format!(
            "does not end at the tables: orchestration_messages {diff} (truncated, edited, or written while the recorder was removed)"
        ));
    }
    Ok(())
}

fn first_difference(recorded: &[&Row], table: &[&Row], key: &str) -> Option<String> {
    let name = |row: &Row| row.get(key).map(|v| v.to_string().trim_matches('"').to_string()).unwrap_or_default();
    for (i, row) in table.iter().enumerate() {
        match recorded.get(i) {
            Some(held) if held == row => {}
            Some(held) if name(held) == name(row) => {
                return Some(format!(
                    "row {}: the table holds {} but the history ends at {}",
                    name(row),
                    Value::Object((*row).clone()),
                    Value::Object((*held).clone())
                ))
            }
            _ => return Some(format!("row {}: in the table, not where the history has it", name(row))),
        }
    }
    recorded.get(table.len()).map(|extra| format!("row {}: in the history, not in the table", name(extra)))
}

/// The tables' rows as the triggers' JSON, in the replay's key order.
const TASKS_JSON_SQL: &str = "SELECT json_object('task_id', task_id, 'state', state, 'instruction_path', instruction_path, 'session_id', session_id, 'worked_by', worked_by, 'started_at', started_at, 'completed_at', completed_at, 'report_path', report_path, 'retry_count', retry_count, 'last_heartbeat', last_heartbeat, 'last_error', last_error) FROM orchestration_tasks ORDER BY task_id";
const MESSAGES_JSON_SQL: &str = "SELECT json_object('id', id, 'task_id', task_id, 'from_session', from_session, 'message', message, 'message_type', message_type, 'timestamp', timestamp) FROM orchestration_messages ORDER BY id";

/// A column of a recorded row as text (`None` for NULL or absent).
pub fn text<'a>(row: &'a Row, column: &str) -> Option<&'a str> {
    row.get(column)?.as_str()
}

/// A column as an integer.
pub fn int(row: &Row, column: &str) -> Option<i64> {
    row.get(column)?.as_i64()
}
