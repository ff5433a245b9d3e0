//! The protocol points of a run and the faults explore places at them. A point is what a
//! scripted fault can name: the `nth` time a session ran a statement (`before:` / `after:`
//! it) — a task's session (`[[faults.crash]]`, `[[faults.hang]]`) or a conductor session
//! with its reviews (`[[faults.conductor_crash]]`). The base run's fault plan records them as
//! it counts them (`FaultPlan::record_points`), so every point listed here is one a fault can
//! hit, with the same numbering.
//!
//! The conductor gets crashes only: its one hang, `[[faults.conductor_down]]`, is a window of
//! simulated time, and a window starting at the instant of a point is not the same fault as
//! a hang at the point (other actors' events of that instant may come first or after), so it
//! is not placed rather than placed unfaithfully.

use std::collections::BTreeSet;

use super::hang_class::HangClass;
use crate::base::error::{Error, Result};
use crate::plan::faults::PointSeen;
pub use crate::vocab::When;
use crate::vocab::{ActorName, FaultKind, FaultName, PointFault, SessionPlace, Stmt};

/// Whose point: a task's session (its musician and watchers), or a conductor session (1 the
/// run's first, 2 the one a launcher starts after its crash, …) with its reviews: the
/// vocabulary's `Whose`, under the name `--sessions` gives it.
pub use crate::vocab::Whose as Target;

/// A protocol point: the `nth` time `target` ran `statement` in the base run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    pub target: Target,
    pub statement: Stmt,
    pub nth: u64,
    /// Statements of every actor the base run had asked to run before it: what a run
    /// started from a snapshot at the point would not run again.
    pub statements_before: u64,
}

/// The fault placed at a point: when, and what (a hang by its length class, resolved to a
/// length from the scenario when the run is made: `Job::point_fault`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A kind with no parameter (`FaultName::plain`): a crash, an I/O error.
    Plain(FaultKind, When),
    /// A task's session only (see the module's note on the conductor).
    Hang(When, HangClass),
}

impl Fault {
    pub fn when(self) -> When {
        match self {
            Fault::Plain(_, when) | Fault::Hang(when, _) => when,
        }
    }

    /// `crash`, `hang-short`, `io-error`, …: explore.csv's `fault` column (the kind's name
    /// with dashes).
    pub fn name(self) -> String {
        match self {
            Fault::Plain(kind, _) => kind.name().as_str().replace('_', "-"),
            Fault::Hang(_, class) => format!("hang-{}", class.name()),
        }
    }
}

/// One run of the exploration: a fault at a point.
#[derive(Clone, Copy, Debug)]
pub struct Job {
    /// The point's number (1-based, in the order the base run reached the points).
    pub number: usize,
    pub point: Point,
    pub fault: Fault,
}

impl Job {
    /// The scripted fault this run adds to the scenario; `hang_ms`: its hang class's length.
    pub fn point_fault(&self, hang_ms: impl Fn(HangClass) -> i64) -> PointFault {
        let kind = match self.fault {
            Fault::Plain(kind, _) => kind,
            Fault::Hang(_, class) => FaultKind::Hang { ms: hang_ms(class) },
        };
        let at = crate::vocab::Point { when: self.fault.when(), statement: self.point.statement };
        PointFault { whose: self.point.target, at, nth: self.point.nth, kind }
    }
}

/// `task-01.S1`, `conductor` or `conductor.S2` as a `--sessions` entry.
pub fn parse_session(text: &str) -> Result<Target> {
    match ActorName::parse(text.trim()) {
        Some(ActorName::Session(SessionPlace { task, session, twin: false })) => Ok(Target::Session { task, session }),
        Some(ActorName::Conductor(session)) => Ok(Target::Conductor { session }),
        Some(ActorName::Review(session, _)) => Err(Error::input(format!(
            "`{text}` is a review: its statements are its conductor session's points (name `{}`)",
            ActorName::Conductor(session)
        ))),
        Some(ActorName::Session(_)) => Err(Error::input(format!(
            "`{text}` is a double launch's twin: it shares its original's points (name the original, e.g. `task-01.S1`)"
        ))),
        _ => Err(Error::input(format!("`{text}` is no session: expected a name like `task-01.S1`, `conductor` or `conductor.S2`"))),
    }
}

