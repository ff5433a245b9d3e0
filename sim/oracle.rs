//! The oracles: safety rules checked as the run goes, liveness at its end, and timing
//! budgets measured as distributions. They see every database effect (with the task row
//! before and after it) and the ground truth only the simulator knows: which sessions are
//! alive, hung or crashed (DESIGN.md, invariant 6). Every violation is explained in words
//! with the events that led to it.

use std::collections::{BTreeMap, BTreeSet};

use crate::db::RowSnapshot;
use crate::event::{Event, EventKind, Fact, SqlResult, Who};
use crate::scenario::{BudgetsSection, ProtocolSettings};
use crate::vocab::{ActorName, RuleId, Stmt};

/// A rule: its id (the vocabulary's word for it) and what it says, as verdicts print it.
pub struct Rule {
    pub id: RuleId,
    pub says: &'static str,
}

impl Rule {
    pub fn name(&self) -> &'static str {
        self.id.as_str()
    }
}

/// Every rule, in the order of `RuleId::ALL`.
pub const RULES: &[Rule] = &[
    Rule { id: RuleId::OneLiveSessionPerTask, says: "at most one live session works a task" },
    Rule { id: RuleId::AllowedTransitions, says: "state changes follow the state machine (002), made by the actor allowed to make them" },
    Rule { id: RuleId::NothingAfterTerminal, says: "a session writes nothing after its terminal write (000 Key Principles 9)" },
    Rule {
        id: RuleId::MessageBeforeState,
        says: "a review request exists whenever the conductor sees needs_review, and a terminal write follows its final message (004)",
    },
    Rule {
        id: RuleId::MessagesSeenOnce,
        says: "every conductor message is seen exactly once by a session of its task (000 Message Deduplication)",
    },
    Rule { id: RuleId::NoFalseStale, says: "the conductor never declares a live, healthy session stale (000 Heartbeat Protocol)" },
    Rule { id: RuleId::RetryCountAtMost5, says: "retry_count never exceeds 5 (004 Terminal Failure)" },
    Rule { id: RuleId::OwnerWritesOnly, says: "no session writes a task row it no longer owns (PROTOCOL.md disagreement 11)" },
    Rule { id: RuleId::NoConstraintFailure, says: "no statement fails a CHECK or other constraint" },
    Rule { id: RuleId::Liveness, says: "after the fault phase every task reaches complete and the conductor exits" },
    Rule { id: RuleId::Budget, says: "timing measurements stay within the scenario's budgets" },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Conductor,
    Musician,
    Watcher,
}

impl Role {
    fn of(name: &ActorName) -> Role {
        match name {
            ActorName::Conductor => Role::Conductor,
            ActorName::Watcher(..) => Role::Watcher,
            _ => Role::Musician,
        }
    }
}

/// One database effect, as the checker reads it off the event stream.
struct SqlFact<'a> {
    t_ms: i64,
    actor: ActorName,
    role: Role,
    session_id: &'a str,
    statement: Stmt,
    task_id: &'a str,
    readonly: bool,
    rows_affected: usize,
    before: Option<&'a RowSnapshot>,
    after: Option<&'a RowSnapshot>,
    message: Option<&'a (i64, String, String)>,
    polled: &'a [(String, String, f64)],
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub rule: &'static str,
    pub t_ms: i64,
    pub explanation: String,
}

#[derive(Clone, Debug, Default)]
struct SessionTruth {
    task_id: String,
    launched_ms: i64,
    crashed_ms: Option<i64>,
    hung_until_ms: Option<i64>,
    hung_from_ms: Option<i64>,
    watcher_died: bool,
    ended_ms: Option<i64>,
    terminal_ms: Option<i64>,
    /// Message inserts since this session's last state change (types).
    messages_since_state: Vec<String>,
    last_write: Option<(i64, String)>,
}

impl SessionTruth {
    /// Neither crashed, ended, nor past its terminal write.
    fn is_live(&self) -> bool {
        self.crashed_ms.is_none() && self.ended_ms.is_none() && self.terminal_ms.is_none()
    }
}

#[derive(Clone, Debug, Default)]
struct MessageTruth {
    task_id: String,
    kind: String,
    sent_ms: i64,
    handled_by: Vec<(String, i64)>,
}

