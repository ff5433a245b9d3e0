//! `rehearsal judge --db DB`: judges a comms.db that real processes wrote, with the simulator's
//! own rules. With a recorded history (scenarios/recorder/install.sql, sim/campaign/history.rs)
//! every recorded write becomes the statement event the checker consumes in a run
//! (`world::event::SqlEvent`: the protocol statement it is, its writer, the task row before and
//! after), and the rules a history can decide run on them with their own explanations. Every
//! write must be explained as one of the protocol's statements by a writer allowed to run it
//! (`classify`), or it is reported unexplained: no history passes unread. Rules that need what
//! only a simulator knows (reads, the liveness of a silent process, launches) are printed "not
//! judged: why", never as a pass (`source_of`, the table of docs/oracles.md). A plain comms.db
//! is judged on what its final tables show (sim/campaign/judge_tables.rs).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::base::error::{Error, Result};
use crate::campaign::history::{self, Change, History, Op, Row, Table};
use crate::input::scenario::Scenario;
use crate::judging::oracle::{Checker, Violation};
use crate::vocab::{ActorName, MessageKind, RuleId, SessionPlace, Stmt, TaskState, CONDUCTOR_TASK_ID};
use crate::world::db::RowSnapshot;
use crate::world::event::{Event, EventKind, Fact, SqlEvent, SqlResult, Who};

pub use crate::campaign::judge_sources::{source_of, DbJudgement, RuleVerdict, Source};

impl DbJudgement {
    pub fn passed(&self) -> bool {
        self.violations.is_empty() && self.unexplained.is_empty()
    }

    /// The report `rehearsal judge --db` prints.
    pub fn report(&self) -> String {
        let mut out = self.header.join("\n");
        out.push('\n');
        let first = self.violations.first().map(|v| v.rule.as_str());
        let headline = match (first, self.unexplained.is_empty()) {
            (Some(rule), _) => format!("FAIL: {rule}"),
            (None, false) => "FAIL: unexplained writes".to_string(),
            (None, true) => "PASS (on the rules judged; the rules not judged are listed)".to_string(),
        };
        out.push_str(&format!("{headline}\n"));
        for (rule, verdict) in &self.rules {
            let line = match verdict {
                RuleVerdict::Judged { from, violations: 0 } => format!("pass (judged from {from})"),
                RuleVerdict::Judged { from, violations } => format!("FAIL ×{violations} (judged from {from})"),
                RuleVerdict::NotJudged(why) => format!("not judged: {why}"),
            };
            out.push_str(&format!("  {:<32}{line}\n", rule.as_str()));
        }
        for v in &self.violations {
            if self.start_unix_ms == 0 {
                out.push_str(&format!("{}: {}\n", v.rule, v.explanation));
            } else {
                let at = crate::base::clock::format_utc_ms(self.start_unix_ms + v.t_ms);
                out.push_str(&format!("{} at {at}: {}\n", v.rule, v.explanation));
            }
        }
        for write in &self.unexplained {
            out.push_str(&format!("unexplained: {write}\n"));
        }
        out
    }
}

/// Judges the comms.db at `path`; `scenario` gives the protocol's settings (its variants) and
/// the tasks liveness expects (else every task row of the file).
pub fn judge_db(path: &Path, scenario: Option<&Path>) -> Result<DbJudgement> {
    let scenario = match scenario {
        Some(file) => Some(Scenario::load(file)?),
        None => None,
    };
    judge_db_with(path, scenario.as_ref())
}

