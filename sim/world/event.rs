//! The one event stream: every effect the world performs, every actor's end, every fault and
//! every fact of ground truth is one typed `Event`. The trace writer, the checker and the
//! run's statistics all consume this same stream (sim/run/engine.rs dispatches it), so what the
//! trace shows and what the oracles judge cannot drift apart.
//!
//! Every event round-trips through `trace.csv` (format v2, sim/trace/trace_codec.rs): the trace
//! reader gives back equal events, so a finished run can be judged again from its files.

use std::borrow::Cow;
use std::sync::Arc;

use crate::vocab::{ActorName, Stmt};
use crate::world::db::RowSnapshot;

/// Who caused an event: an actor, or the engine itself (faults, swarm draws).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    Engine,
    Actor(ActorName),
}

/// How an actor left the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActorEnd {
    /// Its code returned.
    Exit,
    /// Dropped by a crash fault (with its whole session).
    Crashed,
    /// Stopped by another actor (TaskStop of a watcher).
    Killed,
    /// Its parent ended: watchers and subagents die with their session.
    KilledWithParent,
    /// A watcher killed by the `watcher_death` fault.
    WatcherDeath,
}

impl ActorEnd {
    /// Every way an actor leaves the run (the trace reader recognises their names).
    pub const ALL: [ActorEnd; 5] =
        [ActorEnd::Exit, ActorEnd::Crashed, ActorEnd::Killed, ActorEnd::KilledWithParent, ActorEnd::WatcherDeath];

    pub fn parse(text: &str) -> Option<ActorEnd> {
        ActorEnd::ALL.into_iter().find(|end| end.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ActorEnd::Exit => "exit",
            ActorEnd::Crashed => "crashed",
            ActorEnd::Killed => "killed",
            ActorEnd::KilledWithParent => "killed_with_parent",
            ActorEnd::WatcherDeath => "fault_watcher_death",
        }
    }
}

/// What a statement came to.
#[derive(Clone, Debug, PartialEq)]
pub enum SqlResult {
    /// Rows returned (a read) or changed (a write).
    Rows(usize),
    /// The virtual write lock stayed taken past the busy timeout (simulated SQLITE_BUSY).
    Busy(String),
    /// SQLite refused it (a constraint).
    Failed(String),
    /// SQLite answered an error that is not a constraint; its message says which: a real lock
    /// (never expected: the run holds the file exclusively) or a simulated I/O error
    /// (SQLITE_IOERR, a scripted `io_error` fault).
    SqliteError(String),
}

/// One protocol statement as the world executed it, with what the harness saw around it.
#[derive(Clone, Debug, PartialEq)]
pub struct SqlEvent {
    pub stmt: Stmt,
    /// The task row it concerns (its `:task_id`, or the actor's task).
    pub task_id: String,
    pub result: SqlResult,
    /// Rows changed (0 for reads and failures).
    pub rows_affected: usize,
    /// The task row before and after a write (`None` for reads, or no such row).
    pub before: Option<RowSnapshot>,
    pub after: Option<RowSnapshot>,
    /// For a message insert: (id, task_id, message_type) of the first message it inserted.
    pub message: Option<(i64, String, String)>,
    /// Every further message the statement inserted (a multi-row `INSERT … SELECT`).
    pub more_messages: Vec<(i64, String, String)>,
    /// Task rows other than `task_id`'s that the statement inserted or updated (a fallback
    /// row; a multi-row UPDATE), by task id.
    pub other_rows: Vec<String>,
    /// For `poll_tasks`: (task_id, state, seconds_stale) rows.
    pub polled: Vec<(String, String, f64)>,
    /// The bound parameters, `key=value` with message bodies cut to their first line.
    pub params_text: ParamsText,
}

/// A statement's bound parameters as its trace row shows them. A statement the world ran keeps
/// its parameters as bound, and the text is written where the row is (the observers' thread
/// in a `run`), not per statement on the simulation's thread (issue 47: ~5 % of the
/// simulator's own instructions on fleet-day).
#[derive(Clone, Debug)]
pub enum ParamsText {
    /// The text itself: read back from a trace, or made up by the harness.
    Text(String),
    /// The parameters the statement was bound with.
    Bound(Stmt, crate::world::db::Params),
}

impl ParamsText {
    /// The text, written out if need be (`describe_params`).
    pub fn render(&self) -> Cow<'_, str> {
        match self {
            ParamsText::Text(text) => Cow::Borrowed(text.as_str()),
            ParamsText::Bound(stmt, params) => Cow::Owned(crate::world::describe_params(*stmt, params)),
        }
    }

    /// Appends the text to `out`.
    pub fn push_to(&self, out: &mut String) {
        match self {
            ParamsText::Text(text) => out.push_str(text),
            ParamsText::Bound(stmt, params) => crate::world::describe_params_into(out, *stmt, params),
        }
    }
}

impl Default for ParamsText {
    fn default() -> Self {
        ParamsText::Text(String::new())
    }
}

impl From<String> for ParamsText {
    fn from(text: String) -> Self {
        ParamsText::Text(text)
    }
}

impl From<&str> for ParamsText {
    fn from(text: &str) -> Self {
        ParamsText::Text(text.to_string())
    }
}

/// Equal when their texts are: an event read back from the trace equals the one written.
impl PartialEq for ParamsText {
    fn eq(&self, other: &Self) -> bool {
        self.render() == other.render()
    }
}

impl SqlEvent {
    pub fn readonly(&self) -> bool {
        !self.stmt.writes()
    }

    pub fn failure(&self) -> Option<&str> {
        match &self.result {
            SqlResult::Rows(_) => None,
            SqlResult::Busy(m) | SqlResult::Failed(m) | SqlResult::SqliteError(m) => Some(m),
        }
    }
}

