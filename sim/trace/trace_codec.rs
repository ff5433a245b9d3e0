//! The `observed` column of trace format v2: what a row's other columns lack for its event to
//! come back whole. The writer (sim/trace/mod.rs) encodes it and the reader (sim/trace/trace_reader.rs)
//! decodes it with the functions of this file, which sit side by side so they cannot drift
//! apart. Every struct is destructured without `..` and rebuilt without defaults: a field
//! added to `RowSnapshot`, `SqlEvent` or a `Fact` does not compile until it is written and
//! read here.
//!
//! # Trace format v2
//!
//! `trace.csv` has the columns of `trace::HEADER`; v2 added the last, `observed`, and three
//! kinds of row. The other columns of the rows v1 had are unchanged; `seq` is the row's number.
//!
//! | row | event column | `observed` |
//! | --- | --- | --- |
//! | the first row | `run_start` | `scenario=NAME [scenario_sha256=HEX] seed=N profile=P conductor=C variants=A,B epoch_unix_ms=N` (the scenario's file name, `scenario::identity::file_name`: nothing of the folder it is in or the command ran in, so the trace hash is the same from any checkout; the protocol profile the run had, only when it is not `seeds`, so a seeds' run's trace is what it was before profiles; the command line's variants, applied after the profile's and the scenario's own; `scenario_sha256`, the SHA-256 of the scenario file's text, for a run of a file as loaded, C120) |
//! | a statement | `sql` | `task=T`, then each only when not zero or empty: `changed=N` (rows affected), `before=ROW` and `after=ROW` (the task row around a write, `ROW` = `state,session_id,retry_count`), `msg=ID,TASK,TYPE;…` (every message it inserted, in order: one unless an `INSERT … SELECT` inserted several), `also=TASK;…` (task rows other than `T` it inserted or updated: a fallback row, a multi-row UPDATE), `polled=TASK,STATE,SECS;…` (the rows of `poll_tasks`, `SECS` the f64 in Rust's shortest exact form); for a statement that did not run, `result=busy\|failed\|sqlite_error params=P` (`sqlite_error`: SQLite answered another error, a lock or a simulated I/O error, its message says which) (its bound parameters; the detail column holds the message, then `; P` unless busy) |
//! | a fact of ground truth | `truth` | the fact's name, then its fields: `launched at_ms=N session_id=S task_id=T`, `crashed session_id=S why=W`, `hung session_id=S until_ms=N`, `watcher_died session_id=S`, `ended session_id=S`, `message_handled session_id=S message_id=N`, `stale_declared task_id=T session_id=S seconds_stale=SECS` |
//! | the last row | `run_end` | `ending=quiescent\|time_limit makespan_ms=N rows=N sha256=HEX` (its `t_ms` is the makespan too; `rows` and `sha256` seal the rows before it, C120: their count, the header aside, and the SHA-256 of every byte before this row, the header's included) |
//! | any other row | swarm, file, end, fault, note | empty: the other columns hold the whole event |
//!
//! Items are separated by one space, in the order above. Text values are escaped: every byte
//! that is not printable ASCII, and space, `%`, `,`, `;`, `=` and `"`, is written `%XX`
//! (upper-case hex), so a value never holds a separator or a line end (the CSV layer quotes a
//! column with commas, as for any column). Numbers are decimal; an f64 is written with `{:?}`,
//! which parses back to the same bits. Example, a review request's insert:
//! `task=task-01 changed=1 before=working,23537319-…,0 after=working,23537319-…,0 msg=7,task-01,review_request`.

use std::fmt::Write as _;
use std::str::FromStr;

use crate::base::trace_rows::{format_count, format_signed, itoa_buf};
use crate::vocab::{Ending, Stmt};
use crate::world::db::RowSnapshot;
use crate::world::event::{ActorEnd, Fact, FileOp, SqlEvent, SqlResult};