/// `judge_db` with a scenario already resolved (a run's, with its profile and variants).
pub fn judge_db_with(path: &Path, scenario: Option<&Scenario>) -> Result<DbJudgement> {
    if !path.is_file() {
        return Err(Error::input(format!("{}: no such file", path.display())));
    }
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn =
        rusqlite::Connection::open_with_flags(path, flags).map_err(|e| Error::input(format!("{}: cannot open: {e}", path.display())))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    crate::world::recorder::check_tables(&conn, path)?;
    // One read transaction: a live database's writers cannot move the tables under the history.
    conn.execute_batch("BEGIN").map_err(|e| Error::harness(e.to_string()))?;
    let recorded = history::recorded(&conn).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    let judgement = if recorded {
        let history = history::read(&conn, path)?;
        judge_history(&conn, &history, scenario, path)
    } else {
        crate::campaign::judge_tables::judge_tables(&conn, scenario, path)
    };
    conn.execute_batch("COMMIT").map_err(|e| Error::harness(e.to_string()))?;
    judgement
}

/// The rules a recorded history decides, run on its events.
fn judge_history(conn: &rusqlite::Connection, history: &History, scenario: Option<&Scenario>, path: &Path) -> Result<DbJudgement> {
    let settings = scenario.map(|s| s.settings.clone()).unwrap_or_default();
    // t = 0: the scenario's epoch when one is given (a simulated run's instants are then the
    // trace's), else the first recorded row.
    let start_unix_ms = scenario.map_or(history.start_unix_ms, |s| s.run.epoch_unix_ms);
    let events = Events::build(history, start_unix_ms);
    let missing_writer = events.inferred;
    let judged = |rule: RuleId| {
        matches!(source_of(rule), Source::History(false)) || (source_of(rule) == Source::History(true) && missing_writer == 0)
    };
    let mut checker = Checker::new(settings).keeping_rules(judged);
    for event in &events.events {
        checker.on_event(event);
    }
    let end_ms = history.changes.last().map_or(0, |c| c.at_unix_ms - start_unix_ms);
    checker.finish(end_ms, &[]);
    let mut violations = checker.into_violations();
    let liveness = crate::campaign::judge_tables::liveness(conn, scenario)?;
    if !liveness.is_empty() {
        violations.push(Violation {
            rule: RuleId::Liveness,
            t_ms: end_ms,
            explanation: format!("at the end of the history: {}", liveness.join("; ")),
            first: true,
            point: None,
        });
    }
    violations.sort_by_key(|v| v.t_ms);
    let rules = RuleId::ALL
        .iter()
        .map(|&rule| {
            let count = violations.iter().filter(|v| v.rule == rule).count();
            let verdict = match source_of(rule) {
                Source::FinalTables => RuleVerdict::Judged { from: "the final tables", violations: count },
                Source::History(true) if missing_writer > 0 => RuleVerdict::NotJudged(format!(
                    "{missing_writer} recorded write(s) name no writer: their connections did not run the identity statement (README \"Judge a real deployment\")"
                )),
                Source::History(_) => RuleVerdict::Judged { from: "the history", violations: count },
                Source::Simulator(why) => RuleVerdict::NotJudged(why.to_string()),
            };
            (rule, verdict)
        })
        .collect();
    let last = history.changes.last().map_or(0, |c| c.seq);
    let identified = history.changes.iter().filter(|c| c.writer.is_some()).count();
    let mut header = vec![
        format!(
            "{}: recorded history of {} change(s) (seq 1..{last}), t=0 is {} ({})",
            path.display(),
            history.changes.len(),
            crate::base::clock::format_utc_ms(start_unix_ms),
            if scenario.is_some() { "the scenario's run.epoch" } else { "the first recorded row" }
        ),
        format!(
            "writers: {identified} of {} change(s) name their writer (the rest inferred from the row); {missing_writer} musician row write(s) name none",
            history.changes.len()
        ),
        format!(
            "consumed: {} of {} recorded write(s) explained as the protocol's statements by allowed writers",
            history.changes.len() - events.unexplained.len(),
            history.changes.len()
        ),
    ];
    for row in &history.unrecorded {
        header.push(format!("unrecorded: {row} while the recorder was removed"));
    }
    Ok(DbJudgement { header, rules, violations, unexplained: events.unexplained, start_unix_ms })
}

