//! Latency attribution: every timing measurement (sim/judging/oracle/meter.rs) split into its causes,
//! measured from the run's events. A measurement's window (a message sent to its reading, a
//! crash to its declaration, …) is cut at the instants the events give — a hang's start and
//! end, an injected jitter, a conductor review, a poll, a launch, a replaced session's write —
//! and each piece goes to the first cause that covers it, so the components always sum to the
//! measured value.
//!
//! The causes are the simulator's (docs/protocol.md §6): the watcher that noticed (000
//! "Background Watcher", "Pause Watcher"), the poll phase, the watcher-jitter fault, a hang,
//! the heartbeat thresholds (000 "Heartbeat Protocol"), the conductor busy in a review (C3) or
//! frozen, the launch delay, and interference by a replaced session (D11).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::vocab::{ActorName, Stmt, TaskState, WatcherKind, CONDUCTOR_TASK_ID};
use crate::world::event::{ActorEnd, Event, EventKind, Fact};

use super::sql_fact;

/// What a piece of a latency was spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cause {
    /// Waiting for the next poll of the watcher or conductor that noticed (its poll phase,
    /// with the round trips of its idle polls).
    PollWait,
    /// The watcher-jitter fault lengthening a watcher's sleep.
    Jitter,
    /// The session ran no watcher (between two watchers, or while it exits).
    NoWatcher,
    /// The measured session frozen by a hang fault (where the measurement counts it).
    Hang,
    /// A protocol threshold: the heartbeat growing stale (crash detection) or old enough to
    /// be refreshed (heartbeat age).
    Threshold,
    /// The conductor in a review (it does not poll meanwhile, C3).
    ConductorReview,
    /// The conductor frozen by a hang, or dead until relaunched.
    ConductorDown,
    /// The conductor's launch of a session to the session's start.
    LaunchDelay,
    /// After a replaced session wrote the task row (it hid or undid what was to be noticed,
    /// or its writes kept a lost session's heartbeat fresh).
    Interference,
    /// A conductor write refreshed a lost session's heartbeat (004 "Heartbeat Rule": every
    /// state change sets it).
    ConductorWrite,
    /// Statement round trips: a successor's start-up before its claim, the conductor's
    /// handling after its poll.
    Statements,
    /// The session's own steps after the notice, before it acts: the step it was in, its
    /// reads, and for an answer the rework and re-verification.
    Work,
    /// A successor's start-up, its start to its claim (000 Bootstrap 1-3), in a recovery.
    Bootstrap,
}

impl Cause {
    pub const ALL: [Cause; 13] = [
        Cause::PollWait,
        Cause::Jitter,
        Cause::NoWatcher,
        Cause::Hang,
        Cause::Threshold,
        Cause::ConductorReview,
        Cause::ConductorDown,
        Cause::LaunchDelay,
        Cause::Interference,
        Cause::ConductorWrite,
        Cause::Statements,
        Cause::Work,
        Cause::Bootstrap,
    ];

    /// The CSV column stem.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::PollWait => "poll_wait",
            Cause::Jitter => "jitter",
            Cause::NoWatcher => "no_watcher",
            Cause::Hang => "hang",
            Cause::Threshold => "threshold",
            Cause::ConductorReview => "conductor_review",
            Cause::ConductorDown => "conductor_down",
            Cause::LaunchDelay => "launch_delay",
            Cause::Interference => "interference",
            Cause::ConductorWrite => "conductor_write",
            Cause::Statements => "statements",
            Cause::Work => "work",
            Cause::Bootstrap => "bootstrap",
        }
    }

    /// In words, as explanations print it.
    pub fn words(self) -> &'static str {
        match self {
            Cause::PollWait => "poll wait",
            Cause::Jitter => "injected watcher jitter",
            Cause::NoWatcher => "no watcher running",
            Cause::Hang => "the session hung",
            Cause::Threshold => "heartbeat threshold",
            Cause::ConductorReview => "conductor in a review",
            Cause::ConductorDown => "conductor hung or down",
            Cause::LaunchDelay => "launch delay",
            Cause::Interference => "interference by a replaced session",
            Cause::ConductorWrite => "a conductor write refreshing the heartbeat",
            Cause::Statements => "statements",
            Cause::Work => "the session's own steps",
            Cause::Bootstrap => "successor bootstrap",
        }
    }

    /// Its place in `Cause::ALL` and in a decomposition's `components_ms`.
    pub fn index(self) -> usize {
        Cause::ALL.iter().position(|c| *c == self).expect("every cause is listed")
    }
}

/// A crash detected and handed over, awaiting the successor's claim.
#[derive(Clone, Debug)]
pub struct PendingRecovery {
    pub lost_session: String,
    pub lost_at_ms: i64,
    pub polled_at_ms: i64,
    pub seconds_stale: f64,
}

