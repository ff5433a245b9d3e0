//! What the pictures show, gathered in one pass over the trace (`Model::add`, a row at a
//! time, holding no row): the task and session lanes, their state changes and marks, the
//! faults, the violating write, and the plots' series. Every row is looked at once and typed
//! already (`TraceRecord`); nothing here searches the trace again.

use std::collections::BTreeMap;

use super::series::{ContextTrajectories, HeartbeatAges};
use crate::trace::trace_reader::TraceRecord;
use crate::vocab::{ActorName, SessionPlace, Stmt, TaskState};
use crate::world::event::ActorEnd;

/// A mark drawn as it is, with its trace row as its hover text.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub t_ms: i64,
    /// `message`, `crash`, `conductor-message`, `heartbeat`, `poll`.
    pub class: &'static str,
    pub title: String,
}

/// One of the many marks (a heartbeat or a watcher's poll): drawn one by one only when the
/// view is narrow enough, as density bands otherwise; its hover text is `#seq t=… ms` and
/// its session's `kinds[kind]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dense {
    pub t_ms: i64,
    pub seq: u64,
    pub kind: u32,
}

/// Distinct hover texts a session's dense marks share, beyond which the detail column is left
/// out (it is in trace.csv, row `#seq`).
const KINDS_MAX: usize = 32;

/// What a session's dense marks share: their class and trace row but for time and number.
/// The detail is left out (`None`) once a session has `KINDS_MAX` kinds.
#[derive(Clone, Debug, PartialEq)]
pub struct Kind {
    pub class: &'static str,
    pub actor: Option<ActorName>,
    pub event: String,
    pub statement: String,
    pub rows: String,
    pub detail: Option<String>,
}

impl Kind {
    /// `actor event statement rows detail`: the hover text after `#seq t=… ms`.
    pub fn text(&self) -> String {
        let actor = self.actor.map_or_else(|| "engine".to_string(), |a| a.to_string());
        let detail = self.detail.as_deref().unwrap_or("(detail: trace.csv)");
        format!("{actor} {} {} {} {detail}", self.event, self.statement, self.rows)
    }

