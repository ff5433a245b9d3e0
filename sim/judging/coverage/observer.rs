//! The coverage observer: a consumer of the run's one event stream, beside the trace writer
//! and the checker (sim/run/engine.rs). It reads the same typed events the checker reads — the
//! task row before and after every write, the facts of ground truth (launches, crashes, hangs,
//! ends) — and counts every task-row transition with the fault contexts it happened in, and
//! every write that changed no row. It judges nothing and changes no byte of a run.

use std::collections::{BTreeSet, HashMap};

use super::item::{Context, Item, Writer};
use super::Coverage;
use crate::judging::oracle::{sql_fact, touched_row, SqlFact};
use crate::vocab::{self, task_number, ActorName, NameHash, SessionPlace, CONDUCTOR_SESSION_ID, CONDUCTOR_TASK_ID};
use crate::world::event::{Event, EventKind, Fact, SqlResult, Who};

/// What the observer knows of one session.
#[derive(Clone, Debug)]
struct SessionSeen {
    place: SessionPlace,
    /// When it starts (a launch's `at_ms`), or its first event.
    launched_ms: i64,
    crashed_ms: Option<i64>,
    ended_ms: Option<i64>,
    /// Every hang: (from, until).
    hangs: Vec<(i64, i64)>,
}

impl SessionSeen {
    fn live_at(&self, t_ms: i64) -> bool {
        let gone = |at: Option<i64>| at.is_some_and(|at| at <= t_ms);
        self.launched_ms <= t_ms && !gone(self.crashed_ms) && !gone(self.ended_ms)
    }
}

/// The number of the task `task_id` names, when a place's `task_id()` can equal it: compared
/// as numbers, places are not formatted once per session and transition (issue 17).
fn task_of(task_id: &str) -> Option<u64> {
    task_number(task_id).filter(|n| vocab::task_id(*n) == task_id)
}

fn hung_at(hangs: &[(i64, i64)], t_ms: i64) -> bool {
    hangs.iter().any(|(from, until)| *from <= t_ms && t_ms < *until)
}

fn hung_before(hangs: &[(i64, i64)], t_ms: i64) -> bool {
    hangs.iter().any(|(from, _)| *from < t_ms)
}

#[derive(Clone, Default)]
pub struct CoverageObserver {
    coverage: Coverage,
    sessions: Sessions,
    conductor_hangs: Vec<(i64, i64)>,
    /// Actors whose last statement got SQLITE_BUSY.
    busy: BTreeSet<ActorName>,
}

/// The sessions seen, by id and by task. Every event looks its session up by id, hashed
/// (issue 17); a write's contexts read only the sessions of its task, which the index by
/// task finds without a pass over every session of the run (1 % of fleet-day, issue 17).
#[derive(Clone, Default)]
struct Sessions {
    index_by_id: HashMap<String, usize, NameHash>,
    seen: Vec<SessionSeen>,
    /// Indexes into `seen`, by `place.task`, in no order that matters (only read with `any`).
    by_task: HashMap<u64, Vec<usize>, NameHash>,
}

impl Sessions {
    fn contains(&self, id: &str) -> bool {
        self.index_by_id.contains_key(id)
    }

    fn index(&self, id: &str) -> Option<usize> {
        self.index_by_id.get(id).copied()
    }

    fn get_mut(&mut self, id: &str) -> Option<&mut SessionSeen> {
        self.index(id).map(|i| &mut self.seen[i])
    }

    /// Records `seen` as session `id`'s, replacing what was known of it (as a map's insert).
    fn insert(&mut self, id: &str, seen: SessionSeen) {
        let task = seen.place.task;
        let Some(i) = self.index(id) else {
            self.index_by_id.insert(id.to_string(), self.seen.len());
            self.by_task.entry(task).or_default().push(self.seen.len());
            self.seen.push(seen);
            return;
        };
        let old_task = std::mem::replace(&mut self.seen[i], seen).place.task;
        if old_task != task {
            self.by_task.get_mut(&old_task).expect("indexed at insert").retain(|j| *j != i);
            self.by_task.entry(task).or_default().push(i);
        }
    }