/// Who noticed what the measurement waited for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Noticer {
    BackgroundWatcher,
    PauseWatcher,
    /// The session itself, at one of its steps (no watcher noticed first).
    Session,
    ConductorPoll,
}

impl Noticer {
    pub fn as_str(self) -> &'static str {
        match self {
            Noticer::BackgroundWatcher => "background_watcher",
            Noticer::PauseWatcher => "pause_watcher",
            Noticer::Session => "session",
            Noticer::ConductorPoll => "conductor_poll",
        }
    }

    fn words(self) -> &'static str {
        match self {
            Noticer::BackgroundWatcher => "the background watcher",
            Noticer::PauseWatcher => "the pause watcher",
            Noticer::Session => "the session itself",
            Noticer::ConductorPoll => "the conductor's poll",
        }
    }
}

/// One measurement and its causes: `components_ms` (indexed as `Cause::ALL`) sum to `total_ms`.
#[derive(Clone, Debug, PartialEq)]
pub struct Decomposition {
    /// The measurement (`Measurements::named`).
    pub measurement: &'static str,
    pub task_id: String,
    /// The session measured: the reader, the answered or lost session, the successor.
    pub session_id: String,
    pub start_ms: i64,
    pub end_ms: i64,
    /// The measured value in ms (for `heartbeat_age_s`, the age in ms).
    pub total_ms: i64,
    pub noticed_by: Noticer,
    pub components_ms: [i64; Cause::ALL.len()],
    /// Time in the window the measurement leaves out (a hang during a message notice).
    pub excluded_ms: i64,
    /// The conductor's reviews inside the window: (task reviewed, ms of it in the window).
    pub reviews: Vec<(String, i64)>,
    /// A message notice only: the message reached the session's pause (docs/protocol.md C85),
    /// so its budget allows it to wait for the pause's answer (`Attribution::reached_pause`).
    pub reached_pause: bool,
}

impl Decomposition {
    pub fn component(&self, cause: Cause) -> i64 {
        self.components_ms[cause.index()]
    }

    /// The cause with the largest share (the first listed on a tie). The heartbeat threshold
    /// is the protocol's own wait, which its budget holds whole: another cause, if any, is
    /// what made the measurement long.
    pub fn dominant(&self) -> Cause {
        let mut best = None;
        for cause in Cause::ALL.into_iter().filter(|c| *c != Cause::Threshold && self.component(*c) > 0) {
            if best.is_none_or(|b| self.component(cause) > self.component(b)) {
                best = Some(cause);
            }
        }
        best.unwrap_or(Cause::Threshold)
    }

    /// "noticed by the pause watcher; dominant cause: injected watcher jitter 15.2 s (55 %);
    /// poll wait 10.0 s (37 %), statements 2.1 s (8 %)".
    pub fn explain(&self) -> String {
        let dominant = self.dominant();
        let mut shares: Vec<(Cause, i64)> = Cause::ALL.iter().map(|c| (*c, self.component(*c))).filter(|(_, ms)| *ms > 0).collect();
        shares.sort_by_key(|(cause, ms)| (*cause != dominant, std::cmp::Reverse(*ms), *cause));
        let part = |(cause, ms): &(Cause, i64)| {
            let mut text = format!("{} {} ({} %)", cause.words(), seconds(*ms), self.percent(*ms));
            if *cause == Cause::ConductorReview && !self.reviews.is_empty() {
                let of: Vec<String> = self.reviews.iter().map(|(task, ms)| format!("{task} {}", seconds(*ms))).collect();
                text.push_str(&format!(" [reviews of {}]", of.join(", ")));
            }
            text
        };
        let mut text = format!("noticed by {}", self.noticed_by.words());
        if let Some((first, rest)) = shares.split_first() {
            let beyond =
                if first.0 != Cause::Threshold && self.component(Cause::Threshold) > 0 { " (beyond the heartbeat threshold)" } else { "" };
            text.push_str(&format!("; dominant cause{beyond}: {}", part(first)));
            if !rest.is_empty() {
                text.push_str(&format!("; {}", rest.iter().map(part).collect::<Vec<_>>().join(", ")));
            }
        }
        if self.excluded_ms > 0 {
            text.push_str(&format!("; not counted: {} the session was hung", seconds(self.excluded_ms)));
        }
        text
    }

    /// `ms` as a whole percentage of the total (0 for an empty total).
    pub fn percent(&self, ms: i64) -> i64 {
        if self.total_ms <= 0 {
            return 0;
        }
        (ms * 100 + self.total_ms / 2) / self.total_ms
    }
}