/// What the trace's first row says: how to judge the run again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunStart {
    /// The scenario's file name (`scenario::identity::file_name`), nothing of its folder.
    pub scenario: String,
    /// The SHA-256 of the scenario file's text (`identity::content_sha256`) for a run of a
    /// file as loaded (`Scenario::text_sha256`); `None` for a scenario built from a document in
    /// memory (explore's points, swarm's draws, bench's points, shrink's candidates) and in
    /// traces written before C120.
    pub scenario_sha256: Option<String>,
    pub seed: u64,
    /// The protocol profile the run had (sim/vocab/profile.rs): the scenario's or
    /// `--protocol`'s; written only when it is not `seeds` (the default, read back so).
    pub profile: String,
    /// The conductor profile the run had (sim/input/conductor_profile.rs): the scenario's or
    /// `--conductor`'s; written only when it is not `invented` (the default, read back so), so
    /// a default run's trace is what it was before conductor profiles.
    pub conductor: String,
    /// The command line's variants, applied after the scenario's own.
    pub variants: Vec<String>,
    pub epoch_unix_ms: i64,
}

/// What the trace's last row says: how the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunEnd {
    pub ending: Ending,
    /// Simulated ms from the epoch to the last event (the row's `t_ms` too).
    pub makespan_ms: i64,
}

/// What the `run_end` row seals (C120): the rows before it, the header aside, and the hex
/// SHA-256 of every byte before it, the header's included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seal {
    pub rows: u64,
    pub sha256: String,
}

/// The version `trace::HEADER` is; the reader names it when it meets another.
pub const FORMAT_VERSION: u32 = 2;

/// The event column of every row that is not a note. A note must not take one of these
/// names (the writer refuses it), so the reader can tell every row's kind by its name alone.
pub fn is_reserved_event(name: &str) -> bool {
    matches!(name, "sql" | "swarm" | "truth" | "run_start" | "run_end" | "fault_crash" | "fault_hang")
        || FileOp::parse(name).is_some()
        || ActorEnd::parse(name).is_some()
}

/// Bytes written as they are; every other byte is `%XX`.
fn is_plain(b: u8) -> bool {
    b.is_ascii_graphic() && !matches!(b, b'%' | b',' | b';' | b'=' | b'"')
}

/// Appends `text`, escaped.
pub fn escape_into(out: &mut String, text: &str) {
    if text.bytes().all(is_plain) {
        out.push_str(text);
        return;
    }
    for b in text.bytes() {
        if is_plain(b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

/// The text an escaped value stands for; a byte that should have been escaped, or a `%` not
/// followed by two hex digits, is an error.
pub fn unescape(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3).filter(|h| h.iter().all(u8::is_ascii_hexdigit));
                let hex = hex.ok_or_else(|| format!("`{text}`: `%` not followed by two hex digits"))?;
                let hex = std::str::from_utf8(hex).expect("ascii hex digits");
                out.push(u8::from_str_radix(hex, 16).expect("two hex digits"));
                i += 3;
            }
            b if is_plain(b) => {
                out.push(b);
                i += 1;
            }
            b => return Err(format!("`{text}`: byte {b:#04x} is not escaped")),
        }
    }
    String::from_utf8(out).map_err(|_| format!("`{text}` is not UTF-8 once unescaped"))
}

/// Starts the item `key=`, after a space unless it is the first.
fn key(out: &mut String, key: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(key);
    out.push('=');
}

fn text_item(out: &mut String, name: &str, value: &str) {
    key(out, name);
    escape_into(out, value);
}

/// Appends `n` in decimal, as `{n}` writes it, without the formatting machinery: every
/// `sql` row writes a few (issue 17).
fn push_signed(out: &mut String, n: i64) {
    out.push_str(format_signed(&mut itoa_buf(), n));
}

fn push_count(out: &mut String, n: usize) {
    out.push_str(format_count(&mut itoa_buf(), n as u64));
}

fn number_item(out: &mut String, name: &str, value: impl std::fmt::Display) {
    key(out, name);
    let _ = write!(out, "{value}");
}

fn float_item(out: &mut String, name: &str, value: f64) {
    key(out, name);
    push_float(out, value);
}