    /// The sessions of task `task` (none for `None`), with their indexes.
    fn of_task(&self, task: Option<u64>) -> impl Iterator<Item = (usize, &SessionSeen)> + Clone {
        let indexes = task.and_then(|t| self.by_task.get(&t)).map_or(&[][..], Vec::as_slice);
        indexes.iter().map(|i| (*i, &self.seen[*i]))
    }
}

impl CoverageObserver {
    /// Consumes one event of the run's stream.
    pub fn on_event(&mut self, event: &Event) {
        if let Who::Actor(actor) = event.who {
            self.know(actor, &event.session, event.t_ms);
        }
        match &event.kind {
            EventKind::Truth(fact) => self.on_fact(event.t_ms, fact),
            EventKind::Sql(sql) => {
                if let (SqlResult::Busy(_), Who::Actor(actor)) = (&sql.result, event.who) {
                    self.busy.insert(actor);
                    return;
                }
                if let Some(fact) = sql_fact(event) {
                    self.on_sql(&fact);
                }
            }
            EventKind::Note { what, .. } => {
                if let Some(item) = Item::note(what) {
                    self.coverage.add(item);
                }
            }
            _ => {}
        }
    }

    /// What the run exercised so far.
    pub fn coverage(&self) -> &Coverage {
        &self.coverage
    }

    pub fn into_coverage(self) -> Coverage {
        self.coverage
    }

    /// A session is known from its launch, or from its first event (a twin, a test).
    fn know(&mut self, actor: ActorName, session_id: &str, t_ms: i64) {
        let Some(place) = actor.place() else { return };
        if session_id.is_empty() || self.sessions.contains(session_id) {
            return;
        }
        let seen = SessionSeen { place, launched_ms: t_ms, crashed_ms: None, ended_ms: None, hangs: Vec::new() };
        self.sessions.insert(session_id, seen);
    }

    fn on_fact(&mut self, t_ms: i64, fact: &Fact) {
        match fact {
            Fact::Launched { at_ms, label, session_id, task_id } => {
                // The label is the session part of its actor name (`S2`, `S1b`).
                if let Some(place) = ActorName::parse(&format!("{task_id}.{label}")).and_then(|a| a.place()) {
                    let seen = SessionSeen { place, launched_ms: *at_ms, crashed_ms: None, ended_ms: None, hangs: Vec::new() };
                    self.sessions.insert(session_id, seen);
                }
            }
            Fact::Crashed { session_id, .. } => {
                if let Some(s) = self.sessions.get_mut(session_id) {
                    s.crashed_ms.get_or_insert(t_ms);
                }
            }
            Fact::Ended { session_id } => {
                if let Some(s) = self.sessions.get_mut(session_id) {
                    s.ended_ms.get_or_insert(t_ms);
                }
            }
            Fact::Hung { session_id, until_ms } if session_id == CONDUCTOR_SESSION_ID => self.conductor_hangs.push((t_ms, *until_ms)),
            Fact::Hung { session_id, until_ms } => {
                if let Some(s) = self.sessions.get_mut(session_id) {
                    s.hangs.push((t_ms, *until_ms));
                }
            }
            Fact::WatcherDied { .. }
            | Fact::WorkOver { .. }
            | Fact::MessageHandled { .. }
            | Fact::Answering { .. }
            | Fact::StaleDeclared { .. }
            | Fact::SleepJittered { .. }
            | Fact::BlindRetry { .. } => {}
        }
    }