fn seconds(ms: i64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// The thresholds the attribution needs from the scenario (the seeds' by default).
#[derive(Clone, Copy, Debug)]
pub struct Thresholds {
    /// 000 "Heartbeat Protocol": a heartbeat older than this is stale.
    pub staleness_ms: i64,
    /// 000 "Heartbeat Refresh (Both Modes)": a watcher refreshes a heartbeat older than this.
    pub refresh_ms: i64,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds { staleness_ms: 540_000, refresh_ms: 480_000 }
    }
}

type Spans = Vec<(i64, i64)>;

/// Spans kept in order of their start, so the ones meeting a window are found by bisection:
/// a day's run has thousands of jittered sleeps, and every heartbeat age cuts a window.
#[derive(Clone, Default)]
struct SpanList {
    spans: Spans,
    /// The longest span, so a window's bisection reaches every span that may overlap it.
    longest_ms: i64,
}

impl SpanList {
    fn push(&mut self, span: (i64, i64)) {
        // Spans come in nearly in order: the insertion point is found from the end.
        let at = self.spans.iter().rposition(|s| s.0 <= span.0).map_or(0, |i| i + 1);
        self.spans.insert(at, span);
        self.longest_ms = self.longest_ms.max(span.1.saturating_sub(span.0));
    }

    /// The spans meeting [a, b], clipped to it.
    fn within(&self, a: i64, b: i64) -> Spans {
        let lo = self.spans.partition_point(|s| s.0 < a.saturating_sub(self.longest_ms));
        let hi = self.spans.partition_point(|s| s.0 < b);
        clip(&self.spans[lo..hi.max(lo)], a, b)
    }
}

/// What the attribution keeps of the event stream: the instants it cuts windows at.
#[derive(Clone, Default)]
pub struct Attribution {
    thresholds: Thresholds,
    /// Per session: its hangs (from, until).
    hangs: BTreeMap<String, SpanList>,
    /// Per session: its watchers' jittered sleep ends (from, until).
    jitter: BTreeMap<String, SpanList>,
    /// Per session: when each of its watchers ran (first event, end).
    watcher_life: BTreeMap<String, SpanList>,
    /// Per session: its watchers running, since their first event.
    watchers_open: BTreeMap<String, BTreeMap<ActorName, i64>>,
    /// Per session: when one of its watchers left on what it saw (an exit, not a kill).
    notices: BTreeMap<String, Vec<(i64, Noticer)>>,
    /// Conductor sessions seen, and their hangs and deaths (until the next one starts).
    conductor_sessions: BTreeSet<String>,
    conductor_down: SpanList,
    conductor_dead_since: Option<i64>,
    /// The conductor's reviews: (from, until, tasks answered in it); the last may be open.
    reviews: Vec<(i64, i64, Vec<String>)>,
    review_open: Option<(i64, Vec<String>)>,
    /// The conductor's `poll_tasks` instants.
    polls: Vec<i64>,
    /// Per session: (the conductor's launch, the session's start).
    launches: BTreeMap<String, (i64, i64)>,
    /// Per task: state changes of the row by a session the row did not name (t, writer).
    foreign_writes: BTreeMap<String, Vec<(i64, Arc<str>)>>,
    /// Per task: every write of the row (t, writer session, by the conductor): each sets its
    /// heartbeat (004 "Heartbeat Rule").
    row_writes: BTreeMap<String, Vec<(i64, Arc<str>, bool)>>,
}

impl Attribution {
    pub fn new(thresholds: Thresholds) -> Attribution {
        Attribution { thresholds, ..Attribution::default() }
    }

    pub fn on_event(&mut self, event: &Event) {
        let (t_ms, session) = (event.t_ms, &*event.session);
        match &event.kind {
            EventKind::Truth(fact) => self.on_fact(t_ms, event, fact),
            EventKind::Ended(how) => self.on_end(t_ms, event, *how, session),
            EventKind::Sql(_) => self.on_sql(event),
            _ => {}
        }
    }

    fn on_fact(&mut self, t_ms: i64, event: &Event, fact: &Fact) {
        match fact {
            Fact::Hung { session_id, until_ms } => {
                self.hangs.entry(session_id.clone()).or_default().push((t_ms, *until_ms));
                if self.conductor_sessions.contains(session_id) {
                    self.conductor_down.push((t_ms, *until_ms));
                }
            }
            Fact::Crashed { session_id, .. } if self.conductor_sessions.contains(session_id) => {
                self.conductor_dead_since.get_or_insert(t_ms);
                self.review_open = None;
            }
            Fact::SleepJittered { session_id, sleep_ms, jitter_ms } => {
                let from = t_ms + sleep_ms;
                self.jitter.entry(session_id.clone()).or_default().push((from, from + jitter_ms));
            }
            Fact::Launched { at_ms, session_id, .. } => {
                self.launches.insert(session_id.clone(), (event.t_ms, *at_ms));
            }
            _ => {}
        }
    }