    /// This kind is `r`'s, compared field by field (nothing is formatted per row).
    fn is_of(&self, class: &str, r: &TraceRecord, with_detail: bool) -> bool {
        let detail_matches = match &self.detail {
            Some(detail) => with_detail && *detail == r.detail,
            None => !with_detail,
        };
        self.class == class
            && self.actor == r.actor
            && self.statement == r.statement
            && self.rows == r.rows
            && self.event == r.event
            && detail_matches
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionModel {
    /// The session id its rows carry (the protocol's name for it, which explanations use).
    pub session_id: String,
    /// The row that first carried `session_id` (0 while none has): what the session was
    /// called at an earlier row, for the violating write found after the pass (`focus_row`).
    pub session_id_seq: u64,
    pub first_ms: i64,
    pub last_ms: i64,
    pub marks: Vec<Mark>,
    pub dense: Vec<Dense>,
    pub kinds: Vec<Kind>,
}

impl SessionModel {
    /// The index of `r`'s kind, added if new: with its detail while there are fewer than
    /// `KINDS_MAX` kinds.
    fn kind(&mut self, class: &'static str, r: &TraceRecord) -> u32 {
        let found = self.kinds.iter().position(|k| k.is_of(class, r, true));
        let found =
            found.or_else(|| (self.kinds.len() >= KINDS_MAX).then(|| self.kinds.iter().position(|k| k.is_of(class, r, false))).flatten());
        if let Some(i) = found {
            return i as u32;
        }
        let detail = (self.kinds.len() < KINDS_MAX).then(|| r.detail.clone());
        let (event, statement, rows) = (r.event.clone(), r.statement.clone(), r.rows.clone());
        self.kinds.push(Kind { class, actor: r.actor, event, statement, rows, detail });
        (self.kinds.len() - 1) as u32
    }
}

/// A task's state from `t_ms` on, and the write that set it.
#[derive(Clone, Debug, PartialEq)]
pub struct StateChange {
    pub t_ms: i64,
    pub state: TaskState,
    pub title: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskModel {
    /// Its sessions in order of appearance.
    pub sessions: Vec<SessionPlace>,
    pub states: Vec<StateChange>,
    pub conductor_messages: Vec<Mark>,
}

/// A session's hang: shaded on that session's lane (all lanes when the hung actor is no
/// session's).
#[derive(Clone, Debug, PartialEq)]
pub struct Hang {
    pub place: Option<SessionPlace>,
    pub t_ms: i64,
    pub ms: i64,
    pub title: String,
}

/// A crash or another fault, or a statement answered SQLITE_BUSY: on its session's lane
/// (across every lane when it struck no session).
#[derive(Clone, Debug, PartialEq)]
pub struct FaultLine {
    pub place: Option<SessionPlace>,
    pub t_ms: i64,
    pub busy: bool,
    pub title: String,
}

/// The first violation's time and explanation, so the pass can find the write it is about.
pub struct Focus<'a> {
    pub t_ms: i64,
    pub explanation: &'a str,
}

#[derive(Default)]
pub struct Model {
    pub start_ms: Option<i64>,
    pub end_ms: i64,
    pub tasks: BTreeMap<String, TaskModel>,
    pub sessions: BTreeMap<SessionPlace, SessionModel>,
    pub hangs: Vec<Hang>,
    pub fault_lines: Vec<FaultLine>,
    /// The write the first violation is about: its session, time and trace row.
    pub violating_write: Option<(SessionPlace, Mark)>,
    pub context: ContextTrajectories,
    pub ages: HeartbeatAges,
    focus_t_ms: Option<i64>,
    focus_explanation: String,
}

/// `#seq t=… ms actor event statement rows detail`: a row as its mark's hover text shows it.
pub fn row_title(r: &TraceRecord) -> String {
    format!("#{} t={} ms {} {} {} {} {}", r.seq, r.t_ms, r.actor_text(), r.event, r.statement, r.rows, r.detail)
}

impl Model {
    pub fn new(focus: Option<Focus<'_>>) -> Model {
        let mut model = Model::default();
        if let Some(Focus { t_ms, explanation }) = focus {
            model.focus_t_ms = Some(t_ms);
            model.focus_explanation = explanation.to_string();
        }
        model
    }

    /// The first violation's time and explanation, for a model gathered before they were
    /// known (sim/report/streamed.rs): its rows at that time are then given to `focus_row`.
    pub fn set_focus(&mut self, focus: Option<Focus<'_>>) {
        self.focus_t_ms = focus.as_ref().map(|f| f.t_ms);
        self.focus_explanation = focus.map_or_else(String::new, |f| f.explanation.to_string());
    }

    /// A row at the focus's time, seen again after the whole pass: what `add` did with it to
    /// find the violating write, the sessions named as they were at that row.
    pub fn focus_row(&mut self, r: &TraceRecord) {
        if !r.is_effect() || !r.is_sql() || r.state_after.is_none() {
            return;
        }
        if let Some(place) = r.place() {
            self.violating(place, r);
        }
    }

    /// A model of `records` (the reports' unit tests).
    #[cfg(test)]
    pub fn of(records: &[TraceRecord]) -> Model {
        let mut model = Model::new(None);
        records.iter().for_each(|r| model.add(r));
        model
    }

    /// Takes one effect row into every picture it belongs to.
    pub fn add(&mut self, r: &TraceRecord) {
        if !r.is_effect() {
            return;
        }
        self.start_ms = Some(self.start_ms.map_or(r.t_ms, |s| s.min(r.t_ms)));
        self.end_ms = self.end_ms.max(r.t_ms);
        self.context.add(r);
        self.ages.add(r);
        self.fault(r);
        match r.place() {
            Some(place) => self.session_row(place, r),
            None => self.conductor_row(r),
        }
    }

    /// A fault on the lane of the session it struck (its detail starts with the session's
    /// name: `task-28.S1 (before `heartbeat`) hangs for 758494 ms`), across every lane when it
    /// names none; a statement answered SQLITE_BUSY on its actor's session's lane.
    fn fault(&mut self, r: &TraceRecord) {
        if !r.is_fault() && !r.is_busy() {
            return;
        }
        let title = format!("t={} ms {} {} {}", r.t_ms, r.event, r.actor_text(), r.detail);
        let struck = r
            .detail
            .split_whitespace()
            .next()
            .and_then(ActorName::parse)
            .and_then(|a| a.place())
            .or_else(|| self.session_by_id(&r.session));
        match r.hang_ms() {
            Some(ms) => self.hangs.push(Hang { place: struck, t_ms: r.t_ms, ms, title }),
            None => self.fault_lines.push(FaultLine { place: r.place().or(struck), t_ms: r.t_ms, busy: r.is_busy(), title }),
        }
    }

    /// The session whose rows carry `session_id` (a scripted fault's row names its session
    /// so, its detail in words: `task 1 S1 hangs for 1500000 ms`).
    fn session_by_id(&self, session_id: &str) -> Option<SessionPlace> {
        if session_id.is_empty() {
            return None;
        }
        self.sessions.iter().find(|(_, s)| s.session_id == session_id).map(|(place, _)| *place)
    }

    /// A row of a session's actor: its task's lane and its own, a mark, a state change.
    fn session_row(&mut self, place: SessionPlace, r: &TraceRecord) {
        let session = self.sessions.entry(place).or_insert_with(|| {
            self.tasks.entry(place.task_id()).or_default().sessions.push(place);
            SessionModel { first_ms: r.t_ms, ..SessionModel::default() }
        });
        session.last_ms = r.t_ms;
        if session.session_id.is_empty() && !r.session.is_empty() {
            session.session_id = r.session.clone();
            session.session_id_seq = r.seq;
        }
        if let Some(class) = dense_class(r) {
            let kind = session.kind(class, r);
            session.dense.push(Dense { t_ms: r.t_ms, seq: r.seq, kind });
        } else if let Some(class) = sparse_class(r) {
            session.marks.push(Mark { t_ms: r.t_ms, class, title: row_title(r) });
        }
        if r.is_sql() && r.state_after.is_some() {
            self.state_change(place.task_id(), r);
            self.violating(place, r);
        }
    }

    /// A row of the conductor (or the engine): the lane of the task it names, its messages.
    fn conductor_row(&mut self, r: &TraceRecord) {
        if !r.is_sql() {
            return;
        }
        let Some(task) = r.task_id() else { return };
        let lane = self.tasks.entry(task.clone()).or_default();
        if r.stmt.is_some_and(Stmt::inserts_message) {
            let title = format!("#{} t={} ms conductor {} {}", r.seq, r.t_ms, r.statement, r.detail);
            lane.conductor_messages.push(Mark { t_ms: r.t_ms, class: "conductor-message", title });
        }
        self.state_change(task, r);
    }

    /// A write that changed its task's state starts a span on the task's lane.
    fn state_change(&mut self, task: String, r: &TraceRecord) {
        let (true, Some(state)) = (r.is_sql(), r.state_after) else { return };
        let states = &mut self.tasks.entry(task).or_default().states;
        if states.last().is_none_or(|s| s.state != state) {
            let title = format!("{state} from t={} ms ({} by {}: {})", r.t_ms, r.statement, r.actor_text(), r.detail);
            states.push(StateChange { t_ms: r.t_ms, state, title });
        }
    }

    /// The first violation's write: a write at its time, by the session its explanation
    /// names first (by session id) when several wrote then.
    fn violating(&mut self, place: SessionPlace, r: &TraceRecord) {
        if self.focus_t_ms != Some(r.t_ms) || !r.is_sql() || r.state_after.is_none() {
            return;
        }
        let named_at = |id: &str| {
            let prefix: String = id.chars().take(8).collect();
            self.focus_explanation.find(&format!("session {prefix}")).unwrap_or(usize::MAX)
        };
        // The held session's id as it was at this row (a model that saw every row first knows
        // ids set later: `focus_row`).
        let held_id = |held: &SessionPlace| {
            let session = &self.sessions[held];
            if session.session_id_seq <= r.seq {
                session.session_id.as_str()
            } else {
                ""
            }
        };
        let better = match &self.violating_write {
            None => true,
            Some((held, _)) => named_at(&r.session) < named_at(held_id(held)),
        };
        if better {
            self.violating_write = Some((place, Mark { t_ms: r.t_ms, class: "violating-write", title: row_title(r) }));
        }
    }
}

/// A heartbeat (▮) or a watcher's poll (•): the marks a day-long run has hundreds of
/// thousands of.
fn dense_class(r: &TraceRecord) -> Option<&'static str> {
    if r.stmt == Some(Stmt::Heartbeat) {
        Some("heartbeat")
    } else if r.is_sql() && r.actor.is_some_and(|a| a.is_watcher()) && !r.stmt.is_some_and(Stmt::inserts_message) {
        Some("poll")
    } else {
        None
    }
}

/// A message sent (▲) or the session's end by a crash or a hard stop (✕).
fn sparse_class(r: &TraceRecord) -> Option<&'static str> {
    if r.stmt.is_some_and(Stmt::inserts_message) {
        Some("message")
    } else if r.event == ActorEnd::Crashed.as_str() || r.event == "context_exhausted" {
        Some("crash")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_record as record;

    #[test]
    fn a_sessions_kinds_keep_their_detail_up_to_the_limit_then_leave_it_out() {
        let mut session = SessionModel::default();
        let poll =
            |n: usize| record(n as i64, "task-01.S1.bg-watcher-1", "sql", "read_task_state", None, &format!("task_id=task-01 n={n}"));
        for n in 0..KINDS_MAX + 5 {
            session.kind("poll", &poll(n));
        }
        assert_eq!(session.kinds.len(), KINDS_MAX + 1, "one kind without its detail for every row past the limit");
        assert_eq!(session.kind("poll", &poll(3)), 3, "a kind seen before is found again");
        assert_eq!(session.kinds[KINDS_MAX].text(), "task-01.S1.bg-watcher-1 sql read_task_state 1 (detail: trace.csv)");
    }

    fn place(task: u64, session: u32, twin: bool) -> SessionPlace {
        SessionPlace { task, session, twin }
    }

    #[test]
    fn lanes_states_marks_and_faults_come_from_one_pass() {
        let mut hb = record(25, "task-02.S1", "sql", "heartbeat", Some(TaskState::Working), "task_id=task-02");
        hb.session = "ad660549-1".into();
        let records = [
            record(0, "conductor", "sql", "create_task", None, "task_id=task-02 instruction_path=x"),
            record(20, "task-02.S1", "sql", "claim_task", Some(TaskState::Working), "task_id=task-02"),
            hb,
            record(40, "task-01.S1.bg-watcher-1", "sql", "read_new_conductor_messages", None, "task_id=task-01"),
            record(50, "task-02.S1", "crashed", "", None, ""),
            record(60, "engine", "fault_hang", "", None, "task-01.S1 (before `heartbeat`) hangs for 20 ms"),
            record(100, "conductor", "sql", "send_conductor_message", None, "task_id=task-02 message=x"),
        ];
        let model = Model::of(&records);
        assert_eq!(model.tasks.keys().map(String::as_str).collect::<Vec<_>>(), ["task-01", "task-02"]);
        assert_eq!(model.tasks["task-02"].sessions, [place(2, 1, false)]);
        assert_eq!(model.tasks["task-02"].states.len(), 1, "the heartbeat keeps it working");
        assert_eq!(model.tasks["task-02"].conductor_messages.len(), 1);
        let s1 = &model.sessions[&place(2, 1, false)];
        assert_eq!((s1.session_id.as_str(), s1.first_ms, s1.last_ms), ("ad660549-1", 20, 50));
        assert_eq!(s1.marks.iter().map(|m| m.class).collect::<Vec<_>>(), ["crash"]);
        assert_eq!(s1.dense, [Dense { t_ms: 25, seq: 25, kind: 0 }]);
        assert_eq!((s1.kinds[0].class, s1.kinds[0].text().as_str()), ("heartbeat", "task-02.S1 sql heartbeat 1 task_id=task-02"));
        assert_eq!(model.sessions[&place(1, 1, false)].kinds[0].class, "poll");
        assert_eq!(model.hangs[0].place, Some(place(1, 1, false)), "a hang belongs to its session's lane");
        assert_eq!((model.start_ms, model.end_ms), (Some(0), 100));
        let mut scripted = record(110, "engine", "fault_hang", "", None, "task 2 S1 hangs for 5 ms");
        scripted.session = "ad660549-1".into();
        let mut model = model;
        model.add(&scripted);
        assert_eq!(model.hangs[1].place, Some(place(2, 1, false)), "a scripted hang names its session by id");
    }

    /// A model gathered before the violation was known (sim/report/streamed.rs) finds the
    /// write the one that knew it found: the sessions named as they were at that row, not by
    /// an id one of them first carried later.
    #[test]
    fn the_violating_write_found_after_the_pass_is_the_one_found_during_it() {
        let mut unnamed_yet = record(70, "task-01.S1", "sql", "heartbeat", Some(TaskState::Working), "task_id=task-01");
        unnamed_yet.seq = 1;
        let mut other = record(70, "task-01.S2", "sql", "heartbeat", Some(TaskState::Working), "task_id=task-01");
        (other.session, other.seq) = ("e160f77a-bbbb".into(), 2);
        let mut named_later = record(80, "task-01.S1", "sql", "heartbeat", Some(TaskState::Working), "task_id=task-01");
        (named_later.session, named_later.seq) = ("ad660549-aaaa".into(), 3);
        let rows = [unnamed_yet, other, named_later];
        let explanation = "x session e160f77a… and session ad660549… wrote";
        let mut during = Model::new(Some(Focus { t_ms: 70, explanation }));
        rows.iter().for_each(|r| during.add(r));
        let mut after = Model::new(None);
        rows.iter().for_each(|r| after.add(r));
        assert!(after.violating_write.is_none());
        after.set_focus(Some(Focus { t_ms: 70, explanation }));
        rows.iter().filter(|r| r.t_ms == 70).for_each(|r| after.focus_row(r));
        assert_eq!(during.violating_write.as_ref().map(|(p, _)| *p), Some(place(1, 1, false)), "S1 held: unnamed, it was named first");
        assert_eq!(after.violating_write, during.violating_write);
    }

    #[test]
    fn the_violating_write_is_the_one_by_the_session_the_explanation_names() {
        let mut mine = record(70, "task-01.S1", "sql", "heartbeat", Some(TaskState::Working), "task_id=task-01");
        mine.session = "ad660549-aaaa".into();
        let mut other = record(70, "task-01.S2", "sql", "heartbeat", Some(TaskState::Working), "task_id=task-01");
        other.session = "e160f77a-bbbb".into();
        let mut model = Model::new(Some(Focus { t_ms: 70, explanation: "session ad660549… of task-01 wrote" }));
        for r in [&other, &mine] {
            model.add(r);
        }
        let (at, mark) = model.violating_write.expect("found");
        assert_eq!((at, mark.t_ms), (place(1, 1, false), 70));
    }
}
