//! Ground truth: what the simulator knows and the protocol's actors cannot — which sessions
//! are alive, hung, crashed or finished, who owns each task row, which request each conductor
//! answer replies to. Rules read it as it stood *before* the event they judge; the checker
//! updates it after every rule has seen the event.

use std::collections::{BTreeMap, BTreeSet};

use crate::vocab::{MessageKind, Stmt, TaskState};
use crate::world::db::RowSnapshot;
use crate::world::event::Fact;

use super::SqlFact;

#[derive(Clone, Debug, Default)]
pub struct SessionTruth {
    pub task_id: String,
    /// `S2`, `S2b` (empty for a session the oracle first saw write).
    pub label: String,
    pub launched_ms: i64,
    pub crashed_ms: Option<i64>,
    /// Every hang: (from, until).
    pub hangs: Vec<(i64, i64)>,
    pub watcher_died: bool,
    /// Its main actor ended normally.
    pub ended_ms: Option<i64>,
    /// It read that it was replaced and stopped working (`Fact::WorkOver`): from here its
    /// main actor only waits at its stop hook, writing nothing (docs/protocol.md C170).
    pub work_over_ms: Option<i64>,
    /// Its terminal write (`complete` or `exited`, or the final message of an exit on
    /// request: `Truth::ends_session`) succeeded.
    pub terminal_ms: Option<i64>,
    pub last_write: Option<(i64, Stmt)>,
    /// Its last write on its task row (a message INSERT touches none): what refreshed the
    /// row's `last_heartbeat` (004 "Heartbeat Rule").
    pub last_row_write_ms: Option<i64>,
}

impl SessionTruth {
    /// Neither crashed, ended, past its terminal write, nor past the read that it was
    /// replaced (after which it only waits at its stop hook, as after a terminal write), at
    /// `t_ms`.
    pub fn is_live_at(&self, t_ms: i64) -> bool {
        let before = |at: Option<i64>| at.is_some_and(|at| at <= t_ms);
        !before(self.crashed_ms) && !before(self.ended_ms) && !before(self.terminal_ms) && !before(self.work_over_ms)
    }

    /// Frozen by a hang fault at `t_ms`.
    pub fn hung_at(&self, t_ms: i64) -> Option<(i64, i64)> {
        self.hangs.iter().copied().find(|(from, until)| *from <= t_ms && t_ms < *until)
    }

    /// At `t_ms`, the row's heartbeat is one this session wrote since its last hang ended
    /// (or it never hung): its age measures the protocol's timing, not a fault's freeze.
    pub fn heartbeat_since_hangs(&self, t_ms: i64) -> bool {
        let Some(written_ms) = self.last_row_write_ms.filter(|at| *at <= t_ms) else { return false };
        self.hangs.iter().all(|(_, until)| *until <= written_ms)
    }
}

#[derive(Clone, Debug, Default)]
pub struct MessageTruth {
    pub task_id: String,
    pub kind: String,
    pub sent_ms: i64,
    pub from_conductor: bool,
    /// The session the task row named when the message was written.
    pub owner_at_send: Option<String>,
    /// For a conductor answer: the session whose request it replies to.
    pub answers: Option<String>,
}

/// What the truth says about a session the conductor handed over at an instant.
#[derive(Clone, Debug, PartialEq)]
pub enum StaleTruth {
    /// It had crashed at that time: a true detection.
    Crashed(i64),
    /// It was frozen by a hang that began at that time: a true detection.
    Hung(i64),
    /// A fault had killed its watcher: its heartbeat really stopped.
    WatcherDead,
    /// It had ended or made its terminal write: nothing live was handed over.
    Finished,
    /// It was alive and running: a live session handed over.
    Live,
    /// The oracle never heard of it.
    Unknown,
}

#[derive(Clone, Default)]
pub struct Truth {
    pub sessions: BTreeMap<String, SessionTruth>,
    /// The session each task row names, as of the last write seen.
    pub owner: BTreeMap<String, String>,
    pub messages: BTreeMap<i64, MessageTruth>,
    /// Per task: the session whose write made the row `complete` (its row may name another).
    pub completed_by: BTreeMap<String, String>,
    /// Per task: the requester the conductor's next message answers.
    answering: BTreeMap<String, String>,
    /// docs/protocol.md D16 under `exit-request-no-state`: a session asked to exit ends with its
    /// final message (`leaves_on_request`), not with a state (by default it writes `exited`).
    pub exit_request_to_musician: bool,
    /// Every conductor session seen writing or reading (a relaunch after a crash has its own).
    conductor_sessions: BTreeSet<String>,
    /// How long a message can wait for a session's background watcher to read it: one poll
    /// with its injected jitter and the read (000 "Background Watcher": the musician learns of
    /// a message only when its watcher's query returns it). A message sent to a session that
    /// makes its terminal write within this window could not be read by it (docs/protocol.md
    /// C86); 0 (a checker built without a scenario): no such window.
    pub watcher_read_window_ms: i64,
}