/// The checker's events, built from the history.
#[derive(Default)]
struct Events {
    events: Vec<Event>,
    unexplained: Vec<String>,
    /// Changes whose writer was inferred from the row (no identity recorded) where the rule
    /// needs it: a musician's row write names no session.
    inferred: usize,
    /// The task rows as the history left them so far.
    tasks: BTreeMap<String, Row>,
    /// Conductor sessions, in order of appearance.
    conductors: Vec<String>,
    /// Musician sessions: their place (task, n-th session of the task).
    places: BTreeMap<String, SessionPlace>,
    per_task: BTreeMap<u64, u32>,
    /// Each session's last statement, as classified.
    last: BTreeMap<String, Stmt>,
}

impl Events {
    fn build(history: &History, start_unix_ms: i64) -> Events {
        let mut events = Events::default();
        for row in &history.initial_tasks {
            let task = history::text(row, "task_id").unwrap_or_default().to_string();
            if task == CONDUCTOR_TASK_ID {
                if let Some(session) = history::text(row, "session_id") {
                    events.conductors.push(session.to_string());
                }
            }
            events.tasks.insert(task, row.clone());
        }
        // A named writer that writes as the conductor (task-00's row, or a message from
        // task-00) is a conductor session, even where task-00's row names another.
        for change in &history.changes {
            let from_conductor = change.table == Table::Messages
                && change.new.as_ref().and_then(|r| history::text(r, "from_session")) == Some(CONDUCTOR_TASK_ID);
            if let Some(writer) =
                change.writer.as_ref().filter(|w| (from_conductor || touches_conductor_row(change)) && !events.conductors.contains(w))
            {
                events.conductors.push(writer.clone());
            }
        }
        events.initial_poll(history, start_unix_ms);
        for change in &history.changes {
            events.take(change, start_unix_ms);
        }
        events
    }

    /// The rows that existed when the recorder was installed, shown to the rules as a conductor
    /// poll at the install (message-to-existing-task learns rows from polls).
    fn initial_poll(&mut self, history: &History, start_unix_ms: i64) {
        if history.initial_tasks.is_empty() {
            return;
        }
        let polled =
            self.tasks.iter().filter_map(|(task, row)| Some((task.clone(), history::text(row, "state")?.to_string(), 0.0))).collect();
        let sql = SqlEvent {
            stmt: Stmt::PollTasks,
            task_id: CONDUCTOR_TASK_ID.to_string(),
            result: SqlResult::Rows(self.tasks.len()),
            rows_affected: 0,
            before: None,
            after: None,
            message: None,
            more_messages: Vec::new(),
            other_rows: Vec::new(),
            polled,
            params_text: "the rows the recorder's install found".into(),
        };
        let session: Arc<str> = self.conductors.first().map_or("", String::as_str).into();
        let t_ms = history.start_unix_ms - start_unix_ms;
        self.events.push(Event { t_ms, who: Who::Actor(ActorName::CONDUCTOR), session, kind: EventKind::Sql(Box::new(sql)) });
    }

    fn take(&mut self, change: &Change, start_unix_ms: i64) {
        let (writer, inferred) = self.writer_of(change);
        let conductor = self.is_conductor(&writer, change);
        let final_message = self.last.get(&writer).copied();
        match classify(change, conductor, &writer, final_message) {
            Ok(stmt) => {
                self.last.insert(writer.clone(), stmt);
                if inferred && needs_writer(stmt) {
                    self.inferred += 1;
                }
                let event = self.event(change, stmt, &writer, conductor, start_unix_ms);
                self.events.push(event);
            }
            Err(why) => self.unexplained.push(format!(
                "seq {} at {} by {}: {why}",
                change.seq,
                change.at,
                if writer.is_empty() { "an unnamed writer" } else { &writer }
            )),
        }
        if change.table == Table::Tasks {
            let row = change.new.as_ref().or(change.old.as_ref());
            let key = row.and_then(|r| history::text(r, "task_id")).unwrap_or_default().to_string();
            match (&change.new, change.op) {
                (Some(new), Op::Insert | Op::Update) => drop(self.tasks.insert(key, new.clone())),
                _ => drop(self.tasks.remove(&key)),
            }
        }
    }