/// Measurements for the timing budgets, in ms (heartbeat age in s).
#[derive(Clone, Debug, Default)]
pub struct Measurements {
    pub message_notice_ms: Vec<i64>,
    pub review_resume_ms: Vec<i64>,
    pub crash_detect_ms: Vec<i64>,
    pub heartbeat_age_s: Vec<i64>,
    pub exit_to_claim_ms: Vec<i64>,
    /// Every time the conductor declared a session stale (true detections and false alarms).
    pub stale_declared: u64,
    /// Declarations of a live, healthy session (the `no-false-stale` rule's cases).
    pub false_stale_alarms: u64,
}

impl Measurements {
    pub fn named(&self) -> [(&'static str, &Vec<i64>); 5] {
        [
            ("message_notice_ms", &self.message_notice_ms),
            ("review_resume_ms", &self.review_resume_ms),
            ("crash_detect_ms", &self.crash_detect_ms),
            ("heartbeat_age_s", &self.heartbeat_age_s),
            ("exit_to_claim_ms", &self.exit_to_claim_ms),
        ]
    }
}

/// p50 / p95 / max of a sample, nearest-rank; `None` when empty.
pub fn quantiles(sample: &[i64]) -> Option<(i64, i64, i64)> {
    if sample.is_empty() {
        return None;
    }
    let mut sorted = sample.to_vec();
    sorted.sort_unstable();
    let rank = |q: f64| sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
    Some((rank(0.5), rank(0.95), *sorted.last().expect("non-empty")))
}

pub struct Checker {
    settings: ProtocolSettings,
    /// The conductor's staleness threshold, in ms.
    staleness_ms: i64,
    sessions: BTreeMap<String, SessionTruth>,
    messages: BTreeMap<i64, MessageTruth>,
    /// Per task: (session that set needs_review, time) while no review message backs it.
    unbacked_review: BTreeMap<String, (String, i64)>,
    /// Per task: when the conductor answered a review, awaiting the musician's next write.
    answered: BTreeMap<String, i64>,
    /// Per task: when it became `exited`, awaiting the successor's claim.
    exited_at: BTreeMap<String, i64>,
    pub violations: Vec<Violation>,
    reported: BTreeSet<(&'static str, String)>,
    /// The session each task row names, as of the last write the oracle saw.
    owner: BTreeMap<String, String>,
    pub measured: Measurements,
}

fn musician_transition_allowed(from: &str, to: &str, implied: bool) -> bool {
    // 002 "Valid State Transitions".
    let table = matches!(
        (from, to),
        ("watching" | "fix_proposed" | "exit_requested", "working")
            | ("working", "needs_review" | "error" | "complete" | "exited")
            | ("review_approved", "working" | "needs_review")
            | ("review_failed", "needs_review")
            | ("fix_proposed", "needs_review")
            | ("error", "exited")
    );
    // PROTOCOL.md disagreement 10: implied by the text, missing from the table.
    let implied_ok = implied && matches!((from, to), ("needs_review", "error") | ("review_failed", "working") | ("error", "error"));
    table || implied_ok
}

fn conductor_transition_allowed(from: &str, to: &str, settings: &ProtocolSettings) -> bool {
    match to {
        // Review answers (002 "States the Conductor Sets") on a task that asked for one.
        "review_approved" | "review_failed" => matches!(from, "needs_review" | "error"),
        // A fix for a review or an error, or the handover of a stale or exited task
        // (000 Bootstrap 5 "Session Handoff"; exited only where relaunch is the reading).
        "fix_proposed" => {
            matches!(from, "needs_review" | "error" | "working" | "review_approved" | "review_failed")
                || (from == "exited" && settings.relaunch_exited)
        }
        "exit_requested" => from != "complete" && from != "exited",
        _ => false,
    }
}

impl Checker {
    pub fn new(settings: ProtocolSettings, staleness_s: i64) -> Checker {
        Checker {
            settings,
            staleness_ms: staleness_s * 1000,
            sessions: BTreeMap::new(),
            messages: BTreeMap::new(),
            unbacked_review: BTreeMap::new(),
            answered: BTreeMap::new(),
            exited_at: BTreeMap::new(),
            violations: Vec::new(),
            reported: BTreeSet::new(),
            owner: BTreeMap::new(),
            measured: Measurements::default(),
        }
    }

    fn violate(&mut self, rule: &'static str, key: String, t_ms: i64, explanation: String) {
        // One report per rule and subject: the first occurrence explains it.
        if self.reported.insert((rule, key)) {
            self.violations.push(Violation { rule, t_ms, explanation });
        }
    }