/// Appends `value` exactly as `{value:?}` writes it. Heartbeat ages and polled rows write an
/// f64 each, and the formatting machinery spent about 1,000 instructions on one (issue 17).
/// Ryū is used only where its text is provably the same (`ryu_writes_as_debug`); every other
/// value, NaN and the infinities included, goes through fmt.
fn push_float(out: &mut String, value: f64) {
    if ryu_writes_as_debug(value) {
        out.push_str(ryu::Buffer::new().format_finite(value));
    } else {
        let _ = write!(out, "{value:?}");
    }
}

/// Ryū's text equals `{:?}`'s for `value`. Both write the shortest digits that read back
/// as `value`, the closest when several are that short; they part only (1) in notation —
/// Ryū writes plain decimals from 1e-5 up to 1e16, `{:?}` from 1e-4 up to 1e16, so only
/// 1e-3..1e15 is taken, where rounding to shortest cannot cross either edge — and (2) on a
/// tie between two shortest candidates (Ryū rounds to even, `{:?}` up:
/// 698774307530677.25 is `.2` for one, `.3` for the other). At a tie `value` is the
/// midpoint of two candidates of at most 17 digits, so its exact decimal expansion has at
/// most 18; `value` is taken only when its expansion is longer. (The rounding interval's
/// edges, where the two might also differ on inclusion, have expansions of 19 digits or
/// more below 2^50, so no candidate lies on one.)
fn ryu_writes_as_debug(value: f64) -> bool {
    if value == 0.0 {
        return true; // `0.0` and `-0.0` for both
    }
    if !(1e-3..1e15).contains(&value.abs()) {
        return false;
    }
    exact_digits_exceed_18(value)
}

/// Whether the exact decimal expansion of a normal `value` has 19 or more significant
/// digits. With its trailing zero bits dropped, `value` = odd * 2^-k; for k <= 0 it is an
/// integer (below 2^53 here: at most 16 digits, but an integer has no tie either, its
/// candidates lying 5 or more away with an ulp of at most 1, so it counts as long); for
/// k > 0 its expansion is the digits of odd * 5^k, which 5^26 alone makes 19.
fn exact_digits_exceed_18(value: f64) -> bool {
    let bits = value.to_bits();
    // A normal double: (2^52 + fraction) * 2^(exponent - 1075).
    let mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
    let exponent = ((bits >> 52) & 0x7ff) as i64 - 1075;
    let zeros = mantissa.trailing_zeros();
    let fractional_bits = -(exponent + i64::from(zeros));
    if fractional_bits <= 0 || fractional_bits >= 26 {
        return true;
    }
    let digits = u128::from(mantissa >> zeros) * 5u128.pow(fractional_bits as u32);
    digits >= 10u128.pow(18)
}

/// The items of a column, read in the order they were written.
struct Fields<'a> {
    items: std::iter::Peekable<std::vec::IntoIter<&'a str>>,
}

impl<'a> Fields<'a> {
    fn parse(text: &'a str) -> Fields<'a> {
        let items: Vec<&str> = if text.is_empty() { Vec::new() } else { text.split(' ').collect() };
        Fields { items: items.into_iter().peekable() }
    }

    /// The raw value of `key` if it is the next item.
    fn optional(&mut self, key: &str) -> Result<Option<&'a str>, String> {
        let Some(item) = self.items.peek() else { return Ok(None) };
        let (k, value) = item.split_once('=').ok_or_else(|| format!("item `{item}` has no `=`"))?;
        if k != key {
            return Ok(None);
        }
        self.items.next();
        Ok(Some(value))
    }

    fn required(&mut self, key: &str) -> Result<&'a str, String> {
        match self.optional(key)? {
            Some(value) => Ok(value),
            None => match self.items.peek() {
                Some(item) => Err(format!("expected `{key}=`, found `{item}`")),
                None => Err(format!("no `{key}=`")),
            },
        }
    }

    fn text(&mut self, key: &str) -> Result<String, String> {
        unescape(self.required(key)?)
    }

    fn number<T: FromStr>(&mut self, key: &str) -> Result<T, String> {
        number(key, self.required(key)?)
    }

    fn float(&mut self, key: &str) -> Result<f64, String> {
        float(key, self.required(key)?)
    }

    fn end(mut self) -> Result<(), String> {
        match self.items.next() {
            Some(item) => Err(format!("unexpected item `{item}`")),
            None => Ok(()),
        }
    }
}