    /// The session that wrote `change` and whether it was inferred (no identity recorded).
    fn writer_of(&mut self, change: &Change) -> (String, bool) {
        if let Some(writer) = &change.writer {
            if touches_conductor_row(change) && !self.conductors.contains(writer) {
                self.conductors.push(writer.clone());
            }
            return (writer.clone(), false);
        }
        let new_text = |column: &str| change.new.as_ref().and_then(|r| history::text(r, column)).map(str::to_string);
        let old_text = |column: &str| change.old.as_ref().and_then(|r| history::text(r, column)).map(str::to_string);
        let latest_conductor = self.conductors.last().cloned().unwrap_or_default();
        let writer = match (change.table, change.op) {
            (Table::Messages, Op::Insert) => match new_text("from_session") {
                Some(from) if from == CONDUCTOR_TASK_ID => latest_conductor,
                from => from.unwrap_or_default(),
            },
            (Table::Tasks, _) if touches_conductor_row(change) => {
                let session = new_text("session_id").or(old_text("session_id")).unwrap_or_default();
                if !self.conductors.contains(&session) {
                    self.conductors.push(session.clone());
                }
                session
            }
            (Table::Tasks, Op::Insert) => new_text("session_id").unwrap_or(latest_conductor),
            (Table::Tasks, Op::Update) if new_text("session_id") != old_text("session_id") => new_text("session_id").unwrap_or_default(),
            (Table::Tasks, Op::Update) if conductor_state(change) => latest_conductor,
            // A heartbeat or a state change names no session: the row's owner is assumed.
            _ => old_text("session_id").unwrap_or_default(),
        };
        (writer, true)
    }

    fn is_conductor(&self, writer: &str, change: &Change) -> bool {
        self.conductors.iter().any(|c| c == writer) || (change.writer.is_none() && touches_conductor_row(change))
    }

    /// The writer as an actor; a musician session first seen is made known to the rules' truth
    /// as launched at its first write, labelled `S<n> [its id]` (the n-th session of its task).
    fn actor(&mut self, writer: &str, conductor: bool, task_id: &str, t_ms: i64) -> ActorName {
        if conductor {
            let n = self.conductors.iter().position(|c| c == writer).map_or(1, |i| i + 1);
            return ActorName::Conductor(n as u32);
        }
        if let Some(place) = self.places.get(writer) {
            return ActorName::Session(*place);
        }
        let task = crate::vocab::task_number(task_id).unwrap_or(0);
        let n = self.per_task.entry(task).or_insert(0);
        *n += 1;
        let place = SessionPlace { task, session: *n, twin: false };
        self.places.insert(writer.to_string(), place);
        let fact =
            Fact::Launched { at_ms: t_ms, label: format!("S{n} [{writer}]"), session_id: writer.to_string(), task_id: task_id.to_string() };
        self.events.push(Event { t_ms, who: Who::Actor(ActorName::CONDUCTOR), session: "".into(), kind: EventKind::Truth(fact) });
        ActorName::Session(place)
    }

    fn event(&mut self, change: &Change, stmt: Stmt, writer: &str, conductor: bool, start_unix_ms: i64) -> Event {
        let row = change.new.as_ref().or(change.old.as_ref()).expect("history::read checked");
        let task_id = history::text(row, "task_id").unwrap_or_default().to_string();
        let at = change.at_unix_ms;
        let (before, after, message) = match change.table {
            Table::Tasks => (change.old.as_ref().and_then(|r| snapshot(r, at)), change.new.as_ref().and_then(|r| snapshot(r, at)), None),
            Table::Messages => {
                let held = self.tasks.get(&task_id).and_then(|r| snapshot(r, at));
                let message = change.new.as_ref().map(|r| {
                    (
                        history::int(r, "id").unwrap_or_default(),
                        task_id.clone(),
                        history::text(r, "message_type").unwrap_or_default().to_string(),
                    )
                });
                (held.clone(), held, message)
            }
        };
        let sql = SqlEvent {
            stmt,
            task_id: task_id.clone(),
            result: SqlResult::Rows(1),
            rows_affected: 1,
            before,
            after,
            message,
            more_messages: Vec::new(),
            other_rows: Vec::new(),
            polled: Vec::new(),
            params_text: format!("seq={}", change.seq).into(),
        };
        let actor = self.actor(writer, conductor, &task_id, at - start_unix_ms);
        Event { t_ms: at - start_unix_ms, who: Who::Actor(actor), session: writer.into(), kind: EventKind::Sql(Box::new(sql)) }
    }
}