    fn on_end(&mut self, t_ms: i64, event: &Event, how: ActorEnd, session: &str) {
        let crate::world::event::Who::Actor(actor @ ActorName::Watcher(_, kind, _)) = event.who else { return };
        if let Some(since) = self.watchers_open.get_mut(session).and_then(|open| open.remove(&actor)) {
            self.watcher_life.entry(session.to_string()).or_default().push((since, t_ms));
        }
        // A watcher that returns has seen what it waits for (a message, a state change);
        // one killed by its session or a fault has not.
        if how == ActorEnd::Exit {
            let noticer = if kind == WatcherKind::Pause { Noticer::PauseWatcher } else { Noticer::BackgroundWatcher };
            self.notices.entry(session.to_string()).or_default().push((t_ms, noticer));
        }
    }

    fn on_sql(&mut self, event: &Event) {
        let Some(f) = sql_fact(event) else { return };
        if f.actor.is_watcher() {
            let open = match self.watchers_open.get_mut(f.session_id) {
                Some(open) => open,
                None => self.watchers_open.entry(f.session_id.to_string()).or_default(),
            };
            open.entry(f.actor).or_insert(f.t_ms);
        }
        if f.actor.is_conductor() {
            self.on_conductor_sql(&f, &event.session);
            return;
        }
        if f.failure.is_some() {
            return;
        }
        let Some((before, after)) = super::touched_row(&f) else { return };
        push_to(&mut self.row_writes, f.task_id, (f.t_ms, event.session.clone(), false));
        // Only a state change hides or undoes what a measurement waits for (an answer, an
        // exit); a replaced session's heartbeat changes no state.
        let foreign = !before.session_id.is_empty() && before.session_id != f.session_id && f.statement != Stmt::ClaimTask;
        if foreign && before.state != after.state {
            push_to(&mut self.foreign_writes, f.task_id, (f.t_ms, event.session.clone()));
        }
    }

    fn on_conductor_sql(&mut self, f: &super::SqlFact, session: &Arc<str>) {
        if !self.conductor_sessions.contains(f.session_id) {
            self.conductor_sessions.insert(f.session_id.to_string());
            if let Some(since) = self.conductor_dead_since.take() {
                self.conductor_down.push((since, f.t_ms));
            }
        }
        if f.failure.is_some() {
            return;
        }
        if f.task_id != CONDUCTOR_TASK_ID && super::touched_row(f).is_some() {
            push_to(&mut self.row_writes, f.task_id, (f.t_ms, session.clone(), true));
        }
        if f.statement == Stmt::PollTasks {
            self.polls.push(f.t_ms);
        }
        if let Some((_, task_id, _)) = f.message {
            if let Some((_, tasks)) = &mut self.review_open {
                tasks.push(task_id.clone());
            }
        }
        // 004 "Conductor States": `reviewing` on task-00 while a review runs, `watching` after.
        if f.statement == Stmt::ConductorSetState && f.task_id == CONDUCTOR_TASK_ID {
            match f.after.map(|row| row.state) {
                Some(TaskState::Reviewing) => {
                    self.review_open.get_or_insert((f.t_ms, Vec::new()));
                }
                Some(_) => {
                    if let Some((from, tasks)) = self.review_open.take() {
                        self.reviews.push((from, f.t_ms, tasks));
                    }
                }
                None => {}
            }
        }
    }

    /// `key`'s spans meeting [a, b], clipped to it.
    fn spans_of(map: &BTreeMap<String, SpanList>, key: &str, a: i64, b: i64) -> Spans {
        map.get(key).map_or_else(Vec::new, |list| list.within(a, b))
    }

    fn review_spans(&self) -> Spans {
        let mut spans: Spans = self.reviews.iter().map(|(from, until, _)| (*from, *until)).collect();
        if let Some((from, _)) = &self.review_open {
            spans.push((*from, i64::MAX));
        }
        spans
    }

    /// The conductor's reviews over the pieces attributed to them: each review's tasks with
    /// its ms there.
    fn reviews_in(&self, review_pieces: &[(i64, i64)]) -> Vec<(String, i64)> {
        let mut out: Vec<(String, i64)> = Vec::new();
        let open = self.review_open.as_ref().map(|(from, tasks)| (*from, i64::MAX, tasks));
        for (from, until, tasks) in self.reviews.iter().map(|(f, u, t)| (*f, *u, t)).chain(open) {
            let ms: i64 = review_pieces.iter().map(|(a, b)| ((*b).min(until) - (*a).max(from)).max(0)).sum();
            if ms > 0 {
                let task = if tasks.is_empty() { "an unanswered task".to_string() } else { tasks.join("+") };
                out.push((task, ms));
            }
        }
        out
    }