impl Truth {
    pub fn new(exit_request_to_musician: bool) -> Truth {
        Truth { exit_request_to_musician, ..Truth::default() }
    }

    /// The write that ends a session: its terminal write (`is_terminal_write`), or, asked to
    /// exit under the `exit-request-no-state` reading of D16, its final message
    /// (`leaves_on_request`); by default such a session ends with `exited` like any other.
    pub fn ends_session(&self, f: &SqlFact) -> bool {
        is_terminal_write(f) || (self.exit_request_to_musician && leaves_on_request(f))
    }

    /// "S2 (3f2a81c0…) of task-03 (launched at t=…, hung …, crashed …, last wrote …)".
    pub fn describe(&self, session_id: &str) -> String {
        let short = &session_id[..session_id.len().min(8)];
        let Some(s) = self.sessions.get(session_id) else { return format!("session {short}…") };
        let label = if s.label.is_empty() { String::new() } else { format!("{} ", s.label) };
        let mut what = format!("session {label}({short}…) of {} (launched at t={} ms", s.task_id, s.launched_ms);
        for (from, until) in &s.hangs {
            what.push_str(&format!(", hung from t={from} ms until t={until} ms"));
        }
        if let Some(t) = s.crashed_ms {
            what.push_str(&format!(", crashed at t={t} ms"));
        }
        if let Some(t) = s.terminal_ms {
            what.push_str(&format!(", terminal write at t={t} ms"));
        }
        if let Some(t) = s.work_over_ms {
            what.push_str(&format!(", read it was replaced at t={t} ms"));
        }
        if let Some(t) = s.ended_ms {
            what.push_str(&format!(", ended at t={t} ms"));
        }
        if let Some((t, statement)) = &s.last_write {
            what.push_str(&format!(", last wrote `{statement}` at t={t} ms"));
        }
        what.push(')');
        what
    }

    /// The truth about `session_id` at `t_ms`, for a staleness decision.
    pub fn stale_truth(&self, session_id: &str, t_ms: i64) -> StaleTruth {
        let Some(s) = self.sessions.get(session_id) else { return StaleTruth::Unknown };
        if let Some(crashed) = s.crashed_ms.filter(|c| *c <= t_ms) {
            return StaleTruth::Crashed(crashed);
        }
        if !s.is_live_at(t_ms) {
            return StaleTruth::Finished;
        }
        if let Some((from, _)) = s.hung_at(t_ms) {
            return StaleTruth::Hung(from);
        }
        if s.watcher_died {
            return StaleTruth::WatcherDead;
        }
        StaleTruth::Live
    }

    pub fn on_fact(&mut self, t_ms: i64, fact: &Fact) {
        match fact {
            Fact::Launched { at_ms, label, session_id, task_id } => {
                let truth = SessionTruth { task_id: task_id.clone(), label: label.clone(), launched_ms: *at_ms, ..SessionTruth::default() };
                self.sessions.insert(session_id.clone(), truth);
            }
            Fact::Crashed { session_id, .. } => {
                if let Some(s) = self.sessions.get_mut(session_id) {
                    s.crashed_ms.get_or_insert(t_ms);
                }
                // A conductor that dies about to answer never answers: the next conductor
                // session's messages reply to nothing its predecessor meant
                // (docs/protocol.md C35).
                if self.conductor_sessions.contains(session_id) {
                    self.answering.clear();
                }
            }
            Fact::Hung { session_id, until_ms } => {
                if let Some(s) = self.sessions.get_mut(session_id) {
                    s.hangs.push((t_ms, *until_ms));
                }
            }
            Fact::WatcherDied { session_id } => {
                if let Some(s) = self.sessions.get_mut(session_id) {
                    s.watcher_died = true;
                }
            }
            Fact::Ended { session_id } => {
                if let Some(s) = self.sessions.get_mut(session_id) {
                    s.ended_ms.get_or_insert(t_ms);
                }
            }
            Fact::WorkOver { session_id } => {
                if let Some(s) = self.sessions.get_mut(session_id) {
                    s.work_over_ms.get_or_insert(t_ms);
                }
            }
            Fact::Answering { task_id, requester, .. } => {
                self.answering.insert(task_id.clone(), requester.clone());
            }
            Fact::MessageHandled { .. } | Fact::StaleDeclared { .. } | Fact::SleepJittered { .. } | Fact::BlindRetry { .. } => {}
        }
    }

    /// A session the oracle has not heard launched (a twin, a test) is known from its first
    /// write on.
    pub fn know(&mut self, f: &SqlFact) {
        // Looked up before it is inserted: the id is copied only for a session not yet known.
        if !f.actor.is_conductor() && !f.readonly && !self.sessions.contains_key(f.session_id) {
            self.sessions.insert(
                f.session_id.to_string(),
                SessionTruth { task_id: f.task_id.to_string(), launched_ms: f.t_ms, ..SessionTruth::default() },
            );
        }
    }