/// temp/ file effects (000 "Temporary File Management").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOp {
    Append,
    Write,
    Read,
}

impl FileOp {
    pub const ALL: [FileOp; 3] = [FileOp::Append, FileOp::Write, FileOp::Read];

    pub fn parse(text: &str) -> Option<FileOp> {
        FileOp::ALL.into_iter().find(|op| op.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FileOp::Append => "file_append",
            FileOp::Write => "file_write",
            FileOp::Read => "file_read",
        }
    }
}

/// Ground truth and protocol decisions that are not database effects. They reach the
/// oracles, never other actors; the trace writes each as a `truth` row (the fact in its
/// `observed` column), so re-judging sees them too.
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    Launched {
        /// When the session starts (the launch delay after the conductor launched it).
        at_ms: i64,
        /// `S2`, `S2b`: how explanations name the session.
        label: String,
        session_id: String,
        task_id: String,
    },
    /// The session and all its actors are gone: a crash, or a hard stop at 100 % context.
    Crashed {
        session_id: String,
        why: String,
    },
    Hung {
        session_id: String,
        until_ms: i64,
    },
    WatcherDied {
        session_id: String,
    },
    /// The session's main actor ended normally.
    Ended {
        session_id: String,
    },
    /// The session read that it was replaced (docs/protocol.md C51): its work is over and it
    /// writes nothing more; its main actor lives on only in its stop hook's exit attempts
    /// (C170), as one past its terminal write does.
    WorkOver {
        session_id: String,
    },
    MessageHandled {
        session_id: String,
        message_id: i64,
    },
    /// The conductor is about to answer the musician message `request_id`, written by session
    /// `requester`; its next message to the task is that answer.
    Answering {
        task_id: String,
        request_id: i64,
        requester: String,
    },
    /// A watcher's poll sleep of `sleep_ms` took `jitter_ms` longer (the watcher-jitter fault):
    /// from `t + sleep_ms` to `t + sleep_ms + jitter_ms` the watcher (the event's actor) waited
    /// for the fault, not for its poll. Latency attribution (sim/judging/oracle/latency.rs) reads it.
    SleepJittered {
        session_id: String,
        sleep_ms: i64,
        jitter_ms: i64,
    },
    StaleDeclared {
        task_id: String,
        session_id: String,
        /// The heartbeat's age as the conductor's poll read it.
        seconds_stale: f64,
        /// When that poll ran (the conductor may have reviewed other tasks since).
        polled_at_ms: i64,
    },
    /// Fault `ambiguous_commit` (docs/protocol.md C70): the session's next run of `statement`
    /// is its tool layer's blind retry of the one that just committed, not a decision of its
    /// own (an error report retried is still one report).
    BlindRetry {
        session_id: String,
        statement: String,
    },
}

/// Events as they are emitted during one step, drained by the engine into the consumers.
/// Every event is counted; while `dropping` (a forked run catching up, whose events the
/// snapshot's observers have had: sim/run/fork.rs) an event is counted and dropped, not kept.
#[derive(Default)]
pub struct EventLog {
    pending: std::cell::RefCell<Vec<Event>>,
    emitted: std::cell::Cell<u64>,
    dropping: std::cell::Cell<bool>,
}

impl EventLog {
    pub fn push(&self, event: Event) {
        self.emitted.set(self.emitted.get() + 1);
        if !self.dropping.get() {
            self.pending.borrow_mut().push(event);
        }
    }

    /// Counts an event not made, in place of `push` while `dropping`: its maker knows no
    /// one would read it.
    pub fn count_dropped(&self) {
        debug_assert!(self.dropping.get(), "only an event nobody reads goes unmade");
        self.emitted.set(self.emitted.get() + 1);
    }

    /// Events emitted so far, kept or dropped.
    pub fn emitted(&self) -> u64 {
        self.emitted.get()
    }

    /// Whether events are counted and dropped rather than kept.
    pub fn dropping(&self) -> bool {
        self.dropping.get()
    }

    pub fn set_dropping(&self, dropping: bool) {
        self.dropping.set(dropping);
    }

    /// Moves every pending event into `into`, in emission order.
    pub fn drain_into(&self, into: &mut Vec<Event>) {
        into.append(&mut self.pending.borrow_mut());
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    /// A fault probability drawn from the seed before the run (swarm testing).
    Swarm {
        name: String,
        value: String,
    },
    Sql(Box<SqlEvent>),
    File {
        op: FileOp,
        path: String,
        /// Lines written, or read; `None` when a read found no file.
        lines: Option<usize>,
        /// The first line written (empty for reads).
        first_line: String,
    },
    Ended(ActorEnd),
    /// A crash fault hit a session.
    FaultCrash {
        why: String,
    },
    /// A hang fault froze a session (or the conductor).
    FaultHang {
        who: String,
        ms: i64,
    },
    /// A protocol decision an actor notes in the trace (`launch`, `claimed`, …). Its name is
    /// the trace's event column, so it must not be one of the trace's own event names
    /// (`trace_codec::is_reserved_event`); actors name notes with literals, the trace reader
    /// gives the name back owned.
    Note {
        what: Cow<'static, str>,
        detail: String,
    },
    Truth(Fact),
}

/// One event: when, who (and as which session), what.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Simulated milliseconds since the run's epoch.
    pub t_ms: i64,
    pub who: Who,
    /// The session id the actor writes as (empty for the engine's own events), shared with
    /// the actor's other events rather than copied into each.
    pub session: Arc<str>,
    pub kind: EventKind,
}
