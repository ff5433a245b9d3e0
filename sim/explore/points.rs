//! The protocol points of a run and the faults explore places at them. A point is what a
//! scripted fault can name: the `nth` time a session ran a statement (`before:` / `after:`
//! it). The base run's fault plan records them as it counts them (`FaultPlan::record_points`),
//! so every point listed here is one a fault can hit, with the same numbering.

use std::collections::BTreeSet;

use super::hang_class::HangClass;
use crate::error::{Error, Result};
use crate::faults::PointSeen;
use crate::vocab::{ActorName, SessionPlace, Stmt};

/// Whose point. Only a task's musician session for now: a crash of the conductor is not yet
/// a scripted fault (it is being added on another branch); its points will be a
/// `Target::Conductor` here, listed from the conductor's statements, which the plan counts
/// already (`PointSeen::statements_before`) but does not record as points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    Session { task: u64, session: u32 },
}

impl Target {
    /// `task-01.S1`: the session's actor name.
    pub fn name(&self) -> String {
        match *self {
            Target::Session { task, session } => ActorName::Session(SessionPlace { task, session, twin: false }).to_string(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Before,
    After,
}

impl When {
    pub fn as_str(self) -> &'static str {
        match self {
            When::Before => "before",
            When::After => "after",
        }
    }
}

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

/// The fault placed at a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    Crash(When),
    /// A hang fires only before a statement (scenarios/README.md, `[[faults.hang]]`).
    Hang(HangClass),
}

impl Fault {
    pub fn when(self) -> When {
        match self {
            Fault::Crash(when) => when,
            Fault::Hang(_) => When::Before,
        }
    }

    /// `crash`, `hang-short`, …: explore.csv's `fault` column.
    pub fn name(self) -> String {
        match self {
            Fault::Crash(_) => "crash".to_string(),
            Fault::Hang(class) => format!("hang-{}", class.name()),
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

/// `task-01.S1` as a `--sessions` entry; the conductor is refused with the reason.
pub fn parse_session(text: &str) -> Result<Target> {
    match ActorName::parse(text.trim()) {
        Some(ActorName::Session(SessionPlace { task, session, twin: false })) => Ok(Target::Session { task, session }),
        Some(ActorName::Conductor(_) | ActorName::Review(..)) => Err(Error::input(
            "the conductor's points are not explored yet (a scripted `[[faults.conductor_crash]]` can name one; explore does not place them)",
        )),
        Some(ActorName::Session(_)) => Err(Error::input(format!(
            "`{text}` is a double launch's twin: it shares its original's points (name the original, e.g. `task-01.S1`)"
        ))),
        _ => Err(Error::input(format!("`{text}` is no session: expected a name like `task-01.S1`"))),
    }
}

/// The base run's points, each once, in the order it first reached them (explore.csv's point
/// numbers are their places here, from 1). A twin's points are its original's: a scripted
/// fault names the task and session, and strikes each process at its own nth run.
pub fn points(seen: &[PointSeen]) -> Vec<Point> {
    let mut listed = BTreeSet::new();
    let mut out = Vec::new();
    for p in seen {
        let target = Target::Session { task: p.place.task, session: p.place.session };
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

/// Every run of the exploration, point by point: a crash before and after it, then (with
/// `hangs`) a hang of each class before it.
pub fn jobs(points: &[(usize, Point)], hangs: &[HangClass]) -> Vec<Job> {
    let mut out = Vec::new();
    for (number, point) in points {
        let faults = [Fault::Crash(When::Before), Fault::Crash(When::After)].into_iter().chain(hangs.iter().map(|c| Fault::Hang(*c)));
        out.extend(faults.map(|fault| Job { number: *number, point: *point, fault }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(task: u64, session: u32, twin: bool, statement: Stmt, nth: u64, statements_before: u64) -> PointSeen {
        PointSeen { place: SessionPlace { task, session, twin }, statement, nth, statements_before }
    }

    #[test]
    fn a_twins_points_are_its_originals_and_each_point_is_listed_once() {
        let log = [
            seen(1, 1, false, Stmt::ClaimTask, 1, 5),
            seen(1, 1, true, Stmt::ClaimTask, 1, 6),
            seen(1, 1, true, Stmt::InsertFallbackRow, 1, 7),
            seen(2, 1, false, Stmt::ClaimTask, 1, 8),
        ];
        let all = points(&log);
        let listed: Vec<(String, Stmt, u64)> = all.iter().map(|p| (p.target.name(), p.statement, p.statements_before)).collect();
        assert_eq!(
            listed,
            [
                ("task-01.S1".to_string(), Stmt::ClaimTask, 5),
                ("task-01.S1".to_string(), Stmt::InsertFallbackRow, 7),
                ("task-02.S1".to_string(), Stmt::ClaimTask, 8)
            ]
        );
        let task_02 = select(&all, &[Target::Session { task: 2, session: 1 }], &[]).unwrap();
        assert_eq!(task_02.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [3], "numbered over every session");
        assert_eq!(select(&all, &[], &[2, 3]).unwrap().len(), 2);
        let e = select(&all, &[Target::Session { task: 3, session: 1 }], &[]).unwrap_err().to_string();
        assert!(
            e.contains("--sessions task-03.S1: no such session ran in the base run (sessions that ran: task-01.S1, task-02.S1)"),
            "{e}"
        );
        let e = select(&all, &[], &[3, 4]).unwrap_err().to_string();
        assert!(e.contains("there is no point 4; the base run has points 1 to 3"), "{e}");
        let jobs = jobs(&select(&all, &[], &[]).unwrap(), &[HangClass::Short]);
        assert_eq!(jobs.len(), 9);
        assert_eq!((jobs[3].number, jobs[3].fault.name(), jobs[3].fault.when()), (2, "crash".to_string(), When::Before));
    }

    #[test]
    fn sessions_are_named_as_actors_and_the_conductor_is_refused_with_the_reason() {
        assert_eq!(parse_session("task-03.S2").unwrap(), Target::Session { task: 3, session: 2 });
        assert!(parse_session("conductor").unwrap_err().to_string().contains("not explored yet"));
        assert!(parse_session("task-01.S1b").unwrap_err().to_string().contains("twin"));
        assert!(parse_session("task-01").unwrap_err().to_string().contains("expected a name like `task-01.S1`"));
        assert!(parse_session("task-01.S1.bg-watcher-1").unwrap_err().to_string().contains("no session"));
    }
}