    fn describe(&self, session_id: &str) -> String {
        let Some(s) = self.sessions.get(session_id) else { return format!("session {session_id}") };
        let short = &session_id[..session_id.len().min(8)];
        let mut what = format!("session {short}… of {} (launched at t={} ms", s.task_id, s.launched_ms);
        if let Some(t) = s.hung_from_ms {
            what.push_str(&format!(", hung at t={t} ms until t={} ms", s.hung_until_ms.unwrap_or(t)));
        }
        if let Some(t) = s.crashed_ms {
            what.push_str(&format!(", crashed at t={t} ms"));
        }
        if let Some((t, statement)) = &s.last_write {
            what.push_str(&format!(", last wrote `{statement}` at t={t} ms"));
        }
        what.push(')');
        what
    }

    /// Consumes one event of the run's stream.
    pub fn on_event(&mut self, event: &Event) {
        match &event.kind {
            EventKind::Truth(fact) => self.on_fact(event.t_ms, fact.clone()),
            EventKind::Sql(sql) => {
                let Who::Actor(actor) = event.who else { return };
                let failure = match &sql.result {
                    // The lock model answered before SQLite ran anything.
                    SqlResult::Busy(_) => return,
                    SqlResult::Failed(message) => Some((true, message)),
                    SqlResult::Locked(message) => Some((false, message)),
                    SqlResult::Rows(_) => None,
                };
                if let Some((constraint, message)) = failure {
                    if constraint {
                        self.violate(
                            "no-constraint-failure",
                            sql.stmt.name().to_string(),
                            event.t_ms,
                            format!("at t={} ms {actor} ran `{}` and SQLite refused it: {message}", event.t_ms, sql.stmt),
                        );
                    }
                    return;
                }
                let fact = SqlFact {
                    t_ms: event.t_ms,
                    actor,
                    role: Role::of(&actor),
                    session_id: &event.session,
                    statement: sql.stmt,
                    task_id: &sql.task_id,
                    readonly: sql.readonly(),
                    rows_affected: sql.rows_affected,
                    before: sql.before.as_ref(),
                    after: sql.after.as_ref(),
                    message: sql.message.as_ref(),
                    polled: &sql.polled,
                };
                self.on_sql(&fact);
            }
            _ => {}
        }
    }

    fn on_fact(&mut self, t_ms: i64, fact: Fact) {
        match fact {
            Fact::Launched { at_ms, session_id, task_id } => {
                self.sessions.insert(session_id, SessionTruth { task_id, launched_ms: at_ms, ..SessionTruth::default() });
            }
            Fact::Crashed { session_id, .. } => {
                if let Some(s) = self.sessions.get_mut(&session_id) {
                    s.crashed_ms.get_or_insert(t_ms);
                }
            }
            Fact::Hung { session_id, until_ms } => {
                if let Some(s) = self.sessions.get_mut(&session_id) {
                    s.hung_from_ms = Some(t_ms);
                    s.hung_until_ms = Some(until_ms);
                }
            }
            Fact::WatcherDied { session_id, .. } => {
                if let Some(s) = self.sessions.get_mut(&session_id) {
                    s.watcher_died = true;
                }
            }
            Fact::Ended { session_id } => {
                if let Some(s) = self.sessions.get_mut(&session_id) {
                    s.ended_ms.get_or_insert(t_ms);
                }
            }
            Fact::MessageHandled { session_id, message_id } => {
                // Only the task's owner handles its messages; a replaced session reading them
                // is a zombie, which the ownership rule judges by what it writes.
                let owns = self.messages.get(&message_id).is_some_and(|m| self.owner.get(&m.task_id) == Some(&session_id));
                if !owns {
                    return;
                }
                if let Some(m) = self.messages.get_mut(&message_id) {
                    if m.handled_by.is_empty() {
                        self.measured.message_notice_ms.push(t_ms - m.sent_ms);
                    }
                    m.handled_by.push((session_id, t_ms));
                }
            }
            Fact::StaleDeclared { task_id, session_id, seconds_stale } => {
                let Some(s) = self.sessions.get(&session_id).cloned() else { return };
                self.measured.stale_declared += 1;
                // A hang that ended less than one staleness window ago still explains the old
                // heartbeat: the conductor cannot know the session has woken.
                let window_ms = self.staleness_ms;
                let hung_now =
                    s.hung_from_ms.is_some_and(|from| from <= t_ms) && s.hung_until_ms.is_some_and(|until| t_ms < until + window_ms);
                if let Some(lost_ms) = s.crashed_ms.or(if hung_now { s.hung_from_ms } else { None }) {
                    self.measured.crash_detect_ms.push(t_ms - lost_ms);
                } else if s.is_live() && !s.watcher_died {
                    self.measured.false_stale_alarms += 1;
                    let who = self.describe(&session_id);
                    self.violate(
                        "no-false-stale",
                        session_id.clone(),
                        t_ms,
                        format!(
                            "at t={t_ms} ms the conductor declared {who} stale because {task_id}'s heartbeat was {seconds_stale:.0} s old, but the session was alive (neither crashed nor hung, no watcher killed by a fault): a live, healthy session was handed over"
                        ),
                    );
                }
            }
        }
    }