fn number<T: FromStr>(what: &str, text: &str) -> Result<T, String> {
    text.parse().map_err(|_| format!("{what}: `{text}` is not an integer"))
}

fn float(what: &str, text: &str) -> Result<f64, String> {
    text.parse().map_err(|_| format!("{what}: `{text}` is not a number"))
}

/// `state,session_id,retry_count,heartbeat_age_s` (the age exact, `-` when never beat).
fn encode_row(out: &mut String, row: &RowSnapshot) {
    let RowSnapshot { state, session_id, retry_count, heartbeat_age_s } = row;
    escape_into(out, state.as_str());
    out.push(',');
    escape_into(out, session_id);
    out.push(',');
    push_signed(out, *retry_count);
    out.push(',');
    match heartbeat_age_s {
        Some(age) => push_float(out, *age),
        None => out.push('-'),
    }
}

fn decode_row(text: &str) -> Result<RowSnapshot, String> {
    let parts: Vec<&str> = text.split(',').collect();
    let [state, session_id, retry_count, age] = parts[..] else {
        return Err(format!("task row `{text}`: expected state,session_id,retry_count,heartbeat_age_s"));
    };
    let heartbeat_age_s = if age == "-" { None } else { Some(float("heartbeat_age_s", age)?) };
    Ok(RowSnapshot {
        state: unescape(state)?.parse().map_err(|e| format!("task row `{text}`: {e}"))?,
        session_id: unescape(session_id)?,
        retry_count: number("retry_count", retry_count)?,
        heartbeat_age_s,
    })
}

/// The `observed` column of a `sql` row.
pub fn encode_sql(out: &mut String, sql: &SqlEvent) {
    // `stmt` is the statement column; a result's row count is the rows column, its message
    // the detail column.
    let SqlEvent { stmt: _, task_id, result, rows_affected, before, after, message, more_messages, other_rows, polled, params_text } = sql;
    text_item(out, "task", task_id);
    if *rows_affected != 0 {
        key(out, "changed");
        push_count(out, *rows_affected);
    }
    if let Some(row) = before {
        key(out, "before");
        encode_row(out, row);
    }
    if let Some(row) = after {
        key(out, "after");
        encode_row(out, row);
    }
    if let Some(first) = message {
        key(out, "msg");
        for (i, (id, task, kind)) in std::iter::once(first).chain(more_messages).enumerate() {
            if i > 0 {
                out.push(';');
            }
            push_signed(out, *id);
            out.push(',');
            escape_into(out, task);
            out.push(',');
            escape_into(out, kind);
        }
    }
    if !other_rows.is_empty() {
        key(out, "also");
        for (i, task) in other_rows.iter().enumerate() {
            if i > 0 {
                out.push(';');
            }
            escape_into(out, task);
        }
    }
    if !polled.is_empty() {
        key(out, "polled");
        for (i, (task, state, seconds_stale)) in polled.iter().enumerate() {
            if i > 0 {
                out.push(';');
            }
            escape_into(out, task);
            out.push(',');
            escape_into(out, state);
            out.push(',');
            push_float(out, *seconds_stale);
        }
    }
    let not_run = match result {
        SqlResult::Rows(_) => None,
        SqlResult::Busy(_) => Some("busy"),
        SqlResult::Failed(_) => Some("failed"),
        SqlResult::SqliteError(_) => Some("sqlite_error"),
    };
    if let Some(name) = not_run {
        text_item(out, "result", name);
        text_item(out, "params", &params_text.render());
    }
}