    /// Who first noticed for `session` in [a, b]: the first watcher to leave on what it saw.
    fn first_notice(&self, session: &str, a: i64, b: i64) -> Option<(i64, Noticer)> {
        let notices = self.notices.get(session)?;
        notices.get(notices.partition_point(|(t, _)| *t < a)).copied().filter(|(t, _)| *t <= b)
    }

    /// Who noticed for `session` in [a, b]: the last watcher to leave on what it saw, and when.
    fn notice(&self, session: &str, a: i64, b: i64) -> Option<(i64, Noticer)> {
        let notices = self.notices.get(session)?;
        let last = notices.partition_point(|(t, _)| *t <= b).checked_sub(1)?;
        Some(notices[last]).filter(|(t, _)| *t >= a)
    }

    /// When a session other than `except` first wrote the task row it did not own, in [a, b].
    fn interference_from(&self, task_id: &str, except: &[&str], a: i64, b: i64) -> Option<i64> {
        let writes = self.foreign_writes.get(task_id)?;
        let from = writes.partition_point(|(t, _)| *t < a);
        writes[from..].iter().take_while(|(t, _)| *t <= b).find(|(_, who)| !except.contains(&&**who)).map(|(t, _)| *t)
    }

    /// A pause watcher waits for a state: a replaced session's state change in [a, noticed]
    /// (over the conductor's answer, say) hides it until the notice. A background watcher reads
    /// messages by id, which no state change hides.
    fn hidden_from_pause_watcher(&self, task_id: &str, session: &str, noticer: Noticer, a: i64, noticed_ms: i64) -> Spans {
        if noticer != Noticer::PauseWatcher {
            return Vec::new();
        }
        self.interference_from(task_id, &[session], a, noticed_ms).map(|t| vec![(t, noticed_ms)]).unwrap_or_default()
    }

    /// The time in [a, b] when no watcher of `session` ran.
    fn no_watcher(&self, session: &str, a: i64, b: i64) -> Spans {
        let mut life = Self::spans_of(&self.watcher_life, session, a, b);
        life.extend(self.watchers_open.get(session).into_iter().flat_map(|open| open.values()).map(|since| (*since, i64::MAX)));
        complement(&life, a, b)
    }

    /// A conductor message (or its state) sent at `from` (or the session's start, if later),
    /// read by `session` at `read_ms`; the session's hangs are left out of the measurement.
    pub fn message_notice(&self, task_id: &str, session: &str, from: i64, read_ms: i64) -> Decomposition {
        let hangs = Self::spans_of(&self.hangs, session, from, read_ms);
        let (noticed_ms, noticer) = self.notice(session, from, read_ms).unwrap_or((from, Noticer::Session));
        let rest_before = if noticer == Noticer::Session { Cause::Work } else { Cause::PollWait };
        let interference = self.hidden_from_pause_watcher(task_id, session, noticer, from, noticed_ms);
        let mut layers = vec![(Cause::Hang, hangs)];
        if noticer != Noticer::Session {
            layers.push((Cause::Interference, interference));
            layers.push((Cause::NoWatcher, self.no_watcher(session, from, noticed_ms)));
            layers.push((Cause::Jitter, Self::spans_of(&self.jitter, session, from, noticed_ms)));
        }
        let d = self.decompose(
            "message_notice_ms",
            task_id,
            session,
            from,
            read_ms,
            noticer,
            &layers,
            &[(noticed_ms, rest_before), (i64::MAX, Cause::Work)],
        );
        // The measurement leaves a hang out (meter.rs): so does its decomposition.
        without_hangs(d)
    }

    /// Whether a message noticed by `noticer` reached the session's pause (docs/protocol.md
    /// C85): the pause watcher noticed it, and it was sent (or the session launched, `from`)
    /// after the session entered the pause at `paused_ms`, or less than one background
    /// watcher read (`window_ms`: a poll, its jitter, the query and the read) of the
    /// session's own time before it, its hangs left out. Sent earlier, the background watcher
    /// of a session that follows 000 would have returned it before the pause, and the message
    /// is owed the working session's notice.
    pub fn reached_pause(&self, session: &str, noticer: Noticer, from: i64, paused_ms: Option<i64>, window_ms: i64) -> bool {
        let Some(paused_ms) = paused_ms.filter(|_| noticer == Noticer::PauseWatcher) else { return false };
        if from >= paused_ms {
            return true;
        }
        let hung_ms: i64 = Self::spans_of(&self.hangs, session, from, paused_ms).iter().map(|(a, b)| b - a).sum();
        paused_ms - from - hung_ms <= window_ms
    }