    fn on_sql(&mut self, f: &SqlFact) {
        if f.statement == Stmt::PollTasks {
            self.on_poll(f);
            return;
        }
        if f.readonly {
            return;
        }
        if let Some(after) = f.after {
            if !after.session_id.is_empty() {
                self.owner.insert(f.task_id.to_string(), after.session_id.clone());
            }
        }
        if f.role != Role::Conductor {
            self.on_musician_write(f);
        } else {
            self.on_conductor_write(f);
        }
        if let (Role::Conductor, Some((id, task_id, kind))) = (f.role, f.message) {
            self.messages
                .insert(*id, MessageTruth { task_id: task_id.clone(), kind: kind.clone(), sent_ms: f.t_ms, handled_by: Vec::new() });
        }
        if let Some(after) = f.after {
            if after.retry_count > 5 {
                self.violate(
                    "retry-count-at-most-5",
                    f.task_id.to_string(),
                    f.t_ms,
                    format!(
                        "at t={} ms `{}` by {} left {} with retry_count {}: the 5th failure should have ended it in `exited`",
                        f.t_ms, f.statement, f.actor, f.task_id, after.retry_count
                    ),
                );
            }
        }
    }

    fn on_musician_write(&mut self, f: &SqlFact) {
        let sid = f.session_id.to_string();
        // A session the oracle has not heard launched (a twin, a test) is known from here on.
        self.sessions.entry(sid.clone()).or_insert_with(|| SessionTruth {
            task_id: f.task_id.to_string(),
            launched_ms: f.t_ms,
            ..SessionTruth::default()
        });
        self.check_nothing_after_terminal(f, &sid);
        if let Some(s) = self.sessions.get_mut(&sid) {
            s.last_write = Some((f.t_ms, f.statement.name().to_string()));
        }
        if let Some((_, _, kind)) = f.message {
            if let Some(s) = self.sessions.get_mut(&sid) {
                s.messages_since_state.push(kind.clone());
            }
            if kind == "review_request" || kind == "completion" {
                self.unbacked_review.remove(f.task_id);
            }
            return;
        }
        let (Some(before), Some(after)) = (f.before, f.after) else { return };
        // Inserts of new rows (the guard-block fallback) touch no existing task row.
        if f.rows_affected == 0 || f.statement == Stmt::InsertFallbackRow || f.statement.inserts_message() {
            return;
        }
        if f.statement == Stmt::ClaimTask {
            self.on_claim(f);
        } else if before.session_id != sid {
            self.report_foreign_write(f, &sid, before, after);
        }
        if let Some(at) = self.answered.remove(f.task_id) {
            self.measured.review_resume_ms.push(f.t_ms - at);
        }
        if before.state != after.state {
            self.on_musician_state_change(f, &sid, before, after);
        }
    }

    fn check_nothing_after_terminal(&mut self, f: &SqlFact, sid: &str) {
        let Some(terminal_ms) = self.sessions.get(sid).and_then(|s| s.terminal_ms) else { return };
        let who = self.describe(sid);
        self.violate(
            "nothing-after-terminal",
            sid.to_string(),
            f.t_ms,
            format!("at t={} ms {} ran `{}` after {who} had made its terminal write at t={terminal_ms} ms", f.t_ms, f.actor, f.statement),
        );
    }

    fn report_foreign_write(&mut self, f: &SqlFact, sid: &str, before: &RowSnapshot, after: &RowSnapshot) {
        let writer = self.describe(sid);
        let owner = self.describe(&before.session_id);
        self.violate(
            "owner-writes-only",
            f.task_id.to_string(),
            f.t_ms,
            format!(
                "at t={} ms {writer} wrote `{}` to {} (state {} → {}), but the row belonged to {owner}: the replaced session overwrote its successor's row, because no musician UPDATE checks session_id",
                f.t_ms, f.statement, f.task_id, before.state, after.state
            ),
        );
    }