/// A task row as the rules read it, at the instant `at_unix_ms`.
fn snapshot(row: &Row, at_unix_ms: i64) -> Option<RowSnapshot> {
    let state = TaskState::parse(history::text(row, "state")?)?;
    let heartbeat_age_s =
        history::text(row, "last_heartbeat").and_then(crate::campaign::history::parse_at).map(|beat| (at_unix_ms - beat) as f64 / 1000.0);
    Some(RowSnapshot {
        state,
        session_id: history::text(row, "session_id").unwrap_or_default().to_string(),
        retry_count: history::int(row, "retry_count").unwrap_or(0),
        heartbeat_age_s,
    })
}

fn touches_conductor_row(change: &Change) -> bool {
    change.table == Table::Tasks
        && [&change.old, &change.new].iter().any(|r| r.as_ref().and_then(|r| history::text(r, "task_id")) == Some(CONDUCTOR_TASK_ID))
}

/// A state only the conductor sets on a musician's row (002 "Valid State Transitions").
fn conductor_state(change: &Change) -> bool {
    let state = change.new.as_ref().and_then(|r| history::text(r, "state")).and_then(TaskState::parse);
    let old = change.old.as_ref().and_then(|r| history::text(r, "state")).and_then(TaskState::parse);
    matches!(
        state,
        Some(
            TaskState::ReviewApproved
                | TaskState::ReviewFailed
                | TaskState::FixProposed
                | TaskState::ExitRequested
                | TaskState::Watching
                | TaskState::Reviewing
        )
    ) && state != old
}

/// Statements whose rules need the writer's session (a musician row write names none).
fn needs_writer(stmt: Stmt) -> bool {
    matches!(
        stmt,
        Stmt::Heartbeat
            | Stmt::SetNeedsReview
            | Stmt::ResumeWorking
            | Stmt::MarkComplete
            | Stmt::SetError
            | Stmt::SetContextWarning
            | Stmt::SetEscalation
            | Stmt::MarkExited
    )
}

/// The protocol statement (scenarios/protocol.sql) that explains `change` by `writer`, or why
/// none does: the columns it changed must be the statement's, with its values.
/// `previous` is the writer's last statement: a write that changes no value but the heartbeat
/// of a row already `complete` (`exited`) right after the writer's completion (handoff)
/// message is its terminal write, `mark_complete` (`mark_exited`), which in the same second
/// (`datetime('now')` has seconds) writes the values the row holds (000 "Terminal Write
/// Atomicity": the final message, then the terminal write).
pub fn classify(change: &Change, conductor: bool, writer: &str, previous: Option<Stmt>) -> std::result::Result<Stmt, String> {
    match (change.table, change.op) {
        (Table::Messages, Op::Insert) => classify_message(change.new.as_ref().expect("checked"), conductor, writer),
        (Table::Tasks, Op::Insert) => classify_insert(change.new.as_ref().expect("checked"), conductor, writer),
        (Table::Tasks, Op::Update) => {
            classify_update(change.old.as_ref().expect("checked"), change.new.as_ref().expect("checked"), conductor, previous)
        }
        (table, op) => Err(format!(
            "{op:?} of a row of {}: no protocol statement does that",
            if table == Table::Tasks { "orchestration_tasks" } else { "orchestration_messages" }
        )),
    }
}