    /// [at, last_beat] cut at the row writes after the loss, each piece going to the writer of
    /// the write that ended it: a replaced (or other) session, or the conductor.
    fn refreshed_after_loss(&self, task_id: &str, lost: &str, at_ms: i64, last_beat_ms: i64) -> (Spans, Spans) {
        let (mut by_others, mut by_conductor) = (Vec::new(), Vec::new());
        let mut from = at_ms;
        let writes = self.row_writes.get(task_id).map_or(&[][..], |w| &w[..]);
        let writes = &writes[writes.partition_point(|(t, _, _)| *t <= at_ms)..];
        for (t, _, conductor) in writes.iter().filter(|(t, writer, _)| *t > at_ms && *t <= last_beat_ms && &**writer != lost) {
            if *conductor { &mut by_conductor } else { &mut by_others }.push((from, *t));
            from = *t;
        }
        (by_others, by_conductor)
    }

    /// The conductor's answer at `answered_ms` to the answered session's next row write; the
    /// session's hangs are left out, as a message notice leaves them (issue 28: a hang is the
    /// fault's time, not the protocol's, and a budget can bound only the protocol's).
    pub fn review_resume(&self, task_id: &str, session: &str, answered_ms: i64, wrote_ms: i64) -> Decomposition {
        // The answer is noticed once; watchers that leave later, during the rework, notice
        // other things.
        let (noticed_ms, noticer) = self.first_notice(session, answered_ms, wrote_ms).unwrap_or((answered_ms, Noticer::Session));
        let interference = self.hidden_from_pause_watcher(task_id, session, noticer, answered_ms, noticed_ms);
        let layers = vec![
            (Cause::Hang, Self::spans_of(&self.hangs, session, answered_ms, wrote_ms)),
            (Cause::Interference, interference),
            (Cause::Jitter, Self::spans_of(&self.jitter, session, answered_ms, noticed_ms)),
        ];
        let d = self.decompose(
            "review_resume_ms",
            task_id,
            session,
            answered_ms,
            wrote_ms,
            noticer,
            &layers,
            &[(noticed_ms, Cause::PollWait), (i64::MAX, Cause::Work)],
        );
        without_hangs(d)
    }

    /// A crash (or a hang's start) at `at_ms` to the conductor declaring `session` stale at
    /// `declared_ms`, on its poll at `polled_at_ms` that read the heartbeat `seconds_stale` old.
    pub fn crash_detect(
        &self,
        task_id: &str,
        session: &str,
        at_ms: i64,
        declared_ms: i64,
        polled_at_ms: i64,
        seconds_stale: f64,
    ) -> Decomposition {
        let last_beat_ms = polled_at_ms - (seconds_stale * 1000.0).round() as i64;
        let stale_ms = last_beat_ms + self.thresholds.staleness_ms;
        // A heartbeat written after the loss was someone else's: a replaced session beating
        // the row kept it fresh.
        let (by_others, by_conductor) = self.refreshed_after_loss(task_id, session, at_ms, last_beat_ms);
        let layers = vec![
            (Cause::Interference, by_others),
            (Cause::ConductorWrite, by_conductor),
            (Cause::Threshold, vec![(at_ms.max(last_beat_ms), stale_ms)]),
            (Cause::ConductorDown, self.conductor_down.within(at_ms, declared_ms)),
            (Cause::ConductorReview, self.review_spans()),
        ];
        let rest = [(polled_at_ms, Cause::PollWait), (i64::MAX, Cause::Statements)];
        self.decompose("crash_detect_ms", task_id, session, at_ms, declared_ms, Noticer::ConductorPoll, &layers, &rest)
    }

    /// A task's exit at `exited_ms` to the claim by its successor `session` at `claimed_ms`;
    /// the successor's hangs are left out (see `review_resume`).
    pub fn exit_to_claim(&self, task_id: &str, session: &str, exited_ms: i64, claimed_ms: i64) -> Decomposition {
        let launch = self.launches.get(session).copied().filter(|(launch_ms, _)| *launch_ms >= exited_ms);
        let interference =
            self.interference_from(task_id, &[session], exited_ms, claimed_ms).map(|t| vec![(t, claimed_ms)]).unwrap_or_default();
        let mut layers =
            vec![(Cause::Hang, Self::spans_of(&self.hangs, session, exited_ms, claimed_ms)), (Cause::Interference, interference)];
        let rest = match launch {
            Some((launch_ms, start_ms)) => {
                layers.push((Cause::LaunchDelay, vec![(launch_ms, start_ms)]));
                layers.push((Cause::ConductorDown, self.conductor_down.within(exited_ms, launch_ms)));
                layers.push((Cause::ConductorReview, clip(&self.review_spans(), exited_ms, launch_ms)));
                // The conductor saw the exit at its last poll before the launch.
                let last = self.polls.partition_point(|t| *t <= launch_ms).checked_sub(1);
                let polled_ms = last.map(|i| self.polls[i]).filter(|t| *t >= exited_ms).unwrap_or(exited_ms);
                vec![(polled_ms, Cause::PollWait), (i64::MAX, Cause::Statements)]
            }
            // Launched before the exit (a twin, an earlier launch): only its start-up is left.
            None => vec![(i64::MAX, Cause::Statements)],
        };
        without_hangs(self.decompose("exit_to_claim_ms", task_id, session, exited_ms, claimed_ms, Noticer::ConductorPoll, &layers, &rest))
    }