    pub fn on_sql(&mut self, f: &SqlFact) {
        if f.actor.is_conductor() && !self.conductor_sessions.contains(f.session_id) {
            self.conductor_sessions.insert(f.session_id.to_string());
        }
        if f.readonly {
            return;
        }
        if let Some(after) = f.after {
            if !after.session_id.is_empty() {
                set_owner(&mut self.owner, f.task_id, &after.session_id);
            }
        }
        // Every message of a multi-row insert (issue 26); the first to the task answers.
        for (id, task_id, kind) in f.messages() {
            let answers = if f.actor.is_conductor() { self.answering.remove(task_id) } else { None };
            self.messages.insert(
                *id,
                MessageTruth {
                    task_id: task_id.clone(),
                    kind: kind.clone(),
                    sent_ms: f.t_ms,
                    from_conductor: f.actor.is_conductor(),
                    owner_at_send: self.owner.get(task_id).cloned(),
                    answers,
                },
            );
        }
        if f.actor.is_conductor() {
            return;
        }
        if let Some((before, after)) = touched_row(f) {
            if after.state == TaskState::Complete && before.state != TaskState::Complete {
                self.completed_by.insert(f.task_id.to_string(), f.session_id.to_string());
            }
        }
        let terminal = self.ends_session(f);
        if let Some(s) = self.sessions.get_mut(f.session_id) {
            s.last_write = Some((f.t_ms, f.statement));
            if !f.statement.inserts_message() {
                s.last_row_write_ms = Some(f.t_ms);
            }
            if terminal {
                s.terminal_ms.get_or_insert(f.t_ms);
            }
        }
    }
}

/// Records `session_id` as the owner of `task_id`, copying a string only when the owner is
/// new or another: most writes are by the owner (issue 17).
fn set_owner(owner: &mut BTreeMap<String, String>, task_id: &str, session_id: &str) {
    match owner.get_mut(task_id) {
        Some(known) if known == session_id => {}
        Some(known) => session_id.clone_into(known),
        None => {
            owner.insert(task_id.to_string(), session_id.to_string());
        }
    }
}

/// A session's terminal write succeeded: it moved its row to `complete` or `exited`, or its
/// terminal statement changed the row even though the row was in that state already (a
/// session whose terminal write succeeded is not live, whatever the row said before).
pub fn is_terminal_write(f: &SqlFact) -> bool {
    let (Some(before), Some(after)) = (f.before, f.after) else { return false };
    if f.rows_affected == 0 || f.statement.inserts_message() || f.statement == Stmt::InsertFallbackRow {
        return false;
    }
    after.state.is_terminal() && (before.state != after.state || matches!(f.statement, Stmt::MarkComplete | Stmt::MarkExited))
}

/// docs/protocol.md D16, the default reading: a session asked to exit leaves the row it owns in
/// `exit_requested` (002 "Valid State Transitions" has no way out of it, and 002 "Guard Clause
/// Rules" lets the successor claim from it), so its final `handoff` message (000 "Clean Exit
/// Protocol" 6), sent while that row is `exit_requested`, is its last write.
pub fn leaves_on_request(f: &SqlFact) -> bool {
    let (Some((_, _, kind)), Some(after)) = (f.message, f.after) else { return false };
    !f.actor.is_conductor() && MessageKind::Handoff.is(kind) && after.state == TaskState::ExitRequested && after.session_id == f.session_id
}

/// A conductor write that begins handing a task over: its `handoff` message, or (with no
/// message first) its move to `fix_proposed`. Staleness declarations are judged here.
pub fn begins_hand_over(f: &SqlFact) -> bool {
    match (f.message, f.after) {
        (Some((_, _, kind)), _) => MessageKind::Handoff.is(kind),
        (None, Some(after)) => after.state == TaskState::FixProposed,
        (None, None) => false,
    }
}

/// The row as it stood before a write, if the write touched an existing task row.
pub fn touched_row<'a>(f: &SqlFact<'a>) -> Option<(&'a RowSnapshot, &'a RowSnapshot)> {
    let (Some(before), Some(after)) = (f.before, f.after) else { return None };
    if f.rows_affected == 0 || f.statement.inserts_message() || f.statement == Stmt::InsertFallbackRow {
        return None;
    }
    Some((before, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_is_recorded_new_replaced_or_kept() {
        let mut owner = BTreeMap::new();
        set_owner(&mut owner, "task-01", "s1");
        set_owner(&mut owner, "task-02", "s2");
        set_owner(&mut owner, "task-01", "s1");
        assert_eq!(owner["task-01"], "s1");
        set_owner(&mut owner, "task-01", "s3-longer-than-before");
        set_owner(&mut owner, "task-02", "s");
        let all: Vec<(&str, &str)> = owner.iter().map(|(t, s)| (t.as_str(), s.as_str())).collect();
        assert_eq!(all, [("task-01", "s3-longer-than-before"), ("task-02", "s")]);
    }
}