/// The base run's points, each once, in the order it first reached them (explore.csv's point
/// numbers are their places here, from 1). A twin's points are its original's: a scripted
/// fault names the task and session, and strikes each process at its own nth run.
pub fn points(seen: &[PointSeen]) -> Vec<Point> {
    let mut listed = BTreeSet::new();
    let mut out = Vec::new();
    for p in seen {
        let target = p.owner.whose();
        if listed.insert((target, p.statement, p.nth)) {
            out.push(Point { target, statement: p.statement, nth: p.nth, statements_before: p.statements_before });
        }
    }
    out
}

/// The points to explore, with their numbers: those of the sessions in `sessions` and with
/// a number in `numbers` (every one when empty). Naming a session that did not run, or
/// numbers past the last point, is bad input.
pub fn select(points: &[Point], sessions: &[Target], numbers: &[u64]) -> Result<Vec<(usize, Point)>> {
    let ran: BTreeSet<Target> = points.iter().map(|p| p.target).collect();
    if let Some(missing) = sessions.iter().find(|t| !ran.contains(t)) {
        let names: Vec<String> = ran.iter().map(Target::name).collect();
        return Err(Error::input(format!(
            "--sessions {}: no such session ran in the base run (sessions that ran: {})",
            missing.name(),
            names.join(", ")
        )));
    }
    if let Some(past) = numbers.iter().find(|n| **n == 0 || **n as usize > points.len()) {
        return Err(Error::input(format!("--points: there is no point {past}; the base run has points 1 to {}", points.len())));
    }
    let chosen = |number: usize, p: &Point| {
        (sessions.is_empty() || sessions.contains(&p.target)) && (numbers.is_empty() || numbers.contains(&(number as u64)))
    };
    Ok(points.iter().enumerate().map(|(i, p)| (i + 1, *p)).filter(|(number, p)| chosen(*number, p)).collect())
}

/// Every run of the exploration, point by point: each kind of `kinds` in `FaultName::ALL`
/// order (a crash, then a hang of each class of `hangs`, then an I/O error), before and after
/// it; a conductor's point gets only the kinds that strike a conductor.
pub fn jobs(points: &[(usize, Point)], kinds: &[FaultName], hangs: &[HangClass]) -> Vec<Job> {
    let mut out = Vec::new();
    for (number, point) in points {
        let placed = FaultName::ALL.into_iter().filter(|n| kinds.contains(n) && (n.strikes_conductor() || !point.target.is_conductor()));
        let faults = placed.flat_map(|name| at_point(name, hangs));
        out.extend(faults.map(|fault| Job { number: *number, point: *point, fault }));
    }
    out
}