/// A `sql` row's event from its statement, rows, detail and observed columns.
pub fn decode_sql(stmt: Stmt, rows: &str, detail: &str, observed: &str) -> Result<SqlEvent, String> {
    let mut f = Fields::parse(observed);
    let task_id = f.text("task")?;
    let rows_affected = f.optional("changed")?.map(|n| number("changed", n)).transpose()?.unwrap_or(0);
    let before = f.optional("before")?.map(decode_row).transpose()?;
    let after = f.optional("after")?.map(decode_row).transpose()?;
    let mut messages = f.optional("msg")?.map(|m| m.split(';').map(decode_message).collect()).transpose()?.unwrap_or_else(Vec::new);
    let message = if messages.is_empty() { None } else { Some(messages.remove(0)) };
    let more_messages = messages;
    let other_rows = f.optional("also")?.map(|t| t.split(';').map(unescape).collect()).transpose()?.unwrap_or_default();
    let polled = f.optional("polled")?.map(decode_polled).transpose()?.unwrap_or_default();
    let not_run = f.optional("result")?;
    let params = f.optional("params")?.map(unescape).transpose()?;
    f.end()?;
    let (result, params_text) = match (rows, not_run, params) {
        ("busy", Some("busy"), Some(params)) => (SqlResult::Busy(detail.to_string()), params.into()),
        ("error", Some(kind @ ("failed" | "sqlite_error")), Some(params)) => {
            let message = detail.strip_suffix(&format!("; {params}")).ok_or_else(|| format!("detail does not end with `; {params}`"))?;
            let message = message.to_string();
            (if kind == "failed" { SqlResult::Failed(message) } else { SqlResult::SqliteError(message) }, params.into())
        }
        (count, None, None) if count != "busy" && count != "error" => (SqlResult::Rows(number("rows", count)?), detail.into()),
        (rows, not_run, _) => {
            return Err(format!("rows `{rows}` does not go with result `{}` and its params", not_run.unwrap_or("")));
        }
    };
    Ok(SqlEvent { stmt, task_id, result, rows_affected, before, after, message, more_messages, other_rows, polled, params_text })
}

fn decode_message(text: &str) -> Result<(i64, String, String), String> {
    let parts: Vec<&str> = text.split(',').collect();
    let [id, task, kind] = parts[..] else { return Err(format!("message `{text}`: expected id,task_id,message_type")) };
    Ok((number("message id", id)?, unescape(task)?, unescape(kind)?))
}

fn decode_polled(text: &str) -> Result<Vec<(String, String, f64)>, String> {
    text.split(';')
        .map(|row| {
            let parts: Vec<&str> = row.split(',').collect();
            let [task, state, seconds_stale] = parts[..] else {
                return Err(format!("polled row `{row}`: expected task_id,state,seconds_stale"));
            };
            Ok((unescape(task)?, unescape(state)?, float("seconds_stale", seconds_stale)?))
        })
        .collect()
}

/// The `observed` column of a `truth` row: the fact's name, then its fields.
pub fn encode_fact(out: &mut String, fact: &Fact) {
    match fact {
        Fact::Launched { at_ms, label, session_id, task_id } => {
            out.push_str("launched");
            number_item(out, "at_ms", at_ms);
            text_item(out, "label", label);
            text_item(out, "session_id", session_id);
            text_item(out, "task_id", task_id);
        }
        Fact::Crashed { session_id, why } => {
            out.push_str("crashed");
            text_item(out, "session_id", session_id);
            text_item(out, "why", why);
        }
        Fact::Hung { session_id, until_ms } => {
            out.push_str("hung");
            text_item(out, "session_id", session_id);
            number_item(out, "until_ms", until_ms);
        }
        Fact::WatcherDied { session_id } => {
            out.push_str("watcher_died");
            text_item(out, "session_id", session_id);
        }
        Fact::Ended { session_id } => {
            out.push_str("ended");
            text_item(out, "session_id", session_id);
        }
        Fact::WorkOver { session_id } => {
            out.push_str("work_over");
            text_item(out, "session_id", session_id);
        }
        Fact::MessageHandled { session_id, message_id } => {
            out.push_str("message_handled");
            text_item(out, "session_id", session_id);
            number_item(out, "message_id", message_id);
        }
        Fact::Answering { task_id, request_id, requester } => {
            out.push_str("answering");
            text_item(out, "task_id", task_id);
            number_item(out, "request_id", request_id);
            text_item(out, "requester", requester);
        }
        Fact::SleepJittered { session_id, sleep_ms, jitter_ms } => {
            out.push_str("sleep_jittered");
            text_item(out, "session_id", session_id);
            number_item(out, "sleep_ms", sleep_ms);
            number_item(out, "jitter_ms", jitter_ms);
        }
        Fact::StaleDeclared { task_id, session_id, seconds_stale, polled_at_ms } => {
            out.push_str("stale_declared");
            text_item(out, "task_id", task_id);
            text_item(out, "session_id", session_id);
            float_item(out, "seconds_stale", *seconds_stale);
            number_item(out, "polled_at_ms", polled_at_ms);
        }
        Fact::BlindRetry { session_id, statement } => {
            out.push_str("blind_retry");
            text_item(out, "session_id", session_id);
            text_item(out, "statement", statement);
        }
    }
}