    fn on_sql(&mut self, f: &SqlFact) {
        let after_busy = self.busy.remove(&f.actor);
        if f.readonly || f.failure.is_some() {
            return;
        }
        if f.rows_affected == 0 {
            self.coverage.add(Item::ZeroRows(f.statement));
        }
        let Some((before, after)) = touched_row(f) else { return };
        let (from, to) = (before.state, after.state);
        if from == to || f.task_id == CONDUCTOR_TASK_ID {
            return;
        }
        let writer = if f.actor.is_conductor() { Writer::Conductor } else { Writer::Musician };
        self.coverage.add(Item::Transition { writer, from, to, context: None });
        for context in self.contexts(f, after_busy) {
            self.coverage.add(Item::Transition { writer, from, to, context: Some(context) });
        }
    }

    /// The fault contexts a write at `f.t_ms` happened in.
    fn contexts(&self, f: &SqlFact, after_busy: bool) -> impl Iterator<Item = Context> {
        let t_ms = f.t_ms;
        let writer_index = self.sessions.index(f.session_id);
        let writer = writer_index.map(|i| &self.sessions.seen[i]);
        let of_task = self.sessions.of_task(task_of(f.task_id));
        let others = || of_task.clone().filter(|(i, _)| Some(*i) != writer_index).map(|(_, s)| s);
        let own_hangs = if f.actor.is_conductor() { &self.conductor_hangs[..] } else { writer.map_or(&[][..], |w| &w.hangs[..]) };
        let relaunched = match f.actor.place() {
            Some(place) => place.session >= 2,
            None => others().any(|s| s.place.session >= 2),
        };
        let conductor_hung = !f.actor.is_conductor() && hung_at(&self.conductor_hangs, t_ms);
        let holds = [
            (Context::AfterCrash, others().any(|s| s.crashed_ms.is_some_and(|c| c <= t_ms))),
            (Context::DuringHang, conductor_hung || others().any(|s| hung_at(&s.hangs, t_ms))),
            (Context::AfterHang, hung_before(own_hangs, t_ms)),
            (Context::AfterBusy, after_busy),
            (Context::Twin, of_task.clone().any(|(_, s)| s.place.twin && s.live_at(t_ms))),
            (Context::AfterRelaunch, relaunched),
        ];
        holds.into_iter().filter(|(_, holds)| *holds).map(|(context, _)| context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_found_by_id_and_by_task_after_every_insert() {
        let seen = |task, session| SessionSeen {
            place: SessionPlace { task, session, twin: false },
            launched_ms: 0,
            crashed_ms: None,
            ended_ms: None,
            hangs: Vec::new(),
        };
        let mut sessions = Sessions::default();
        sessions.insert("a", seen(3, 1));
        sessions.insert("b", seen(3, 2));
        sessions.insert("c", seen(4, 1));
        // A launch that names a known session anew replaces it, task included.
        sessions.insert("a", seen(4, 5));
        let of = |task| {
            let mut found: Vec<(u64, u32)> = sessions.of_task(Some(task)).map(|(_, s)| (s.place.task, s.place.session)).collect();
            found.sort();
            found
        };
        assert_eq!(of(3), [(3, 2)]);
        assert_eq!(of(4), [(4, 1), (4, 5)]);
        assert_eq!(sessions.of_task(None).count() + sessions.of_task(Some(9)).count(), 0);
        sessions.get_mut("b").expect("known").crashed_ms = Some(7);
        let b = sessions.index("b").expect("known");
        assert_eq!((sessions.seen[b].crashed_ms, sessions.contains("d")), (Some(7), false));
    }

    #[test]
    fn a_task_id_names_a_place_exactly_when_the_place_formats_to_it() {
        let place = |task| SessionPlace { task, session: 1, twin: false };
        for task_id in ["task-03", "task-3", "task-003", "task-+3", "task-12", "task-100", "conductor", ""] {
            for task in [3, 12, 100] {
                assert_eq!(task_of(task_id) == Some(place(task).task), place(task).task_id() == task_id, "{task_id} vs {task}");
            }
        }
    }
}