/// The faults of one kind at a point: before and after it (each hang class's in turn).
fn at_point(name: FaultName, hangs: &[HangClass]) -> Vec<Fault> {
    match name.plain() {
        Some(kind) => When::ALL.into_iter().map(|when| Fault::Plain(kind, when)).collect(),
        None => hangs.iter().flat_map(|c| When::ALL.map(|when| Fault::Hang(when, *c))).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::faults::PointOwner;

    fn seen(task: u64, session: u32, twin: bool, statement: Stmt, nth: u64, statements_before: u64) -> PointSeen {
        PointSeen { owner: PointOwner::Session(SessionPlace { task, session, twin }), statement, nth, statements_before }
    }

    fn conductor(session: u32, statement: Stmt, nth: u64, statements_before: u64) -> PointSeen {
        PointSeen { owner: PointOwner::Conductor(session), statement, nth, statements_before }
    }

    #[test]
    fn a_twins_points_are_its_originals_and_each_point_is_listed_once() {
        let log = [
            seen(1, 1, false, Stmt::ClaimTask, 1, 5),
            conductor(1, Stmt::PollTasks, 1, 6),
            seen(1, 1, true, Stmt::ClaimTask, 1, 7),
            seen(1, 1, true, Stmt::InsertFallbackRow, 1, 8),
            seen(2, 1, false, Stmt::ClaimTask, 1, 9),
            conductor(1, Stmt::PollTasks, 1, 10),
        ];
        let all = points(&log);
        let listed: Vec<(String, Stmt, u64)> = all.iter().map(|p| (p.target.name(), p.statement, p.statements_before)).collect();
        assert_eq!(
            listed,
            [
                ("task-01.S1".to_string(), Stmt::ClaimTask, 5),
                ("conductor".to_string(), Stmt::PollTasks, 6),
                ("task-01.S1".to_string(), Stmt::InsertFallbackRow, 8),
                ("task-02.S1".to_string(), Stmt::ClaimTask, 9)
            ]
        );
        let task_02 = select(&all, &[Target::Session { task: 2, session: 1 }], &[]).unwrap();
        assert_eq!(task_02.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [4], "numbered over every session");
        let conductor = select(&all, &[Target::Conductor { session: 1 }], &[]).unwrap();
        assert_eq!(conductor.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [2], "the conductor's points are numbered with them");
        assert_eq!(select(&all, &[], &[2, 3]).unwrap().len(), 2);
        let e = select(&all, &[Target::Session { task: 3, session: 1 }], &[]).unwrap_err().to_string();
        assert!(
            e.contains("--sessions task-03.S1: no such session ran in the base run (sessions that ran: task-01.S1, task-02.S1, conductor)"),
            "{e}"
        );
        let e = select(&all, &[Target::Conductor { session: 2 }], &[]).unwrap_err().to_string();
        assert!(e.contains("--sessions conductor.S2: no such session ran"), "{e}");
        let e = select(&all, &[], &[4, 5]).unwrap_err().to_string();
        assert!(e.contains("there is no point 5; the base run has points 1 to 4"), "{e}");
    }

    #[test]
    fn a_sessions_point_gets_crashes_and_hangs_before_and_after_and_the_conductors_crashes_only() {
        let log = [seen(1, 1, false, Stmt::ClaimTask, 1, 0), conductor(1, Stmt::PollTasks, 1, 1)];
        let jobs = jobs(&select(&points(&log), &[], &[]).unwrap(), &FaultName::ALL, &[HangClass::Short, HangClass::Long]);
        let placed: Vec<(usize, String, When)> = jobs.iter().map(|j| (j.number, j.fault.name(), j.fault.when())).collect();
        let at = |n: usize, fault: &str, when: When| (n, fault.to_string(), when);
        assert_eq!(
            placed,
            [
                at(1, "crash", When::Before),
                at(1, "crash", When::After),
                at(1, "hang-short", When::Before),
                at(1, "hang-short", When::After),
                at(1, "hang-long", When::Before),
                at(1, "hang-long", When::After),
                at(1, "io-error", When::Before),
                at(1, "io-error", When::After),
                at(2, "crash", When::Before),
                at(2, "crash", When::After),
            ]
        );
    }

    #[test]
    fn only_the_kinds_asked_for_are_placed_and_a_conductor_takes_none_it_cannot() {
        let log = [seen(1, 1, false, Stmt::ClaimTask, 1, 0), conductor(1, Stmt::PollTasks, 1, 1)];
        let chosen = select(&points(&log), &[], &[]).unwrap();
        let placed = |kinds: &[FaultName]| -> Vec<(usize, String)> {
            jobs(&chosen, kinds, &[HangClass::Long]).iter().map(|j| (j.number, j.fault.name())).collect()
        };
        let io = |n: usize| (n, "io-error".to_string());
        assert_eq!(placed(&[FaultName::IoError]), [io(1), io(1)], "before and after, not at the conductor's point");
        let hang = (1, "hang-long".to_string());
        assert_eq!(placed(&[FaultName::IoError, FaultName::Hang]), [hang.clone(), hang, io(1), io(1)], "in FaultName::ALL order");
    }

    #[test]
    fn sessions_and_conductor_sessions_are_named_as_actors() {
        assert_eq!(parse_session("task-03.S2").unwrap(), Target::Session { task: 3, session: 2 });
        assert_eq!(parse_session("conductor").unwrap(), Target::Conductor { session: 1 });
        assert_eq!(parse_session("conductor.S2").unwrap(), Target::Conductor { session: 2 });
        assert_eq!(Target::Conductor { session: 2 }.name(), "conductor.S2");
        assert!(parse_session("conductor.review-3").unwrap_err().to_string().contains("name `conductor`"), "a review");
        assert!(parse_session("task-01.S1b").unwrap_err().to_string().contains("twin"));
        assert!(parse_session("task-01").unwrap_err().to_string().contains("expected a name like `task-01.S1`"));
        assert!(parse_session("task-01.S1.bg-watcher-1").unwrap_err().to_string().contains("no session"));
    }
}