fn classify_message(new: &Row, conductor: bool, writer: &str) -> std::result::Result<Stmt, String> {
    let from = history::text(new, "from_session").unwrap_or_default();
    let kind = history::text(new, "message_type").and_then(MessageKind::parse);
    if from == CONDUCTOR_TASK_ID {
        if !conductor {
            return Err(format!("a message from task-00 (the conductor's) written by {writer}, not a conductor session"));
        }
        return Ok(if kind == Some(MessageKind::Instruction) { Stmt::SendInstruction } else { Stmt::SendConductorMessage });
    }
    if from != writer {
        return Err(format!("a message from_session `{from}` written by {writer}: a session's messages name itself"));
    }
    let is_receipt = history::text(new, "message").is_some_and(|m| m.starts_with("RECEIPT"));
    match kind {
        Some(MessageKind::ReviewRequest) => Ok(Stmt::SendReviewRequest),
        Some(MessageKind::Completion) => Ok(Stmt::SendCompletion),
        Some(MessageKind::Error) => Ok(Stmt::SendError),
        Some(MessageKind::ContextWarning) => Ok(Stmt::SendContextWarning),
        Some(MessageKind::Handoff) => Ok(Stmt::SendHandoff),
        Some(MessageKind::ClaimBlocked) => Ok(Stmt::SendClaimBlocked),
        Some(MessageKind::Resumption) if is_receipt => Ok(Stmt::SendReceipt),
        Some(MessageKind::Resumption) => Ok(Stmt::SendResumption),
        other => Err(format!("a musician message of type {other:?}, which no musician statement writes")),
    }
}

fn classify_insert(new: &Row, conductor: bool, writer: &str) -> std::result::Result<Stmt, String> {
    let task = history::text(new, "task_id").unwrap_or_default();
    let state = history::text(new, "state").unwrap_or_default();
    let session = history::text(new, "session_id");
    if task == CONDUCTOR_TASK_ID && state == "watching" && session == Some(writer) {
        return Ok(Stmt::ConductorRegister);
    }
    if task.strip_prefix("fallback-") == Some(writer) && state == "exited" && !conductor {
        return Ok(Stmt::InsertFallbackRow);
    }
    if conductor && state == "watching" && session.is_none() {
        return Ok(Stmt::CreateTask);
    }
    Err(format!(
        "an INSERT of task row {task} in `{state}` by {}, which no protocol statement writes",
        if conductor { "the conductor" } else { "a musician" }
    ))
}

/// The columns each UPDATE may change (its SET list in scenarios/protocol.sql).
fn may_change(stmt: Stmt) -> &'static [&'static str] {
    match stmt {
        Stmt::ClaimTask => &["state", "session_id", "worked_by", "started_at", "last_heartbeat", "retry_count"],
        Stmt::ConductorResume => &["state", "session_id", "last_heartbeat"],
        Stmt::Heartbeat | Stmt::ConductorHeartbeat => &["last_heartbeat"],
        Stmt::MarkComplete => &["state", "last_heartbeat", "completed_at", "report_path"],
        Stmt::SetError => &["state", "retry_count", "last_error", "last_heartbeat"],
        Stmt::SetContextWarning | Stmt::SetEscalation => &["state", "last_heartbeat", "last_error"],
        _ => &["state", "last_heartbeat"],
    }
}