/// A `truth` row's fact. Fields are read in the order the literal names them.
pub fn decode_fact(observed: &str) -> Result<Fact, String> {
    let (name, items) = observed.split_once(' ').unwrap_or((observed, ""));
    let mut f = Fields::parse(items);
    let fact = match name {
        "launched" => Fact::Launched {
            at_ms: f.number("at_ms")?,
            label: f.text("label")?,
            session_id: f.text("session_id")?,
            task_id: f.text("task_id")?,
        },
        "answering" => {
            Fact::Answering { task_id: f.text("task_id")?, request_id: f.number("request_id")?, requester: f.text("requester")? }
        }
        "crashed" => Fact::Crashed { session_id: f.text("session_id")?, why: f.text("why")? },
        "hung" => Fact::Hung { session_id: f.text("session_id")?, until_ms: f.number("until_ms")? },
        "watcher_died" => Fact::WatcherDied { session_id: f.text("session_id")? },
        "ended" => Fact::Ended { session_id: f.text("session_id")? },
        "work_over" => Fact::WorkOver { session_id: f.text("session_id")? },
        "blind_retry" => Fact::BlindRetry { session_id: f.text("session_id")?, statement: f.text("statement")? },
        "message_handled" => Fact::MessageHandled { session_id: f.text("session_id")?, message_id: f.number("message_id")? },
        "sleep_jittered" => {
            Fact::SleepJittered { session_id: f.text("session_id")?, sleep_ms: f.number("sleep_ms")?, jitter_ms: f.number("jitter_ms")? }
        }
        "stale_declared" => Fact::StaleDeclared {
            task_id: f.text("task_id")?,
            session_id: f.text("session_id")?,
            seconds_stale: f.float("seconds_stale")?,
            polled_at_ms: f.number("polled_at_ms")?,
        },
        other => return Err(format!("`{other}` is no fact")),
    };
    f.end()?;
    Ok(fact)
}

/// The `observed` column of the `run_start` row.
pub fn encode_run_start(out: &mut String, start: &RunStart) {
    let RunStart { scenario, scenario_sha256, seed, profile, conductor, variants, epoch_unix_ms } = start;
    text_item(out, "scenario", scenario);
    if let Some(sha256) = scenario_sha256 {
        text_item(out, "scenario_sha256", sha256);
    }
    number_item(out, "seed", seed);
    if profile != crate::vocab::DEFAULT_PROFILE {
        text_item(out, "profile", profile);
    }
    if conductor != crate::input::conductor_profile::DEFAULT_CONDUCTOR {
        text_item(out, "conductor", conductor);
    }
    key(out, "variants");
    for (i, variant) in variants.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        escape_into(out, variant);
    }
    number_item(out, "epoch_unix_ms", epoch_unix_ms);
}