    /// A session lost at `lost.lost_at_ms` (its crash, or the start of the hang it was handed
    /// over in) to the claim of its successor `session` at `claimed_ms`: crash detection
    /// (`crash_detect`'s causes up to the declaration), then the conductor's hand-over, the
    /// launch and the successor's start-up (000 Bootstrap 1-3).
    pub fn recovery(&self, task_id: &str, session: &str, lost: &PendingRecovery, claimed_ms: i64) -> Decomposition {
        let at_ms = lost.lost_at_ms;
        let last_beat_ms = lost.polled_at_ms - (lost.seconds_stale * 1000.0).round() as i64;
        let stale_ms = last_beat_ms + self.thresholds.staleness_ms;
        let (by_others, by_conductor) = self.refreshed_after_loss(task_id, &lost.lost_session, at_ms, last_beat_ms);
        let launch = self.launches.get(session).copied().filter(|(launch_ms, _)| *launch_ms >= at_ms);
        // After the successor's launch the conductor's reviews delay nothing of this task.
        let conductor_until = launch.map_or(claimed_ms, |(launch_ms, _)| launch_ms);
        let mut layers = vec![
            (Cause::Interference, by_others),
            (Cause::ConductorWrite, by_conductor),
            (Cause::Threshold, vec![(at_ms.max(last_beat_ms), stale_ms)]),
            (Cause::ConductorDown, self.conductor_down.within(at_ms, conductor_until)),
            (Cause::ConductorReview, clip(&self.review_spans(), at_ms, conductor_until)),
            (Cause::Hang, Self::spans_of(&self.hangs, session, at_ms, claimed_ms)),
        ];
        if let Some((launch_ms, start_ms)) = launch {
            layers.push((Cause::LaunchDelay, vec![(launch_ms, start_ms)]));
            layers.push((Cause::Bootstrap, vec![(start_ms, claimed_ms)]));
        }
        // Before the poll that read the stale heartbeat: its poll phase; after it, the
        // conductor's statements (the declaration, the hand-over, the launch).
        let rest = [(lost.polled_at_ms, Cause::PollWait), (i64::MAX, Cause::Statements)];
        self.decompose("recovery_ms", task_id, session, at_ms, claimed_ms, Noticer::ConductorPoll, &layers, &rest)
    }

    /// Whether a heartbeat age is worth its decomposition: one within the refresh threshold is
    /// the threshold's alone (the watcher refreshes only an older heartbeat), and a run reads
    /// one per live task at every conductor poll (millions in a fleet's day).
    pub fn explains_age(&self, age_ms: i64) -> bool {
        age_ms > self.thresholds.refresh_ms
    }