fn classify_update(old: &Row, new: &Row, conductor: bool, previous: Option<Stmt>) -> std::result::Result<Stmt, String> {
    let changed: Vec<&str> = new.keys().filter(|k| old.get(*k) != new.get(*k)).map(String::as_str).collect();
    let state = |row: &Row| history::text(row, "state").and_then(TaskState::parse);
    let (from, to) = (state(old), state(new));
    let task = history::text(new, "task_id").unwrap_or_default();
    let stmt = if task == CONDUCTOR_TASK_ID {
        match (changed.contains(&"session_id"), from != to) {
            (true, _) => Stmt::ConductorResume,
            (false, true) => Stmt::ConductorSetState,
            (false, false) => Stmt::ConductorHeartbeat,
        }
    } else if conductor {
        Stmt::SetTaskState
    } else {
        musician_update(old, new, (from, to), &changed, previous)?
    };
    if !conductor && task == CONDUCTOR_TASK_ID {
        return Err("a write of the conductor's row task-00 by a musician session".to_string());
    }
    match changed.iter().find(|c| !may_change(stmt).contains(c)) {
        Some(column) => {
            Err(format!("an UPDATE of {task} changing `{column}`, which `{stmt}` does not set (changed: {})", changed.join(", ")))
        }
        None => Ok(stmt),
    }
}