pub fn decode_run_start(observed: &str) -> Result<RunStart, String> {
    let mut f = Fields::parse(observed);
    let scenario = f.text("scenario")?;
    let scenario_sha256 = f.optional("scenario_sha256")?.map(unescape).transpose()?;
    let seed = f.number("seed")?;
    let profile = match f.optional("profile")? {
        Some(profile) => unescape(profile)?,
        None => crate::vocab::DEFAULT_PROFILE.to_string(),
    };
    let conductor = match f.optional("conductor")? {
        Some(conductor) => unescape(conductor)?,
        None => crate::input::conductor_profile::DEFAULT_CONDUCTOR.to_string(),
    };
    let variants = match f.required("variants")? {
        "" => Vec::new(),
        list => list.split(',').map(unescape).collect::<Result<_, _>>()?,
    };
    let epoch_unix_ms = f.number("epoch_unix_ms")?;
    f.end()?;
    Ok(RunStart { scenario, scenario_sha256, seed, profile, conductor, variants, epoch_unix_ms })
}

/// The `observed` column of the `run_end` row.
pub fn encode_run_end(out: &mut String, end: &RunEnd, seal: &Seal) {
    let RunEnd { ending, makespan_ms } = end;
    let Seal { rows, sha256 } = seal;
    text_item(out, "ending", ending.as_str());
    number_item(out, "makespan_ms", makespan_ms);
    number_item(out, "rows", rows);
    text_item(out, "sha256", sha256);
}