    /// A musician's write that changed the row's state: the transition table, the message that
    /// must back a review request or a terminal write, and the terminal write itself.
    fn on_musician_state_change(&mut self, f: &SqlFact, sid: &str, before: &RowSnapshot, after: &RowSnapshot) {
        if !musician_transition_allowed(&before.state, &after.state, self.settings.implied_transitions) {
            self.violate(
                "allowed-transitions",
                format!("{}:{}->{}", f.task_id, before.state, after.state),
                f.t_ms,
                format!(
                    "at t={} ms {} moved {} from `{}` to `{}` with `{}`: 002 \"Valid State Transitions\" has no such musician transition",
                    f.t_ms, f.actor, f.task_id, before.state, after.state, f.statement
                ),
            );
        }
        if after.state == "needs_review" {
            let backed =
                self.sessions.get(sid).is_some_and(|s| s.messages_since_state.iter().any(|k| k == "review_request" || k == "completion"));
            if !backed {
                self.unbacked_review.insert(f.task_id.to_string(), (sid.to_string(), f.t_ms));
            }
        }
        if after.state == "complete" || after.state == "exited" {
            self.on_terminal_write(f, sid, after);
        }
        if let Some(s) = self.sessions.get_mut(sid) {
            s.messages_since_state.clear();
        }
    }

    fn on_terminal_write(&mut self, f: &SqlFact, sid: &str, after: &RowSnapshot) {
        let backed = self.sessions.get(sid).is_some_and(|s| !s.messages_since_state.is_empty());
        if !backed {
            self.violate(
                "message-before-state",
                format!("terminal:{}", f.task_id),
                f.t_ms,
                format!(
                    "at t={} ms {} set {} to `{}` with no final message before it (000 \"Terminal Write Atomicity\")",
                    f.t_ms, f.actor, f.task_id, after.state
                ),
            );
        }
        if let Some(s) = self.sessions.get_mut(sid) {
            s.terminal_ms = Some(f.t_ms);
        }
        if after.state == "exited" {
            self.exited_at.insert(f.task_id.to_string(), f.t_ms);
        }
    }

    fn on_claim(&mut self, f: &SqlFact) {
        let sid = &f.session_id;
        let before = f.before.cloned().unwrap_or_default();
        if let Some(at) = self.exited_at.remove(f.task_id) {
            self.measured.exit_to_claim_ms.push(f.t_ms - at);
        }
        if !musician_transition_allowed(&before.state, "working", self.settings.implied_transitions) {
            self.violate(
                "allowed-transitions",
                format!("{}:claim-from-{}", f.task_id, before.state),
                f.t_ms,
                format!(
                    "at t={} ms {} claimed {} while it was `{}`: the claim guard let a session take a task that is not claimable (002 \"Guard Clause Rules\" allows only watching, fix_proposed, exit_requested)",
                    f.t_ms, f.actor, f.task_id, before.state
                ),
            );
        }
        // A hung session is not working at this instant; if it comes back and writes, the
        // ownership rule catches it.
        let hung =
            |s: &SessionTruth| s.hung_from_ms.is_some_and(|from| from <= f.t_ms) && s.hung_until_ms.is_some_and(|until| f.t_ms < until);
        let rivals: Vec<String> = self
            .sessions
            .iter()
            .filter(|(id, s)| *id != sid && s.task_id == f.task_id && s.is_live() && s.last_write.is_some() && !hung(s))
            .map(|(id, _)| id.clone())
            .collect();
        for rival in rivals {
            let (claimer, other) = (self.describe(sid), self.describe(&rival));
            self.violate(
                "one-live-session-per-task",
                f.task_id.to_string(),
                f.t_ms,
                format!(
                    "at t={} ms {claimer} claimed {} while {other} was still alive: two live sessions now work one task",
                    f.t_ms, f.task_id
                ),
            );
        }
    }

    fn on_conductor_write(&mut self, f: &SqlFact) {
        let (Some(before), Some(after)) = (f.before, f.after) else { return };
        if f.task_id == crate::vocab::CONDUCTOR_TASK_ID || before.state == after.state || f.rows_affected == 0 {
            return;
        }
        if !conductor_transition_allowed(&before.state, &after.state, &self.settings) {
            let terminal = if before.state == "complete" || before.state == "exited" {
                " — a terminal state, which \"cannot transition back\" (002 \"Terminal States\")"
            } else {
                ""
            };
            self.violate(
                "allowed-transitions",
                format!("{}:conductor:{}->{}", f.task_id, before.state, after.state),
                f.t_ms,
                format!(
                    "at t={} ms the conductor moved {} from `{}`{terminal} to `{}` with `{}`",
                    f.t_ms, f.task_id, before.state, after.state, f.statement
                ),
            );
        }
        if matches!(after.state.as_str(), "review_approved" | "review_failed" | "fix_proposed") {
            self.answered.insert(f.task_id.to_string(), f.t_ms);
        }
    }