    /// The heartbeat age `age_ms` the conductor's poll at `polled_ms` read for `session`'s row.
    pub fn heartbeat_age(&self, task_id: &str, session: &str, polled_ms: i64, age_ms: i64) -> Decomposition {
        let beat_ms = polled_ms - age_ms;
        let layers = vec![
            (Cause::Threshold, vec![(beat_ms, beat_ms + self.thresholds.refresh_ms)]),
            (Cause::NoWatcher, self.no_watcher(session, beat_ms, polled_ms)),
            (Cause::Jitter, Self::spans_of(&self.jitter, session, beat_ms, polled_ms)),
        ];
        self.decompose(
            "heartbeat_age_s",
            task_id,
            session,
            beat_ms,
            polled_ms,
            Noticer::ConductorPoll,
            &layers,
            &[(i64::MAX, Cause::PollWait)],
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn decompose(
        &self,
        measurement: &'static str,
        task_id: &str,
        session: &str,
        a: i64,
        b: i64,
        noticed_by: Noticer,
        layers: &[(Cause, Spans)],
        rest: &[(i64, Cause)],
    ) -> Decomposition {
        let pieces = pieces(a, b, layers, rest);
        let mut components_ms = [0; Cause::ALL.len()];
        for (from, until, cause) in &pieces {
            components_ms[cause.index()] += until - from;
        }
        let in_review: Vec<(i64, i64)> =
            pieces.iter().filter(|(_, _, cause)| *cause == Cause::ConductorReview).map(|(from, until, _)| (*from, *until)).collect();
        Decomposition {
            measurement,
            task_id: task_id.to_string(),
            session_id: session.to_string(),
            start_ms: a,
            end_ms: b,
            total_ms: components_ms.iter().sum(),
            noticed_by,
            components_ms,
            excluded_ms: 0,
            reviews: self.reviews_in(&in_review),
            reached_pause: false,
        }
    }
}

/// A measurement less the time its session was frozen by a hang fault: the components left
/// still sum to the total, and the hang is named as excluded.
fn without_hangs(mut d: Decomposition) -> Decomposition {
    d.excluded_ms = std::mem::take(&mut d.components_ms[Cause::Hang.index()]);
    d.total_ms -= d.excluded_ms;
    d
}

/// Appends to `key`'s list, copying the key only the first time (a run writes rows often).
fn push_to<T>(map: &mut BTreeMap<String, Vec<T>>, key: &str, item: T) {
    match map.get_mut(key) {
        Some(list) => list.push(item),
        None => {
            map.insert(key.to_string(), vec![item]);
        }
    }
}

/// The spans clipped to [a, b] (empty ones dropped).
fn clip(spans: &[(i64, i64)], a: i64, b: i64) -> Spans {
    spans.iter().map(|(from, until)| ((*from).max(a), (*until).min(b))).filter(|(from, until)| from < until).collect()
}

/// [a, b] less the spans.
fn complement(spans: &[(i64, i64)], a: i64, b: i64) -> Spans {
    let mut covered = clip(spans, a, b);
    covered.sort_unstable();
    let mut out = Vec::new();
    let mut at = a;
    for (from, until) in covered {
        if from > at {
            out.push((at, from));
        }
        at = at.max(until);
    }
    if at < b {
        out.push((at, b));
    }
    out
}

/// Splits [a, b) among the causes: each instant goes to the first layer with a span covering
/// it, else to the `rest` cause of its position (the first entry whose end lies beyond it).
/// The components sum to b − a (0 for an empty window).
pub fn split(a: i64, b: i64, layers: &[(Cause, Spans)], rest: &[(i64, Cause)]) -> [i64; Cause::ALL.len()] {
    let mut out = [0; Cause::ALL.len()];
    for (from, until, cause) in pieces(a, b, layers, rest) {
        out[cause.index()] += until - from;
    }
    out
}

/// [a, b) cut where a layer's span or a `rest` entry begins or ends, each piece with its cause.
fn pieces(a: i64, b: i64, layers: &[(Cause, Spans)], rest: &[(i64, Cause)]) -> Vec<(i64, i64, Cause)> {
    if b <= a {
        return Vec::new();
    }
    let clipped: Vec<(Cause, Spans)> = layers.iter().map(|(cause, spans)| (*cause, clip(spans, a, b))).collect();
    let mut cuts: Vec<i64> = vec![a, b];
    for (_, spans) in &clipped {
        for (from, until) in spans {
            cuts.extend([*from, *until]);
        }
    }
    cuts.extend(rest.iter().map(|(until, _)| *until).filter(|t| *t > a && *t < b));
    cuts.sort_unstable();
    cuts.dedup();
    let cause_at = |from: i64| {
        let layer = clipped.iter().find(|(_, spans)| spans.iter().any(|(s, e)| *s <= from && from < *e)).map(|(cause, _)| *cause);
        layer.unwrap_or_else(|| rest.iter().find(|(end, _)| from < *end).or(rest.last()).map_or(Cause::PollWait, |(_, cause)| *cause))
    };
    cuts.windows(2).map(|piece| (piece[0], piece[1], cause_at(piece[0]))).collect()
}

/// `latency.csv`: one row per measurement, its window, who noticed, and its components in ms
/// (they sum to `total_ms`), for plots of where latency goes.
pub fn latency_csv(decompositions: &[Decomposition]) -> Result<Vec<u8>, String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> =
        ["measurement", "task_id", "session_id", "start_ms", "end_ms", "total_ms", "noticed_by"].iter().map(|s| s.to_string()).collect();
    header.extend(Cause::ALL.iter().map(|c| format!("{}_ms", c.as_str())));
    header.extend(["excluded_hang_ms".to_string(), "dominant".to_string(), "reviews".to_string()]);
    writer.write_record(&header).map_err(|e| e.to_string())?;
    for d in decompositions {
        let mut row = vec![
            d.measurement.to_string(),
            d.task_id.clone(),
            d.session_id.clone(),
            d.start_ms.to_string(),
            d.end_ms.to_string(),
            d.total_ms.to_string(),
            d.noticed_by.as_str().to_string(),
        ];
        row.extend(d.components_ms.iter().map(|ms| ms.to_string()));
        let reviews: Vec<String> = d.reviews.iter().map(|(task, ms)| format!("{task}:{ms}")).collect();
        row.extend([d.excluded_ms.to_string(), d.dominant().as_str().to_string(), reviews.join(";")]);
        writer.write_record(&row).map_err(|e| e.to_string())?;
    }
    writer.into_inner().map_err(|e| format!("latency.csv: {e}"))
}