fn musician_update(
    old: &Row,
    new: &Row,
    (from, to): (Option<TaskState>, Option<TaskState>),
    changed: &[&str],
    previous: Option<Stmt>,
) -> std::result::Result<Stmt, String> {
    let claimable = matches!(from, Some(TaskState::Watching | TaskState::FixProposed | TaskState::ExitRequested));
    let retry = |row: &Row| history::int(row, "retry_count").unwrap_or(0);
    Ok(match to {
        // A claim: the guard's states are the catalog's (a variant may widen them), so the
        // claim is told by its values; allowed-transitions judges where it claimed from.
        Some(TaskState::Working)
            if retry(new) == 0 && (claimable || ["session_id", "worked_by", "started_at"].iter().any(|c| changed.contains(c))) =>
        {
            Stmt::ClaimTask
        }
        _ if changed.contains(&"session_id") => {
            return Err("an UPDATE that changes session_id without claiming (the claim's guard states and values)".to_string())
        }
        Some(TaskState::Complete) if changed.contains(&"completed_at") || changed.contains(&"report_path") => Stmt::MarkComplete,
        Some(TaskState::Error) if retry(new) == retry(old) + 1 => Stmt::SetError,
        Some(TaskState::Error)
            if changed.contains(&"last_error") && history::text(new, "last_error") == Some("context_exhaustion_warning") =>
        {
            Stmt::SetContextWarning
        }
        Some(TaskState::Error) if changed.contains(&"last_error") => Stmt::SetEscalation,
        Some(TaskState::Complete) if from == to && previous == Some(Stmt::SendCompletion) => Stmt::MarkComplete,
        Some(TaskState::Exited) if from == to && previous == Some(Stmt::SendHandoff) => Stmt::MarkExited,
        _ if from == to && !changed.contains(&"last_error") && !changed.contains(&"retry_count") => Stmt::Heartbeat,
        Some(TaskState::Working) => Stmt::ResumeWorking,
        Some(TaskState::NeedsReview) => Stmt::SetNeedsReview,
        Some(TaskState::Complete) => Stmt::MarkComplete,
        Some(TaskState::Exited) => Stmt::MarkExited,
        Some(TaskState::Error) if retry(new) == retry(old) + 1 => Stmt::SetError,
        Some(TaskState::Error) if history::text(new, "last_error") == Some("context_exhaustion_warning") => Stmt::SetContextWarning,
        Some(TaskState::Error) => Stmt::SetEscalation,
        other => return Err(format!("a musician UPDATE to `{}`, a state only the conductor sets", other.map_or("?", |s| s.as_str()))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(json: &str) -> Row {
        serde_json::from_str::<serde_json::Value>(json).unwrap().as_object().unwrap().clone()
    }

    fn task(state: &str, session: &str, retry: i64, beat: &str) -> String {
        format!(
            r#"{{"task_id":"task-01","state":"{state}","instruction_path":"p","session_id":"{session}","worked_by":"w","started_at":"2026-01-05 09:00:00","completed_at":null,"report_path":null,"retry_count":{retry},"last_heartbeat":"{beat}","last_error":null}}"#
        )
    }

    fn update(old: &str, new: &str) -> Change {
        Change {
            seq: 1,
            at_unix_ms: 0,
            at: String::new(),
            table: Table::Tasks,
            op: Op::Update,
            old: Some(row(old)),
            new: Some(row(new)),
            writer: None,
        }
    }

    #[test]
    fn a_recorded_write_is_the_statement_whose_set_list_and_values_it_has() {
        let beat = update(&task("working", "s1", 0, "2026-01-05 09:00:00"), &task("working", "s1", 0, "2026-01-05 09:00:05"));
        assert_eq!(classify(&beat, false, "s1", None), Ok(Stmt::Heartbeat));
        assert_eq!(classify(&beat, true, "c", None), Ok(Stmt::SetTaskState), "the conductor's same-state write");
        let claim = update(&task("fix_proposed", "s1", 2, "2026-01-05 09:00:00"), &task("working", "s2", 0, "2026-01-05 09:00:05"));
        assert_eq!(classify(&claim, false, "s2", None), Ok(Stmt::ClaimTask));
        let error = update(&task("working", "s1", 1, "2026-01-05 09:00:00"), &task("error", "s1", 2, "2026-01-05 09:00:05"));
        assert_eq!(classify(&error, false, "s1", None), Ok(Stmt::SetError));
        let done = task("complete", "s2", 0, "2026-01-05 09:00:05");
        let again = update(&done, &done);
        assert_eq!(classify(&again, false, "s1", Some(Stmt::SendCompletion)), Ok(Stmt::MarkComplete), "C92: after its completion report");
        assert_eq!(classify(&again, false, "s1", Some(Stmt::Heartbeat)), Ok(Stmt::Heartbeat), "C92's near miss");
    }

    #[test]
    fn a_write_no_statement_of_an_allowed_writer_explains_is_unexplained() {
        let approve =
            update(&task("needs_review", "s1", 0, "2026-01-05 09:00:00"), &task("review_approved", "s1", 0, "2026-01-05 09:00:05"));
        assert!(classify(&approve, false, "s1", None).unwrap_err().contains("a state only the conductor sets"));
        assert_eq!(classify(&approve, true, "c", None), Ok(Stmt::SetTaskState));
        let mut edited = row(&task("working", "s1", 0, "2026-01-05 09:00:05"));
        edited.insert("instruction_path".into(), serde_json::Value::from("elsewhere"));
        let moved = Change {
            new: Some(edited),
            ..update(&task("working", "s1", 0, "2026-01-05 09:00:00"), &task("working", "s1", 0, "2026-01-05 09:00:00"))
        };
        assert!(classify(&moved, false, "s1", None).unwrap_err().contains("changing `instruction_path`"));
        let gone = Change { op: Op::Delete, new: None, ..moved.clone() };
        assert!(classify(&gone, true, "c", None).unwrap_err().contains("no protocol statement does that"));
        let message = |from: &str| Change {
            table: Table::Messages,
            op: Op::Insert,
            old: None,
            new: Some(row(&format!(
                r#"{{"id":7,"task_id":"task-01","from_session":"{from}","message":"x","message_type":"approval","timestamp":"t"}}"#
            ))),
            ..moved.clone()
        };
        assert_eq!(classify(&message("task-00"), true, "c", None), Ok(Stmt::SendConductorMessage));
        assert!(classify(&message("task-00"), false, "s1", None).unwrap_err().contains("not a conductor session"));
        assert!(classify(&message("s2"), false, "s1", None).unwrap_err().contains("a session's messages name itself"));
    }

    #[test]
    fn every_rule_has_a_source_and_the_oracles_page_lists_it() {
        let page = include_str!("../../docs/oracles.md");
        let table = page.split("## Judging a real comms.db").nth(1).expect("the section");
        for rule in RuleId::ALL {
            assert!(table.contains(&format!("`{}`", rule.as_str())), "{} is not in docs/oracles.md's table", rule.as_str());
            if let Source::Simulator(why) = source_of(rule) {
                assert!(!why.is_empty());
            }
        }
    }
}