    fn on_poll(&mut self, f: &SqlFact) {
        for (task_id, state, seconds_stale) in f.polled {
            if state == "needs_review" {
                if let Some((sid, since)) = self.unbacked_review.get(task_id).cloned() {
                    let who = self.describe(&sid);
                    self.violate(
                        "message-before-state",
                        format!("review:{task_id}"),
                        f.t_ms,
                        format!(
                            "at t={} ms the conductor found {task_id} in `needs_review` with no review request: {who} set the state at t={since} ms before writing its message (004 \"Request Review\": message FIRST)",
                            f.t_ms
                        ),
                    );
                }
            }
            // Heartbeat age of the live, healthy owner, as the conductor sees it.
            let owner_healthy = self
                .sessions
                .values()
                .any(|s| s.task_id == *task_id && s.is_live() && !s.watcher_died && s.hung_from_ms.is_none() && s.last_write.is_some());
            if owner_healthy && matches!(state.as_str(), "working" | "needs_review" | "error") {
                self.measured.heartbeat_age_s.push(*seconds_stale as i64);
            }
        }
    }

    /// End-of-run checks: messages seen exactly once; budgets.
    pub fn finish(&mut self, end_ms: i64, budgets: &BudgetsSection) {
        let messages: Vec<(i64, MessageTruth)> = self.messages.iter().map(|(id, m)| (*id, m.clone())).collect();
        for (id, m) in messages {
            if m.kind == "instruction" || m.task_id == crate::vocab::CONDUCTOR_TASK_ID {
                continue;
            }
            // Due only if some session of the task was alive after it was sent.
            let due = self.sessions.values().any(|s| {
                s.task_id == m.task_id
                    && s.crashed_ms.is_none_or(|c| c > m.sent_ms)
                    && s.terminal_ms.is_none_or(|t| t > m.sent_ms)
                    && s.ended_ms.is_none_or(|e| e > m.sent_ms)
            });
            match m.handled_by.len() {
                0 if due => self.violate(
                    "messages-seen-once",
                    format!("{id}"),
                    m.sent_ms,
                    format!(
                        "conductor message {id} ({}) to {}, sent at t={} ms, was never seen by a session of the task",
                        m.kind, m.task_id, m.sent_ms
                    ),
                ),
                0 | 1 => {}
                n => self.violate(
                    "messages-seen-once",
                    format!("{id}"),
                    m.handled_by[1].1,
                    format!(
                        "conductor message {id} ({}) to {}, sent at t={} ms, was handled {n} times (at t={:?} ms)",
                        m.kind,
                        m.task_id,
                        m.sent_ms,
                        m.handled_by.iter().map(|(_, t)| *t).collect::<Vec<_>>()
                    ),
                ),
            }
        }
        let checks = [
            ("message_notice_ms", budgets.message_notice_ms_max, self.measured.message_notice_ms.clone()),
            ("review_resume_ms", budgets.review_resume_ms_max, self.measured.review_resume_ms.clone()),
            ("crash_detect_ms", budgets.crash_detect_ms_max, self.measured.crash_detect_ms.clone()),
            ("heartbeat_age_s", budgets.heartbeat_age_s_max, self.measured.heartbeat_age_s.clone()),
            ("exit_to_claim_ms", budgets.exit_to_claim_ms_max, self.measured.exit_to_claim_ms.clone()),
        ];
        for (name, budget, sample) in checks {
            let (Some(budget), Some((_, _, max))) = (budget, quantiles(&sample)) else { continue };
            if max > budget {
                self.violate(
                    "budget",
                    name.to_string(),
                    end_ms,
                    format!("{name} reached {max} against a budget of {budget} ({} measurements)", sample.len()),
                );
            }
        }
    }

    /// Liveness, judged by the caller from the database, joins the violations here.
    pub fn add_liveness(&mut self, t_ms: i64, explanation: String) {
        self.violate("liveness", String::new(), t_ms, explanation);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_id_has_one_sentence_in_order() {
        let ids: Vec<RuleId> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids, RuleId::ALL);
        assert!(RULES.iter().all(|r| !r.says.is_empty()));
    }
}