/// The run's end, and its seal when the trace has one (one written before C120 has none).
pub fn decode_run_end(observed: &str) -> Result<(RunEnd, Option<Seal>), String> {
    let mut f = Fields::parse(observed);
    let ending = f.required("ending")?;
    let ending = Ending::parse(ending).ok_or_else(|| format!("ending `{ending}` is neither quiescent nor time_limit"))?;
    let makespan_ms = f.number("makespan_ms")?;
    let seal = match f.optional("rows")? {
        Some(rows) => {
            let rows = number("rows", rows)?;
            let sha256 = f.text("sha256")?;
            if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
                return Err(format!("sha256 `{sha256}` is not 64 lower-case hex digits"));
            }
            Some(Seal { rows, sha256 })
        }
        None => None,
    };
    f.end()?;
    Ok((RunEnd { ending, makespan_ms }, seal))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_separators_out_of_values_and_gives_the_text_back() {
        for text in ["", "plain-text_1.2", "a b,c;d=e%f\"g", "line\nbreak\ttab", "ünïcödé ✓", "%41"] {
            let mut out = String::new();
            escape_into(&mut out, text);
            assert!(!out.bytes().any(|b| matches!(b, b' ' | b',' | b';' | b'=' | b'"' | b'\n') || !b.is_ascii()), "{out}");
            assert_eq!(unescape(&out).unwrap(), text);
        }
        assert!(unescape("a b").unwrap_err().contains("not escaped"));
        assert!(unescape("%4").unwrap_err().contains("two hex digits"));
        assert!(unescape("%+1").unwrap_err().contains("two hex digits"));
        assert!(unescape("%FF").unwrap_err().contains("UTF-8"));
    }

    /// `push_float` against `{:?}` itself: both edges of the fast path, the values around
    /// them, the special values, and a spread of random bit patterns and of times in seconds
    /// with their neighbours.
    #[test]
    fn floats_are_written_as_debug_writes_them() {
        let check = |value: f64| {
            let mut out = String::new();
            push_float(&mut out, value);
            assert_eq!(out, format!("{value:?}"), "bits {:#x}", value.to_bits());
        };
        let specials = [0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 0.2, 0.3, 1.5, 2.0, 10.0, 100.0, 1e-3, 1e15, 1e16, 1e17, 9.999999999999999e14];
        let specials = specials.into_iter().chain([1e-4, 1e-5, 1e-7, 1e300, 5e-324, f64::MIN_POSITIVE, f64::MAX, f64::MIN, f64::EPSILON]);
        let specials = specials.chain([f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1.0 / 3.0, 2.0f64.sqrt(), 123456.789]);
        for value in specials {
            for neighbour in
                [value, -value, f64::from_bits(value.to_bits().wrapping_add(1)), f64::from_bits(value.to_bits().wrapping_sub(1))]
            {
                check(neighbour);
            }
        }
        for integer in -2000..2000 {
            check(integer as f64);
            check(integer as f64 / 2.0);
            check(integer as f64 / 1000.0);
        }
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            // splitmix64: a fixed, full-width spread of bit patterns.
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        // Ties between two shortest candidates, which Ryū and `{:?}` round apart.
        // -698774307530677.25 (a literal would be clippy's excessive precision).
        let tie = f64::from_bits(0xc303_dc40_9307_3daa);
        for value in [tie, -tie, 1e7 + 1.0 / 1024.0] {
            check(value);
        }
        for _ in 0..100_000 {
            let bits = next();
            check(f64::from_bits(bits));
            // Ages in seconds, as a day's heartbeats give them: millisecond clocks over a double.
            let seconds = (bits % 100_000_000) as f64 / 1000.0 + (bits >> 40) as f64 * 1e-9;
            check(seconds);
            check(-seconds);
            // Few fractional bits: where ties are.
            let few = (bits % (1 << 48)) as f64 / (1u64 << (bits >> 58)) as f64;
            check(few);
        }
        let (mut fast, mut slow) = (0, 0);
        for seconds in [7.327017188072205, 0.07801204919815063, 91.96200370788574, 86_400.0, 1.0, 0.5, 1e7 + 1.0 / 1024.0] {
            if ryu_writes_as_debug(seconds) {
                fast += 1;
            } else {
                slow += 1;
            }
        }
        // Ages and integers take the fast path; a half and 1/1024 over ten million do not.
        assert_eq!((fast, slow), (5, 2));
        // The tie above and a half have short exact expansions; a tenth and an age long ones.
        assert!(!exact_digits_exceed_18(-tie));
        assert!(!exact_digits_exceed_18(0.5));
        assert!(exact_digits_exceed_18(0.1));
        assert!(exact_digits_exceed_18(7.327017188072205));
    }

    #[test]
    fn reserved_event_names_cover_every_row_kind_that_is_not_a_note() {
        for name in
            ["sql", "swarm", "truth", "run_start", "run_end", "fault_crash", "fault_hang", "file_read", "exit", "fault_watcher_death"]
        {
            assert!(is_reserved_event(name), "{name}");
        }
        for name in ["launch", "stop_hook", "fault_context_spike", "busy_retry"] {
            assert!(!is_reserved_event(name), "{name}");
        }
    }

    #[test]
    fn a_malformed_column_is_refused_with_what_is_wrong() {
        assert!(decode_fact("launched at_ms=5 label=S1 session_id=a").unwrap_err().contains("no `task_id=`"));
        assert!(decode_fact("launched at_ms=5 label=S1 session_id=a task_id=b extra=1").unwrap_err().contains("unexpected item"));
        assert!(decode_fact("teleported session_id=a").unwrap_err().contains("is no fact"));
        assert!(decode_run_end("ending=paused makespan_ms=1").unwrap_err().contains("neither"));
        let sealed = format!("ending=quiescent makespan_ms=5 rows=3 sha256={}", "ab".repeat(32));
        assert_eq!(decode_run_end(&sealed).unwrap().1, Some(Seal { rows: 3, sha256: "ab".repeat(32) }));
        assert_eq!(decode_run_end("ending=quiescent makespan_ms=5").unwrap().1, None, "a trace of before C120");
        assert!(decode_run_end("ending=quiescent makespan_ms=5 rows=3").unwrap_err().contains("sha256"));
        assert!(decode_run_end("ending=quiescent makespan_ms=5 rows=3 sha256=AB").unwrap_err().contains("64 lower-case"));
        assert!(decode_run_end("ending=quiescent makespan_ms=5 rows=x sha256=ab").unwrap_err().contains("not an integer"));
        assert!(decode_sql(Stmt::Heartbeat, "1", "", "task=t before=working,s").unwrap_err().contains("expected state"));
        assert!(decode_sql(Stmt::Heartbeat, "busy", "", "task=t").unwrap_err().contains("does not go with"));
        assert!(decode_sql(Stmt::Heartbeat, "1", "", "changed=1 task=t").unwrap_err().contains("expected `task=`"));
    }
}
